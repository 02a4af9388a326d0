//! The TOML equivalent of oranfstab: same keys, checked by the same [`Builder`], so both
//! formats give the same [`NfsConfig`]. Spans from the TOML parser give the line numbers.

use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use super::build::Builder;
use super::types::{one_line, ConfigError, NfsConfig};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    server: Vec<Server>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Server {
    name: Spanned<String>,
    #[serde(default)]
    paths: Vec<Spanned<NetPathEntry>>,
    #[serde(default)]
    export: Vec<Spanned<ExportEntry>>,
    nfs_version: Option<Spanned<String>>,
    dontroute: Option<Spanned<bool>>,
    mnt_timeout: Option<Spanned<u64>>,
    security_default: Option<Spanned<String>>,
    management: Option<Spanned<String>>,
    community: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NetPathEntry {
    local: Option<Spanned<String>>,
    path: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExportEntry {
    export: Spanned<String>,
    mount: Spanned<String>,
    security: Option<Spanned<String>>,
}

/// Parses the TOML form; `file` names it in messages.
pub(super) fn parse(text: &str, file: &str) -> Result<NfsConfig, ConfigError> {
    let line_of = |span: Range<usize>| line_at(text, span.start);
    let parsed: File = toml::from_str(text).map_err(|e| ConfigError::Line {
        file: file.to_string(),
        line: e.span().map_or(1, line_of),
        // The parser's messages may span lines; ours are one line.
        reason: one_line(&e.message().trim().replace('\n', " ")),
    })?;

    let mut builder = Builder::new(file);
    for server in &parsed.server {
        let server_line = line_of(server.name.span());
        builder.server(server.name.get_ref(), server_line)?;
        for entry in &server.paths {
            let entry = entry.get_ref();
            if let Some(local) = &entry.local {
                builder.local(local.get_ref(), line_of(local.span()))?;
            }
            builder.path(entry.path.get_ref(), line_of(entry.path.span()))?;
        }
        for export in &server.export {
            let export = export.get_ref();
            builder.export(
                with_line(&export.export, text),
                with_line(&export.mount, text),
                export.security.as_ref().map(|s| with_line(s, text)),
            )?;
        }
        if let Some(version) = &server.nfs_version {
            builder.nfs_version(version.get_ref(), line_of(version.span()))?;
        }
        if let Some(dontroute) = server.dontroute.as_ref().filter(|d| *d.get_ref()) {
            builder.dontroute(line_of(dontroute.span()))?;
        }
        if let Some(timeout) = &server.mnt_timeout {
            builder.mnt_timeout(*timeout.get_ref(), line_of(timeout.span()))?;
        }
        if let Some(security) = &server.security_default {
            builder.security_default(security.get_ref(), line_of(security.span()))?;
        }
        for (keyword, value) in [
            ("management", &server.management),
            ("community", &server.community),
        ] {
            if let Some(value) = value {
                builder.ignored(keyword, line_of(value.span()))?;
            }
        }
    }
    builder.finish()
}

/// A string value and the line it is on.
fn with_line<'v>(value: &'v Spanned<String>, text: &str) -> (&'v str, usize) {
    (value.get_ref(), line_at(text, value.span().start))
}

/// 1-based line number of byte offset `at`.
fn line_at(text: &str, at: usize) -> usize {
    let end = at.min(text.len());
    let line = 1 + text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    // An error at the very end (after the last newline) belongs to the last line.
    line.min(text.lines().count().max(1))
}
