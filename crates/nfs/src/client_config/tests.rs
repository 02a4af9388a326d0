//! The precedence of a client's sources: the command line over the URL over an
//! oranfstab entry over the defaults, setting by setting.

use std::net::IpAddr;
use std::time::Duration;

use super::*;

fn url(params: &str) -> NfsUrl {
    NfsUrl::parse(&format!("nfs://10.0.1.2/vol/ora?{params}")).unwrap()
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// What an oranfstab entry gives: name, its first path's local address, a second path,
/// `dontroute`, `mnt_timeout`.
fn entry() -> Settings {
    Settings {
        server_name: Some("filer1".into()),
        local: Some(ip("10.0.1.1")),
        paths: Some(vec![PathSpec {
            local: Some(ip("10.0.2.1")),
            server: ip("10.0.2.2"),
        }]),
        dontroute: Some(true),
        mnt_timeout: Some(Duration::from_secs(600)),
        conns: Some(2),
        timeo: Some(Duration::from_secs(7)),
        ..Settings::default()
    }
}

#[test]
fn nothing_said_takes_the_defaults() {
    let c = ClientConfig::new(url(""));
    let d = ClientOptions::default();
    assert_eq!(c.conns, DEFAULT_CONNS);
    assert_eq!(c.max_transfer, MAX_TRANSFER);
    assert_eq!(
        c.client.conn.reply_batch,
        dbio_rpc::conn::DEFAULT_REPLY_BATCH
    );
    assert_eq!((c.client.uid, c.client.gid), (d.uid, d.gid));
    assert!(c.client.gids.is_empty());
    assert_eq!(c.server_name, "10.0.1.2");
    assert_eq!((c.local, c.paths.len()), (None, 0));
    assert_eq!(c.timeo, PATH_TIMEOUT);
    assert!(!c.sync);
    assert_eq!(
        c.layout_refresh,
        Some(Duration::from_secs(u64::from(LAYOUT_REFRESH_S)))
    );
    assert!(!c.client.conn.dontroute && !c.client.conn.reserved_port);
    assert_eq!(c.mnt_timeout, None);
    assert_eq!(c.client.conn.timeout, d.conn.timeout);
    assert_eq!(c.client.conn.connect_timeout, d.conn.connect_timeout);
    assert_eq!(c.client.conn.retries, d.conn.retries);
    assert_eq!(c.workers, 0);
}

#[test]
fn an_oranfstab_entry_is_over_the_defaults() {
    let c = ClientConfig::layered(url(""), Settings::default(), entry());
    assert_eq!(c.server_name, "filer1");
    assert_eq!(c.local, Some(ip("10.0.1.1")));
    assert_eq!(c.paths.len(), 1);
    assert_eq!(c.paths[0].label(), "10.0.2.1->10.0.2.2");
    assert!(c.client.conn.dontroute);
    assert_eq!(c.mnt_timeout, Some(Duration::from_secs(600)));
    assert_eq!(c.conns, 2);
    assert_eq!(c.timeo, Duration::from_secs(7));
    // What the entry does not say stays at the default.
    assert_eq!(c.max_transfer, MAX_TRANSFER);
    assert!(!c.sync);
}

#[test]
fn the_url_is_over_an_oranfstab_entry() {
    let c = ClientConfig::layered(
        url("conns=3&timeo=15&path=10.0.3.2&uid=1000&sync=1&layout_refresh=0"),
        Settings::default(),
        entry(),
    );
    assert_eq!(c.conns, 3);
    assert_eq!(c.timeo, Duration::from_millis(1500));
    assert_eq!(c.paths.len(), 1);
    assert_eq!(c.paths[0].label(), "10.0.3.2");
    assert_eq!(c.client.uid, 1000);
    assert!(c.sync);
    assert_eq!(c.layout_refresh, None);
    // What the URL does not say comes from the entry.
    assert_eq!(c.server_name, "filer1");
    assert_eq!(c.local, Some(ip("10.0.1.1")));
    assert_eq!(c.mnt_timeout, Some(Duration::from_secs(600)));
    // The URL's parameters are taken into the configuration, not left beside it.
    assert_eq!(c.url.settings, Settings::default());
}

#[test]
fn the_command_line_is_over_the_url() {
    let command_line = Settings {
        conns: Some(1),
        uid: Some(7),
        gid: Some(8),
        max_transfer: Some(65536),
        reply_batch: Some(1),
        timeout: Some(Duration::from_secs(3)),
        retries: Some(5),
        reserved_port: Some(true),
        ..Settings::default()
    };
    let c = ClientConfig::layered(
        url("conns=3&uid=1000&gid=50&timeo=15"),
        command_line,
        entry(),
    );
    assert_eq!(c.conns, 1);
    assert_eq!((c.client.uid, c.client.gid), (7, 8));
    assert_eq!(c.max_transfer, 65536);
    assert_eq!(c.client.conn.reply_batch, 1);
    assert_eq!(c.client.conn.timeout, Duration::from_secs(3));
    assert_eq!(c.client.conn.connect_timeout, Duration::from_secs(3));
    assert_eq!(c.client.conn.retries, 5);
    assert!(c.client.conn.reserved_port);
    // Not on the command line: the URL's, then the entry's.
    assert_eq!(c.timeo, Duration::from_millis(1500));
    assert_eq!(c.server_name, "filer1");
}

#[test]
fn each_layer_over_the_one_below_setting_by_setting() {
    // conns: every layer says; the highest one that says wins.
    let conns = |cli: Option<u32>, in_url: Option<u32>, tab: Option<u32>| {
        let u = match in_url {
            Some(n) => url(&format!("conns={n}")),
            None => url(""),
        };
        let cli = Settings {
            conns: cli,
            ..Settings::default()
        };
        let tab = Settings {
            conns: tab,
            ..Settings::default()
        };
        ClientConfig::layered(u, cli, tab).conns
    };
    assert_eq!(conns(Some(1), Some(2), Some(3)), 1);
    assert_eq!(conns(None, Some(2), Some(3)), 2);
    assert_eq!(conns(None, None, Some(3)), 3);
    assert_eq!(conns(None, None, None), DEFAULT_CONNS);
    assert_eq!(conns(Some(1), None, Some(3)), 1);

    // Paths: a layer's list replaces the one below whole.
    let cli = Settings {
        paths: Some(vec![PathSpec::new(ip("10.0.9.2"))]),
        ..Settings::default()
    };
    let c = ClientConfig::layered(url("path=10.0.3.2&path=10.0.4.2"), cli, entry());
    assert_eq!(c.paths, vec![PathSpec::new(ip("10.0.9.2"))]);
    let c = ClientConfig::layered(
        url("path=10.0.3.2&path=10.0.4.2"),
        Settings::default(),
        entry(),
    );
    assert_eq!(c.paths.len(), 2);

    // sync=0 in the URL is said, and beats an entry that says sync.
    let tab = Settings {
        sync: Some(true),
        ..Settings::default()
    };
    assert!(!ClientConfig::layered(url("sync=0"), Settings::default(), tab.clone()).sync);
    assert!(ClientConfig::layered(url(""), Settings::default(), tab).sync);
}
