//! The TOML configuration parser (and the format detection in front of it): never panics,
//! and what it accepts keeps the documented rules.
#![no_main]

use dbio_nfs::config::NfsConfig;
use libfuzzer_sys::fuzz_target;

#[path = "common/config_check.rs"]
mod check;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    check::parse_checked(&text, "dbio.toml", NfsConfig::parse_toml);
    // Format detection by content (a name without .toml) must not panic either.
    check::parse_checked(&text, "nfs.conf", NfsConfig::parse);
});
