//! Oracle's oranfstab syntax: `keyword: value` items, one or more per line.
//!
//! A value is the whitespace-separated word after `keyword:` (or glued to it, `path:10.0.0.1`),
//! taken as is whatever it contains, so IPv6 addresses with their colons need no quoting.

use super::build::Builder;
use super::types::{ConfigError, NfsConfig};

/// The keywords of the format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keyword {
    Server,
    Local,
    Path,
    Export,
    Mount,
    Security,
    SecurityDefault,
    NfsVersion,
    Dontroute,
    MntTimeout,
    Management,
    Community,
}

impl Keyword {
    fn from_name(name: &str) -> Option<Keyword> {
        let keyword = match name.to_ascii_lowercase().as_str() {
            "server" => Keyword::Server,
            "local" => Keyword::Local,
            "path" => Keyword::Path,
            "export" => Keyword::Export,
            "mount" => Keyword::Mount,
            "security" => Keyword::Security,
            "security_default" => Keyword::SecurityDefault,
            "nfs_version" => Keyword::NfsVersion,
            "dontroute" => Keyword::Dontroute,
            "mnt_timeout" => Keyword::MntTimeout,
            "management" => Keyword::Management,
            "community" => Keyword::Community,
            _ => return None,
        };
        Some(keyword)
    }

    fn name(self) -> &'static str {
        match self {
            Keyword::Server => "server",
            Keyword::Local => "local",
            Keyword::Path => "path",
            Keyword::Export => "export",
            Keyword::Mount => "mount",
            Keyword::Security => "security",
            Keyword::SecurityDefault => "security_default",
            Keyword::NfsVersion => "nfs_version",
            Keyword::Dontroute => "dontroute",
            Keyword::MntTimeout => "mnt_timeout",
            Keyword::Management => "management",
            Keyword::Community => "community",
        }
    }
}

/// One `keyword: value` (or the bare `dontroute`).
#[derive(Debug, Clone, Copy)]
struct Item<'a> {
    keyword: Keyword,
    value: &'a str,
}

/// Parses a whole oranfstab; `file` names it in messages.
pub(super) fn parse(text: &str, file: &str) -> Result<NfsConfig, ConfigError> {
    let mut builder = Builder::new(file);
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let content = raw.split_once('#').map_or(raw, |(before, _)| before);
        let items = split_items(content).map_err(|reason| builder.error(line, reason))?;
        apply_line(&mut builder, &items, line)?;
    }
    builder.finish()
}

/// Splits one line (comment removed) into its items.
fn split_items(content: &str) -> Result<Vec<Item<'_>>, String> {
    let mut items: Vec<Item<'_>> = Vec::new();
    let mut words = content.split_whitespace();
    while let Some(word) = words.next() {
        let (name, glued) = match word.split_once(':') {
            Some((name, rest)) => (name, Some(rest)),
            None => (word, None),
        };
        let Some(keyword) = Keyword::from_name(name) else {
            return Err(match (glued, items.last()) {
                (None, Some(prev)) if prev.keyword == Keyword::Dontroute => {
                    format!("dontroute takes no value (found '{word}')")
                }
                // A second word after a value, e.g. `path: 10.0.0.1 10.0.0.2`.
                (None, Some(prev)) => format!(
                    "unexpected '{word}' after {}: (one value per keyword)",
                    prev.keyword.name()
                ),
                _ => format!("unknown keyword '{name}'"),
            });
        };
        if keyword == Keyword::Dontroute {
            if glued.is_some_and(|rest| !rest.is_empty()) {
                return Err("dontroute takes no value".to_string());
            }
            items.push(Item { keyword, value: "" });
            continue;
        }
        let value = match glued {
            Some(rest) if !rest.is_empty() => rest,
            Some(_) => words
                .next()
                .ok_or_else(|| format!("{}: needs a value", keyword.name()))?,
            None => return Err(format!("{name} must be followed by ':' and a value")),
        };
        items.push(Item { keyword, value });
    }
    Ok(items)
}

/// Feeds one line's items to the builder, pairing `export:` with its `mount:` and `security:`.
fn apply_line(
    builder: &mut Builder<'_>,
    items: &[Item<'_>],
    line: usize,
) -> Result<(), ConfigError> {
    let mut i = 0;
    while i < items.len() {
        let Item { keyword, value } = items[i];
        i += 1;
        if keyword != Keyword::Server {
            builder.require_server(keyword.name(), line)?;
        }
        match keyword {
            Keyword::Server => builder.server(value, line)?,
            Keyword::Local => builder.local(value, line)?,
            Keyword::Path => builder.path(value, line)?,
            Keyword::Export => {
                let Some(mount) = items.get(i).filter(|m| m.keyword == Keyword::Mount) else {
                    return Err(builder.error(
                        line,
                        format!("export: {value} has no mount: on the same line"),
                    ));
                };
                i += 1;
                let security = items.get(i).filter(|s| s.keyword == Keyword::Security);
                if security.is_some() {
                    i += 1;
                }
                builder.export(
                    (value, line),
                    (mount.value, line),
                    security.map(|s| (s.value, line)),
                )?;
            }
            Keyword::Mount => {
                return Err(builder.error(line, "mount: without export: before it on the same line"))
            }
            Keyword::Security => {
                return Err(builder.error(
                    line,
                    "security: belongs after export: and mount: on their line \
                     (security_default: sets it for the whole server)",
                ))
            }
            Keyword::SecurityDefault => builder.security_default(value, line)?,
            Keyword::NfsVersion => builder.nfs_version(value, line)?,
            Keyword::Dontroute => builder.dontroute(line)?,
            Keyword::MntTimeout => {
                let seconds = value.parse::<u64>().map_err(|_| {
                    builder.error(
                        line,
                        format!("mnt_timeout: '{value}' is not a number of seconds"),
                    )
                })?;
                builder.mnt_timeout(seconds, line)?;
            }
            Keyword::Management | Keyword::Community => builder.ignored(keyword.name(), line)?,
        }
    }
    Ok(())
}
