#![allow(dead_code)] // each target uses part of it
//! Invariants every successfully parsed configuration keeps, and the shape of every error,
//! shared by the oranfstab and TOML targets.

use dbio_nfs::config::{ConfigError, NfsConfig, MAX_PATHS};
use std::path::Path;

/// What the parser promises about a configuration it accepted.
pub fn check_ok(config: &NfsConfig, text: &str) {
    for (i, server) in config.servers.iter().enumerate() {
        assert!(!server.paths.is_empty(), "server without a path accepted");
        assert!(server.paths.len() <= MAX_PATHS, "more than MAX_PATHS paths");
        for other in &config.servers[..i] {
            assert!(
                !other.name.eq_ignore_ascii_case(&server.name),
                "duplicate server name accepted"
            );
        }
        for export in &server.exports {
            assert!(export.mount.is_absolute(), "relative mount point accepted");
            // Every mount point resolves to an export with the same mount point (another
            // server cannot claim it: a mount point is used once).
            let m = config
                .resolve(&export.mount)
                .expect("a mount point resolves to itself");
            assert_eq!(m.export.mount, export.mount);
            assert!(m.relative.as_os_str().is_empty());
        }
    }
    let lines = text.lines().count().max(1);
    for w in &config.warnings {
        assert!(w.line >= 1 && w.line <= lines, "warning line out of range");
    }
}

/// Errors name the file and a line that exists, on one line of text.
pub fn check_err(err: &ConfigError, text: &str, file: &str) {
    let msg = err.to_string();
    assert!(msg.starts_with(file), "error does not name the file: {msg}");
    assert!(!msg.contains('\n'), "error spans lines: {msg}");
    if let ConfigError::Line { line, .. } = err {
        let lines = text.lines().count().max(1);
        assert!(
            *line >= 1 && *line <= lines + 1,
            "error line {line} of {lines}"
        );
    }
}

/// Parses `text` with `parse`, checks the result, and returns it.
pub fn parse_checked(
    text: &str,
    file: &str,
    parse: fn(&str, &str) -> Result<NfsConfig, ConfigError>,
) -> Option<NfsConfig> {
    match parse(text, file) {
        Ok(config) => {
            check_ok(&config, text);
            // Parsing is a pure function of the text.
            assert_eq!(parse(text, file).ok().as_ref(), Some(&config));
            Some(config)
        }
        Err(err) => {
            check_err(&err, text, file);
            None
        }
    }
}

/// A TOML basic string holding `s` exactly.
pub fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\u{:04X}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The TOML form of an accepted configuration, or `None` when TOML cannot say it (a
/// timeout beyond TOML's signed 64-bit integers).
pub fn to_toml(config: &NfsConfig) -> Option<String> {
    let mut t = String::new();
    for s in &config.servers {
        let secs = s.mnt_timeout.as_secs();
        if secs > i64::MAX as u64 || s.mnt_timeout.subsec_nanos() != 0 {
            return None;
        }
        t.push_str("[[server]]\n");
        t.push_str(&format!("name = {}\n", toml_string(&s.name)));
        t.push_str("paths = [");
        for (i, p) in s.paths.iter().enumerate() {
            if i > 0 {
                t.push_str(", ");
            }
            t.push('{');
            if let Some(local) = &p.local {
                t.push_str(&format!("local = {}, ", toml_string(local)));
            }
            t.push_str(&format!("path = {}}}", toml_string(&p.remote)));
        }
        t.push_str("]\n");
        let version = match s.nfs_version {
            dbio_nfs::url::NfsVersion::V3 => "nfsv3",
            dbio_nfs::url::NfsVersion::V41 => "nfsv4.1",
            dbio_nfs::url::NfsVersion::Pnfs => "pnfs",
        };
        t.push_str(&format!("nfs_version = \"{version}\"\n"));
        t.push_str(&format!("dontroute = {}\n", s.dontroute));
        t.push_str(&format!("mnt_timeout = {secs}\n"));
        t.push_str(&format!("security_default = \"{}\"\n", s.security_default));
        for e in &s.exports {
            t.push_str("[[server.export]]\n");
            t.push_str(&format!("export = {}\n", toml_string(&e.export)));
            let mount = path_str(&e.mount)?;
            t.push_str(&format!("mount = {}\n", toml_string(mount)));
            t.push_str(&format!("security = \"{}\"\n", e.security));
        }
    }
    Some(t)
}

fn path_str(p: &Path) -> Option<&str> {
    p.to_str()
}
