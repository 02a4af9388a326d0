use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;

/// An oranfstab in the style of Oracle's documentation: several servers, four paths in both
/// layouts, IPv6, an interface name, comments, odd case and indentation, ignored SNMP keys.
const FULL: &str = "\
# Direct NFS configuration for the production database
server: MyDataServer1
  local: 192.0.2.0
  path: 192.0.2.1
  local: 192.0.100.0 path: 192.0.100.1
  LOCAL: eth2
  PATH: 2001:db8::1
  path: filer1-p4.example.com   # no local address: the OS picks it
  export: /vol/oradata1 mount: /mnt/oradata1
  export: /vol/oradata2 mount: /mnt/oradata2/ security: sys
  nfs_version: nfsv3
  dontroute
  mnt_timeout: 300
  management: 192.0.2.250
  community: public

server: MyDataServer2
path: 198.51.100.7
Export: /vol/redo Mount: /mnt/redo
Nfs_Version: NFSv4.1
security_default: SYS

server:MyDataServer3
path:fe80::1%eth0
export: / mount: /mnt
nfs_version: pnfs
";

/// The same content as [`FULL`] in TOML.
const FULL_TOML: &str = r#"
# Direct NFS configuration for the production database
[[server]]
name = "MyDataServer1"
paths = [
  { local = "192.0.2.0", path = "192.0.2.1" },
  { local = "192.0.100.0", path = "192.0.100.1" },
  { local = "eth2", path = "2001:db8::1" },
  { path = "filer1-p4.example.com" },
]
nfs_version = "nfsv3"
dontroute = true
mnt_timeout = 300
management = "192.0.2.250"
community = "public"

[[server.export]]
export = "/vol/oradata1"
mount = "/mnt/oradata1"

[[server.export]]
export = "/vol/oradata2"
mount = "/mnt/oradata2/"
security = "sys"

[[server]]
name = "MyDataServer2"
paths = [{ path = "198.51.100.7" }]
export = [{ export = "/vol/redo", mount = "/mnt/redo" }]
nfs_version = "NFSv4.1"
security_default = "SYS"

[[server]]
name = "MyDataServer3"
paths = [{ path = "fe80::1%eth0" }]
export = [{ export = "/", mount = "/mnt" }]
nfs_version = "pnfs"
"#;

fn net(local: Option<&str>, remote: &str) -> NetPath {
    NetPath {
        local: local.map(str::to_string),
        remote: remote.to_string(),
    }
}

fn export(export: &str, mount: &str) -> ExportMount {
    ExportMount {
        export: export.to_string(),
        mount: PathBuf::from(mount),
        security: Security::Sys,
    }
}

fn expected_servers() -> Vec<ServerConfig> {
    vec![
        ServerConfig {
            name: "MyDataServer1".into(),
            paths: vec![
                net(Some("192.0.2.0"), "192.0.2.1"),
                net(Some("192.0.100.0"), "192.0.100.1"),
                net(Some("eth2"), "2001:db8::1"),
                net(None, "filer1-p4.example.com"),
            ],
            exports: vec![
                export("/vol/oradata1", "/mnt/oradata1"),
                export("/vol/oradata2", "/mnt/oradata2"),
            ],
            nfs_version: NfsVersion::V3,
            dontroute: true,
            mnt_timeout: Duration::from_secs(300),
            security_default: Security::Sys,
        },
        ServerConfig {
            name: "MyDataServer2".into(),
            paths: vec![net(None, "198.51.100.7")],
            exports: vec![export("/vol/redo", "/mnt/redo")],
            nfs_version: NfsVersion::V41,
            dontroute: false,
            mnt_timeout: DEFAULT_MNT_TIMEOUT,
            security_default: Security::Sys,
        },
        ServerConfig {
            name: "MyDataServer3".into(),
            paths: vec![net(None, "fe80::1%eth0")],
            exports: vec![export("/", "/mnt")],
            nfs_version: NfsVersion::Pnfs,
            dontroute: false,
            mnt_timeout: DEFAULT_MNT_TIMEOUT,
            security_default: Security::Sys,
        },
    ]
}

#[test]
fn full_oranfstab_parses() {
    let config = NfsConfig::parse(FULL, "oranfstab").unwrap();
    assert_eq!(config.servers, expected_servers());
    let warnings: Vec<String> = config.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].starts_with("oranfstab:14: management: accepted and ignored"));
    assert!(warnings[1].starts_with("oranfstab:15: community: accepted and ignored"));
    assert_eq!(
        config.servers[0].paths[0].local_ip(),
        Some([192, 0, 2, 0].into())
    );
    assert_eq!(config.servers[0].paths[3].remote_ip(), None);
    assert_eq!(
        config.server("mydataserver2").unwrap().name,
        "MyDataServer2"
    );
}

#[test]
fn toml_gives_the_same_config() {
    let config = NfsConfig::parse(FULL_TOML, "dbio.toml").unwrap();
    assert_eq!(config.servers, expected_servers());
    let lines: Vec<usize> = config.warnings.iter().map(|w| w.line).collect();
    assert_eq!(lines, vec![14, 15]);
}

#[test]
fn format_is_picked_by_extension_or_content() {
    // Content sniffing without the extension.
    let by_content = NfsConfig::parse(FULL_TOML, "nfs-config").unwrap();
    assert_eq!(by_content.servers, expected_servers());
    let inline = "name = \"x\"\n";
    let err = NfsConfig::parse(inline, "cfg").unwrap_err().to_string();
    assert!(err.starts_with("cfg:1: unknown field `name`"), "{err}");
    // A .toml name forces TOML even for oranfstab content.
    let err = NfsConfig::parse("server: a\npath: b\n", "x.toml").unwrap_err();
    assert!(err.to_string().starts_with("x.toml:1: "), "{err}");
}

#[test]
fn security_default_applies_to_exports_without_their_own() {
    let text = "server: s\npath: 10.0.0.1\nexport: /a mount: /a\nsecurity_default: sys\n";
    let config = NfsConfig::parse(text, "oranfstab").unwrap();
    assert_eq!(config.servers[0].exports[0].security, Security::Sys);
}

#[test]
fn kerberos_flavours_as_oracle_writes_them() {
    let text = "server: s\npath: 10.0.0.1\nexport: /a mount: /a security: krb5p\n\
                export: /b mount: /b\nsecurity_default: KRB5I\n";
    let config = NfsConfig::parse(text, "oranfstab").unwrap();
    assert_eq!(config.servers[0].exports[0].security, Security::Krb5p);
    assert_eq!(config.servers[0].exports[1].security, Security::Krb5i);
    assert_eq!(config.servers[0].security_default, Security::Krb5i);
}

#[test]
fn nfsv4_is_spoken_as_nfsv41_with_a_warning() {
    let text = "server: s\npath: 10.0.0.1\nexport: /a mount: /a\nnfs_version: NFSv4\n";
    let config = NfsConfig::parse(text, "oranfstab").unwrap();
    assert_eq!(config.servers[0].nfs_version, NfsVersion::V41);
    let warnings: Vec<String> = config.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        warnings,
        [
            "oranfstab:4: nfs_version: nfsv4 is spoken as NFSv4.1 (dbio's NFSv4 client uses \
          sessions, minor version 1)"
        ]
    );
    let v41 = NfsConfig::parse(&text.replace("NFSv4", "nfsv4.1"), "oranfstab").unwrap();
    assert_eq!(v41.servers[0].nfs_version, NfsVersion::V41);
    assert!(v41.warnings.is_empty());
}

#[test]
fn empty_file_has_no_servers() {
    let config = NfsConfig::parse("# nothing yet\n\n", "oranfstab").unwrap();
    assert!(config.servers.is_empty());
    assert!(config.warnings.is_empty());
}

#[test]
fn up_to_max_paths_are_accepted() {
    let mut text = String::from("server: s\n");
    for i in 0..MAX_PATHS {
        text.push_str(&format!("local: 10.0.{i}.2\npath: 10.0.{i}.1\n"));
    }
    let config = NfsConfig::parse(&text, "oranfstab").unwrap();
    assert_eq!(config.servers[0].paths.len(), MAX_PATHS);
    text.push_str("path: 10.1.0.1\n");
    let err = NfsConfig::parse(&text, "oranfstab")
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!(
            "oranfstab:{}: server 's' has more than 16 paths (the most dbio supports)",
            2 * MAX_PATHS + 2
        )
    );
}

/// Each bad file with the exact message it must give.
const BAD_ORANFSTAB: &[(&str, &str)] = &[
    ("# c\n\npath: 192.0.2.1\n", "oranfstab:3: path: without a preceding server: line"),
    ("server: s\npath: a\nfoo: bar\n", "oranfstab:3: unknown keyword 'foo'"),
    ("server: s\npath: a\nfoo\n", "oranfstab:3: unknown keyword 'foo'"),
    (
        "server: s\npath: a\nmnt_timeout: abc\n",
        "oranfstab:3: mnt_timeout: 'abc' is not a number of seconds",
    ),
    ("server: s\npath: a\nmnt_timeout: -5\n", "oranfstab:3: mnt_timeout: '-5' is not a number of seconds"),
    ("server: s\npath: a\nmnt_timeout: 0\n", "oranfstab:3: mnt_timeout: 0 must be at least 1 second"),
    ("server: s\nexport: /a mount: /b\n", "oranfstab:1: server 's' has no path"),
    (
        "server: s\npath: a\nserver: t\nnfs_version: nfsv3\n",
        "oranfstab:3: server 't' has no path",
    ),
    ("server: s\npath: a\nexport: /a\n", "oranfstab:3: export: /a has no mount: on the same line"),
    (
        "server: s\npath: a\nexport: /a\nmount: /b\n",
        "oranfstab:3: export: /a has no mount: on the same line",
    ),
    ("server: s\npath: a\nmount: /b\n", "oranfstab:3: mount: without export: before it on the same line"),
    (
        "server: s\npath: a\nserver: S\npath: b\n",
        "oranfstab:3: server 'S' is already defined at line 1",
    ),
    (
        "server: s\npath: a\nsecurity_default: none\n",
        "oranfstab:3: security_default: 'none' is not one of sys, krb5, krb5i, krb5p",
    ),
    (
        "server: s\npath: a\nexport: /a mount: /m\nsecurity: sys\n",
        "oranfstab:4: security: belongs after export: and mount: on their line \
         (security_default: sets it for the whole server)",
    ),
    (
        "server: s\npath: a\nnfs_version: nfsv5\n",
        "oranfstab:3: nfs_version: 'nfsv5' is not one of nfsv3, nfsv4, nfsv4.1, pnfs",
    ),
    (
        "server: s\npath: a\nnfs_version: nfsv3\nnfs_version: nfsv4\n",
        "oranfstab:4: nfs_version: given twice for server 's' (first at line 3)",
    ),
    ("server: s\npath: a\ndontroute\nDONTROUTE\n", "oranfstab:4: dontroute: given twice for server 's' (first at line 3)"),
    ("server: s\npath: a\ndontroute yes\n", "oranfstab:3: dontroute takes no value (found 'yes')"),
    ("server: s\npath: a\ndontroute:yes\n", "oranfstab:3: dontroute takes no value"),
    ("server: s\nlocal: 10.0.0.2\nexport: /a mount: /b\n", "oranfstab:2: local: 10.0.0.2 is not followed by its path:"),
    ("server: s\nlocal: 10.0.0.2\nlocal: 10.0.0.3\npath: a\n", "oranfstab:2: local: 10.0.0.2 is not followed by its path:"),
    ("server: s\npath: a\nlocal: 10.0.0.2\n", "oranfstab:3: local: 10.0.0.2 is not followed by its path:"),
    ("server: s\npath: a\nlocal: eth0\nserver: t\n", "oranfstab:3: local: eth0 is not followed by its path:"),
    ("server:\n", "oranfstab:1: server: needs a value"),
    ("server s\n", "oranfstab:1: server must be followed by ':' and a value"),
    (
        "server: s\npath: 10.0.0.1 10.0.0.2\n",
        "oranfstab:2: unexpected '10.0.0.2' after path: (one value per keyword)",
    ),
    (
        "server: s\npath: 192.0.2.1/24\n",
        "oranfstab:2: path: '192.0.2.1/24' is not an IP address, host name or interface name",
    ),
    (
        "server: s\npath: fe80:::1\n",
        "oranfstab:2: path: 'fe80:::1' is not an IP address, host name or interface name",
    ),
    (
        "server: s\nlocal: -eth0 path: a\n",
        "oranfstab:2: local: '-eth0' is not an IP address, host name or interface name",
    ),
    ("server: s\npath: a\nexport: vol1 mount: /b\n", "oranfstab:3: export: 'vol1' is not an absolute path"),
    ("server: s\npath: a\nexport: /vol1 mount: u02\n", "oranfstab:3: mount: 'u02' is not an absolute path"),
    (
        "server: s\npath: a\nexport: /v1 mount: /u02/\nserver: t\npath: b\nexport: /v2 mount: /u02/./\n",
        "oranfstab:6: mount: /u02 is already used by server 's' (line 3)",
    ),
    ("management: 10.0.0.9\n", "oranfstab:1: management: without a preceding server: line"),
];

#[test]
fn bad_oranfstab_lines_give_file_line_and_reason() {
    for (text, expected) in BAD_ORANFSTAB {
        match NfsConfig::parse(text, "oranfstab") {
            Ok(config) => panic!("{text:?} parsed: {config:?}"),
            Err(err) => assert_eq!(err.to_string(), *expected, "for {text:?}"),
        }
    }
}

#[test]
fn error_names_the_file_as_given() {
    let text = "server: s\npath: a\n\n\n\n\n\n\n\n\n\nmnt_timeout: abc\n";
    let err = NfsConfig::parse(text, "/etc/oranfstab").unwrap_err();
    assert_eq!(
        err.to_string(),
        "/etc/oranfstab:12: mnt_timeout: 'abc' is not a number of seconds"
    );
}

#[test]
fn values_quoted_in_errors_stay_on_one_line() {
    // A TOML multi-line literal string puts a line break inside the server name.
    let text = "[[server]]\nname = '''filer\na'''\npaths = [{ path = \"a\" }]\n";
    let err = NfsConfig::parse_toml(text, "c.toml").unwrap_err();
    assert_eq!(
        err.to_string(),
        "c.toml:2: server: 'filer\\na' must be one word"
    );
}

/// TOML mistakes, with the start of the message they must give.
const BAD_TOML: &[(&str, &str)] = &[
    (
        "[[server]]\nname = \"s\"\npaths = [{ path = \"a\" }]\nfoo = 1\n",
        "c.toml:4: unknown field `foo`",
    ),
    (
        "[[server]]\nname = \"s\"\npaths = [{ path = \"a\" }]\nmnt_timeout = \"abc\"\n",
        "c.toml:4: invalid type: string \"abc\", expected u64",
    ),
    (
        "[[server]]\nname = \"s\"\n",
        "c.toml:2: server 's' has no path",
    ),
    (
        "[[server]]\nname = \"s\"\npaths = [\n",
        "c.toml:3: invalid array",
    ),
    (
        "[[server]]\nname = \"s\"\npaths = [{ path = \"a\" }]\n\
         [[server]]\nname = \"S\"\npaths = [{ path = \"b\" }]\n",
        "c.toml:5: server 'S' is already defined at line 2",
    ),
    (
        "[[server]]\nname = \"s\"\npaths = [{ local = \"e 0\", path = \"b\" }]\n",
        "c.toml:3: local: 'e 0' is not an IP address, host name or interface name",
    ),
    (
        "[[server]]\nname = \"s\"\npaths = [{ path = \"b\" }]\nnfs_version = \"v3\"\n",
        "c.toml:4: nfs_version: 'v3' is not one of nfsv3, nfsv4, nfsv4.1, pnfs",
    ),
    (
        "[[server]]\npaths = [{ path = \"b\" }]\n",
        "c.toml:1: missing field `name`",
    ),
];

#[test]
fn bad_toml_gives_file_line_and_reason() {
    for (text, expected) in BAD_TOML {
        match NfsConfig::parse(text, "c.toml") {
            Ok(config) => panic!("{text:?} parsed: {config:?}"),
            Err(err) => {
                let err = err.to_string();
                assert!(err.starts_with(expected), "for {text:?}: got {err:?}");
                assert!(!err.contains('\n'), "{err:?}");
            }
        }
    }
}

fn resolve_config() -> NfsConfig {
    let text = "\
server: a
path: 10.0.0.1
export: /vol/data mount: /u02/oradata
export: /vol/root mount: /u02
server: b
path: 10.0.0.2
export: /redo/ mount: /u02/oradata/redo
";
    NfsConfig::parse(text, "oranfstab").unwrap()
}

/// Where a path should land: (server, export, relative path, path on the server).
type Landing = (&'static str, &'static str, &'static str, &'static str);

/// Each path and where it lands, or None when no mount point covers it.
const RESOLVE: &[(&str, Option<Landing>)] = &[
    (
        "/u02/oradata/dbio",
        Some(("a", "/vol/data", "dbio", "/vol/data/dbio")),
    ),
    (
        "/u02/oradata/dbio/f1.dbf",
        Some(("a", "/vol/data", "dbio/f1.dbf", "/vol/data/dbio/f1.dbf")),
    ),
    ("/u02/oradata", Some(("a", "/vol/data", "", "/vol/data"))),
    ("/u02/oradata/", Some(("a", "/vol/data", "", "/vol/data"))),
    (
        "/u02/oradata/redo/log1",
        Some(("b", "/redo/", "log1", "/redo/log1")),
    ),
    (
        "/u02/oradatax/f",
        Some(("a", "/vol/root", "oradatax/f", "/vol/root/oradatax/f")),
    ),
    (
        "/u02//oradata/./dbio",
        Some(("a", "/vol/data", "dbio", "/vol/data/dbio")),
    ),
    (
        "/u02/oradata/redo/../dbio",
        Some(("a", "/vol/data", "dbio", "/vol/data/dbio")),
    ),
    ("/u03/oradata", None),
    ("/u0", None),
    ("u02/oradata/dbio", None),
];

#[test]
fn longest_mount_prefix_wins() {
    let config = resolve_config();
    for (path, expected) in RESOLVE {
        let got = config.resolve(Path::new(path)).map(|m| {
            (
                m.server.name.clone(),
                m.export.export.clone(),
                m.relative.clone(),
                m.remote_path(),
            )
        });
        let expected = expected.map(|(s, e, r, remote)| {
            (
                s.to_string(),
                e.to_string(),
                PathBuf::from(r),
                remote.to_string(),
            )
        });
        assert_eq!(got, expected, "for {path}");
    }
}

#[test]
fn root_export_and_root_mount() {
    let text = "server: s\npath: a\nexport: / mount: /\n";
    let config = NfsConfig::parse(text, "oranfstab").unwrap();
    let m = config.resolve(Path::new("/x/y")).unwrap();
    assert_eq!(m.relative, PathBuf::from("x/y"));
    assert_eq!(m.remote_path(), "/x/y");
    let m = config.resolve(Path::new("/")).unwrap();
    assert_eq!(m.remote_path(), "/");
}

#[test]
fn search_order_explicit_then_candidates() {
    let dir = tempfile::tempdir().unwrap();
    let cwd_file = dir.path().join("oranfstab");
    let etc_file = dir.path().join("etc-oranfstab");
    let candidates = vec![cwd_file.clone(), etc_file.clone()];

    assert_eq!(locate(None, &candidates).unwrap(), None);
    assert!(NfsConfig::load(None, &candidates).unwrap().is_none());

    std::fs::write(&etc_file, "server: etc\npath: 10.0.0.1\n").unwrap();
    assert_eq!(locate(None, &candidates).unwrap(), Some(etc_file.clone()));

    std::fs::write(&cwd_file, "server: cwd\npath: 10.0.0.1\n").unwrap();
    assert_eq!(locate(None, &candidates).unwrap(), Some(cwd_file.clone()));
    let loaded = NfsConfig::load(None, &candidates).unwrap().unwrap();
    assert_eq!(loaded.servers[0].name, "cwd");

    let explicit = dir.path().join("mine.toml");
    std::fs::write(
        &explicit,
        "[[server]]\nname = \"mine\"\npaths = [{ path = \"h\" }]\n",
    )
    .unwrap();
    let loaded = NfsConfig::load(Some(&explicit), &candidates)
        .unwrap()
        .unwrap();
    assert_eq!(loaded.servers[0].name, "mine");

    // A missing explicit file is an error, never a silent fallback to the candidates.
    let missing = dir.path().join("missing");
    let err = locate(Some(&missing), &candidates).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("{}: ", missing.display())),
        "{err}"
    );
    assert!(matches!(err.as_str(), e if !e.contains('\n')));

    // A directory named like a candidate is skipped.
    std::fs::remove_file(&cwd_file).unwrap();
    std::fs::create_dir(&cwd_file).unwrap();
    assert_eq!(locate(None, &candidates).unwrap(), Some(etc_file));
}

#[test]
fn read_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("oranfstab");
    std::fs::write(&bad, "server: s\npath: a\nfoo: 1\n").unwrap();
    let err = NfsConfig::read(&bad).unwrap_err().to_string();
    assert_eq!(err, format!("{}:3: unknown keyword 'foo'", bad.display()));
    assert_eq!(
        default_candidates(),
        vec![
            PathBuf::from("./oranfstab"),
            PathBuf::from("/etc/oranfstab")
        ]
    );
}

#[test]
fn display_of_typed_values() {
    assert_eq!(Security::Sys.to_string(), "sys");
}

#[test]
fn module_doc_examples_parse() {
    let oranfstab = "\
# filer1: four paths, one of them without a local address
server: filer1
local: 192.0.2.10
path: 192.0.2.1
local: eth1      path: 198.51.100.1
local: 2001:db8::10
path: 2001:db8::1
path: filer1-p4.example.com
export: /vol/oradata1 mount: /u02/oradata
export: /vol/redo     mount: /u03/redo   security: sys
nfs_version: nfsv3
dontroute
mnt_timeout: 600
security_default: sys
";
    let config = NfsConfig::parse(oranfstab, "oranfstab").unwrap();
    assert_eq!(config.servers[0].paths.len(), 4);
    assert_eq!(config.servers[0].exports.len(), 2);
    let toml = r#"
[[server]]
name = "filer1"
paths = [{ local = "192.0.2.10", path = "192.0.2.1" }, { path = "192.0.2.2" }]
nfs_version = "nfsv3"
dontroute = true
mnt_timeout = 600
security_default = "sys"

[[server.export]]
export = "/vol/oradata1"
mount = "/u02/oradata"
security = "sys"
"#;
    let config = NfsConfig::parse(toml, "dbio.toml").unwrap();
    assert_eq!(config.servers[0].paths.len(), 2);
    assert!(config.servers[0].dontroute);
}
