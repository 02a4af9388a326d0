//! The oranfstab parser: never panics; what it accepts keeps the documented rules, and
//! its TOML equivalent parses to the same servers.
#![no_main]

use dbio_nfs::config::NfsConfig;
use libfuzzer_sys::fuzz_target;

#[path = "common/config_check.rs"]
mod check;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Some(config) = check::parse_checked(&text, "oranfstab", NfsConfig::parse_oranfstab) else {
        return;
    };
    if let Some(toml) = check::to_toml(&config) {
        let again = NfsConfig::parse_toml(&toml, "oranfstab.toml")
            .unwrap_or_else(|e| panic!("TOML form refused: {e}\n{toml}"));
        assert_eq!(again.servers, config.servers, "TOML form differs:\n{toml}");
    }
});
