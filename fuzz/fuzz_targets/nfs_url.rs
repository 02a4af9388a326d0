//! The nfs:// URL parser: never panics; an accepted URL has a host and a normalised
//! absolute path, and printing it gives a URL that parses to the same host and path.
#![no_main]

use dbio_nfs::NfsUrl;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let url = match NfsUrl::parse(text) {
        Ok(url) => url,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    assert!(!url.host.is_empty());
    assert!(url.path.starts_with('/'));
    assert!(url.path == "/" || !url.path.ends_with('/'));
    assert!(!url.path.contains("//"));
    for c in url.components() {
        assert!(c != "." && c != ".." && !c.is_empty());
    }
    if let Some(n) = url.settings.conns {
        assert!((1..=64).contains(&n));
    }
    assert_ne!(url.nfs_port, Some(0));
    assert_ne!(url.mount_port, Some(0));
    // Display writes the path unescaped: the round trip holds for plain paths.
    let plain = url
        .path
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/-_.".contains(&b));
    if plain {
        let again = NfsUrl::parse(&url.to_string())
            .unwrap_or_else(|e| panic!("printed URL {url} refused: {e}"));
        assert_eq!((&again.host, &again.path), (&url.host, &url.path));
    }
});
