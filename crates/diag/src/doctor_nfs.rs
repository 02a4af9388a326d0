//! `dbio doctor` on a kernel NFS mount: its options (as the kernel shows
//! them in /proc/self/mountinfo) against Oracle's documented Linux mount
//! options for data files, the nfs(5) man page and dbio's own advice, and
//! the sunrpc slot table. Every finding names its source.
//!
//! The sources:
//! - Oracle: My Oracle Support Doc ID 359515.1, "Mount Options for Oracle
//!   files for RAC databases and Clusterware when used with NFS on NAS
//!   devices" (Linux x86-64 data files: `rw,bg,hard,nointr,rsize=32768,
//!   wsize=32768,tcp,vers=3,timeo=600`, and `actimeo=0` for RAC), and the
//!   Oracle Database Installation Guide for Linux, "Configuring NFS Buffer
//!   Size Parameters for Oracle Database" (rsize and wsize at least 32768).
//!   Oracle checks the first three itself: a data file on a mount without
//!   `hard` or with smaller rsize/wsize fails to open (ORA-27054).
//! - nfs(5): `soft` may corrupt data silently; `timeo` defaults to 600
//!   tenths of a second over TCP; `noac` costs performance; `nconnect`.
//! - The kernel's Documentation/admin-guide/kernel-parameters.txt,
//!   `sunrpc.tcp_slot_table_entries` and its maximum: the RPC calls a
//!   connection carries at once.
//!
//! Oracle's 32768 is a floor; dbio's 1 MiB is advice (a multiblock read in
//! one call), so a size in between is an info line, not a warning.

use crate::doctor::{finding, Finding, Severity};

/// Oracle's note on NFS mount options for data files.
pub const ORACLE_NOTE: &str = "Oracle Doc ID 359515.1 (Mount Options for Oracle files for RAC databases and Clusterware when used with NFS on NAS devices)";
/// Oracle's installation guide on rsize and wsize.
pub const ORACLE_GUIDE: &str = "Oracle Database Installation Guide for Linux (Configuring NFS Buffer Size Parameters for Oracle Database)";
/// The NFS client's manual page.
pub const NFS_MAN: &str = "nfs(5)";
/// The kernel's documentation of the slot table.
pub const KERNEL_DOC: &str =
    "Linux Documentation/admin-guide/kernel-parameters.txt (sunrpc.tcp_slot_table_entries)";

/// Oracle's smallest rsize and wsize for data files.
pub const ORACLE_MIN_TRANSFER: u64 = 32768;
/// dbio's advice: a 1 MiB multiblock read in one call.
pub const ADVISED_TRANSFER: u64 = 1 << 20;
/// Oracle's `timeo` (tenths of a second), nfs(5)'s default over TCP.
pub const ORACLE_TIMEO: u64 = 600;
/// Fewest RPC slots per connection before a busy database queues.
pub const MIN_SLOTS: u64 = 128;

/// Whether the database is RAC, from its parameter file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cluster {
    /// No parameter file given.
    Unknown,
    /// `cluster_database` is not true.
    Single,
    /// `cluster_database=true`.
    Rac,
}

impl Cluster {
    /// From a parameter file's settings (name lower case, as
    /// [`crate::doctor::parse_init_ora`] gives them).
    pub fn of(params: &[(String, String)]) -> Cluster {
        let rac = params
            .iter()
            .rev()
            .find(|(n, _)| n == "cluster_database")
            .is_some_and(|(_, v)| v.eq_ignore_ascii_case("true"));
        if rac {
            Cluster::Rac
        } else {
            Cluster::Single
        }
    }
}

/// The mount options doctor reads, as the kernel shows them (defaults
/// filled in where the kernel omits them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelMountOptions {
    pub vers: String,
    pub proto: String,
    /// `soft` or `softerr` (the kernel shows `hard` otherwise).
    pub soft: Option<String>,
    pub timeo: Option<u64>,
    pub rsize: Option<u64>,
    pub wsize: Option<u64>,
    pub nconnect: u32,
    /// noac, actimeo=0 or acregmax=0: a file's attributes are never cached.
    pub no_attr_cache: bool,
    /// How the options say it (noac, actimeo=0, acregmax=0).
    pub no_attr_cache_by: String,
    /// The security flavour (`sec=`; the kernel shows `sys` when none was asked).
    pub sec: String,
}

/// Parses a comma-separated option list (mountinfo's per-mount and
/// superblock options, or mountstats' `opts:`).
pub fn parse_options(options: &str) -> KernelMountOptions {
    let get = |k: &str| {
        options
            .split(',')
            .rev()
            .find_map(|o| o.strip_prefix(k).and_then(|v| v.strip_prefix('=')))
    };
    let num = |k: &str| get(k).and_then(|v| v.parse::<u64>().ok());
    let has = |k: &str| options.split(',').any(|o| o == k);
    let soft = ["softerr", "soft"]
        .into_iter()
        .find(|k| has(k))
        .map(String::from);
    // The kernel shows actimeo=0 as acregmin=0,acregmax=0,acdirmin=0,acdirmax=0
    // and noac as noac (with the four zeros where it shows defaults).
    let by = if has("noac") {
        "noac"
    } else if num("actimeo") == Some(0) {
        "actimeo=0"
    } else if num("acregmax") == Some(0) {
        "acregmax=0"
    } else {
        ""
    };
    KernelMountOptions {
        vers: get("vers")
            .or_else(|| get("nfsvers"))
            .unwrap_or("")
            .to_string(),
        proto: get("proto").unwrap_or("tcp").to_string(),
        soft,
        timeo: num("timeo"),
        rsize: num("rsize"),
        wsize: num("wsize"),
        nconnect: get("nconnect").and_then(|v| v.parse().ok()).unwrap_or(1),
        no_attr_cache: !by.is_empty(),
        no_attr_cache_by: by.to_string(),
        sec: get("sec").unwrap_or("sys").to_string(),
    }
}

/// What a protected flavour costs, measured with dbio against AUTH_SYS on the same
/// export (BENCHMARKS.md, scripts/bench-krb5); `None` for flavours that protect nothing.
fn kerberos_cost(sec: &str) -> Option<&'static str> {
    match sec {
        "krb5i" => Some(KRB5I_COST),
        "krb5p" => Some(KRB5P_COST),
        _ => None,
    }
}

const KRB5I_COST: &str = "every call and reply is checksummed (RPCSEC_GSS integrity): measured with dbio against sec=sys on the same export, about 5x the client's CPU per I/O for 8 KiB reads and 14x for 1 MiB reads, with 0.6x the IOPS and 0.1x the MB/s (BENCHMARKS.md).";
const KRB5P_COST: &str = "every call and reply is encrypted (RPCSEC_GSS privacy): measured with dbio against sec=sys on the same export, about 13x the client's CPU per I/O for 8 KiB reads and 42x for 1 MiB reads, with 0.36x the IOPS and 0.03x the MB/s (BENCHMARKS.md).";

/// The checks of one mount's options, each with what it looked at.
pub const CHECKS: [(&str, &str); 8] = [
    ("nfs-nconnect", "the NFS mount uses several connections"),
    ("nfs-hard", "the NFS mount is hard"),
    ("nfs-proto", "the NFS mount is over TCP"),
    ("nfs-timeo", "the NFS mount's timeo is 600 or more"),
    (
        "nfs-vers",
        "the NFS mount is NFSv3, as Oracle's table lists",
    ),
    (
        "nfs-transfer-size",
        "the NFS mount's rsize and wsize are at least 32768 (Oracle), 1 MiB advised",
    ),
    (
        "nfs-attribute-cache",
        "the NFS mount's attribute cache suits the database (actimeo=0 only for RAC)",
    ),
    (
        "nfs-security",
        "the NFS mount's security flavour costs no CPU per I/O (sys or krb5)",
    ),
];

/// Kernel NFS mount options against Oracle's, nfs(5)'s and dbio's advice,
/// for a database that is `cluster` (RAC or not, or not known).
pub fn check_nfs_options(options: &str, cluster: Cluster) -> Vec<Finding> {
    let o = parse_options(options);
    let mut out = Vec::new();
    if o.nconnect <= 1 {
        out.push(finding(
            Severity::Warning,
            "nfs-nconnect",
            "the NFS mount uses one TCP connection (no nconnect)".into(),
            "one connection serialises every session's I/O on one socket and one CPU, which caps IOPS long before the server does (nfs(5): nconnect).",
            "mount with nconnect=4 to 16 (Linux 5.3 and later), or use Oracle's Direct NFS.",
        ));
    }
    if let Some(s) = &o.soft {
        out.push(finding(
            Severity::Error,
            "nfs-hard",
            format!("the NFS mount is {s}, not hard"),
            &format!("a soft mount gives up after its retransmissions and may corrupt data silently ({NFS_MAN}); Oracle requires hard for data files ({ORACLE_NOTE})."),
            "mount with hard (the default).",
        ));
    }
    if let Some(cost) = kerberos_cost(&o.sec) {
        out.push(finding(
            Severity::Info,
            "nfs-security",
            format!("the NFS mount is sec={}", o.sec),
            cost,
            "keep it where the data must be protected on the wire; measure the storage with dbio under the same flavour (sec= in the URL, scripts/bench-krb5 for the cost).",
        ));
    }
    if o.proto.starts_with("udp") {
        out.push(finding(
            Severity::Warning,
            "nfs-proto",
            format!("the NFS mount is over {}", o.proto),
            &format!("UDP loses and retransmits whole large requests under load; Oracle lists tcp for data files ({ORACLE_NOTE})."),
            "mount with proto=tcp (the default).",
        ));
    }
    if let Some(t) = o.timeo.filter(|t| *t < ORACLE_TIMEO) {
        out.push(finding(
            Severity::Warning,
            "nfs-timeo",
            format!("the NFS mount has timeo={t} ({:.1} s)", t as f64 / 10.0),
            &format!("a busy server's slow reply is then retransmitted, which adds load when it is already behind; Oracle lists timeo=600 ({ORACLE_NOTE}), nfs(5)'s default over TCP."),
            "mount with timeo=600 (the default over TCP).",
        ));
    }
    if !o.vers.is_empty() && o.vers != "3" {
        out.push(finding(
            Severity::Info,
            "nfs-vers",
            format!("the NFS mount is NFS vers={}", o.vers),
            &format!("Oracle's table of Linux mount options for data files lists vers=3 ({ORACLE_NOTE}); other versions are outside it."),
            "check the version against your Oracle release's notes, or mount with vers=3.",
        ));
    }
    for (k, v) in [("rsize", o.rsize), ("wsize", o.wsize)] {
        let Some(v) = v else { continue };
        if v < ORACLE_MIN_TRANSFER {
            out.push(finding(
                Severity::Warning,
                "nfs-transfer-size",
                format!("the NFS mount has {k}={v}, under Oracle's 32768"),
                &format!("Oracle requires rsize and wsize of at least 32768 for data files and refuses to open them otherwise (ORA-27054; {ORACLE_GUIDE})."),
                "mount with rsize=1048576,wsize=1048576 (at least 32768; the server may cap them).",
            ));
        } else if v < ADVISED_TRANSFER {
            out.push(finding(
                Severity::Info,
                "nfs-transfer-size",
                format!("the NFS mount has {k}={v}"),
                &format!("Oracle's floor is 32768 ({ORACLE_GUIDE}), but a 1 MiB multiblock or direct-path read then takes several NFS calls, each a round trip (dbio's advice)."),
                "mount with rsize=1048576,wsize=1048576 (the server may cap them).",
            ));
        }
    }
    match (cluster, o.no_attr_cache) {
        (Cluster::Rac, false) => out.push(finding(
            Severity::Warning,
            "nfs-attribute-cache",
            "the NFS mount caches attributes, and cluster_database=true".into(),
            &format!("instances on other nodes then see a file's size and times late; Oracle lists actimeo=0 for RAC data files on Linux ({ORACLE_NOTE})."),
            "mount the data files with actimeo=0 on every RAC node.",
        )),
        (Cluster::Single, true) => out.push(finding(
            Severity::Warning,
            "nfs-attribute-cache",
            format!("the NFS mount caches no attributes ({}) for a single instance (cluster_database is not true)", o.no_attr_cache_by),
            &format!("every access may then cost a GETATTR round trip, and noac also makes writes synchronous ({NFS_MAN}); Oracle lists actimeo=0 for RAC only ({ORACLE_NOTE})."),
            "mount without noac/actimeo=0 (the defaults cache attributes).",
        )),
        (Cluster::Unknown, true) => out.push(finding(
            Severity::Info,
            "nfs-attribute-cache",
            format!("the NFS mount caches no attributes ({})", o.no_attr_cache_by),
            &format!("every access may then cost a GETATTR round trip ({NFS_MAN}); Oracle lists actimeo=0 for RAC data files only ({ORACLE_NOTE})."),
            "keep actimeo=0/noac only for RAC; --init-ora tells doctor whether cluster_database is true.",
        )),
        _ => {}
    }
    out
}

/// `sunrpc.tcp_max_slot_table_entries` (None: not readable, e.g. sunrpc not
/// loaded): the RPC calls a connection may carry at once.
pub fn check_sunrpc_slots(slots: Option<u64>) -> Vec<Finding> {
    match slots {
        Some(n) if n < MIN_SLOTS => vec![finding(
            Severity::Warning,
            "sunrpc-slots",
            format!("sunrpc.tcp_max_slot_table_entries is {n}"),
            &format!("an NFS connection carries at most that many calls at once, so a busy database queues in the client ({KERNEL_DOC})."),
            "sysctl -w sunrpc.tcp_max_slot_table_entries=128 (or more), and persist it in /etc/sysctl.d.",
        )],
        _ => Vec::new(),
    }
}

/// What the slot check looked at, for the list of checks that ran.
pub fn slots_looked_at(slots: Option<u64>) -> String {
    match slots {
        Some(n) => format!("sunrpc.tcp_max_slot_table_entries is {n}, at least {MIN_SLOTS}"),
        None => "sunrpc.tcp_max_slot_table_entries is not readable here (/proc/sys/sunrpc)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checks(f: &[Finding]) -> Vec<(&str, Severity)> {
        f.iter().map(|f| (f.check.as_str(), f.severity)).collect()
    }

    // As Debian's 6.1 kernel shows them in /proc/self/mountinfo and
    // mountstats (the lab's mounts).
    const GOOD: &str = "rw,relatime,vers=3,rsize=1048576,wsize=1048576,namlen=255,hard,nolock,proto=tcp,nconnect=4,port=2049,timeo=600,retrans=2,sec=sys,mountaddr=127.0.0.3,mountvers=3,mountport=20048,mountproto=tcp,local_lock=all,addr=127.0.0.3";
    const STATS_K1: &str = "rw,vers=3,rsize=1048576,wsize=1048576,namlen=255,acregmin=3,acregmax=60,acdirmin=30,acdirmax=60,hard,nolock,proto=tcp,nconnect=1,port=2049,timeo=600,retrans=2,sec=sys,mountaddr=127.0.0.2,mountvers=3,mountport=20048,mountproto=tcp,local_lock=all";

    #[test]
    fn a_good_mount_passes_for_a_single_instance_and_unknown() {
        assert!(check_nfs_options(GOOD, Cluster::Single).is_empty());
        assert!(check_nfs_options(GOOD, Cluster::Unknown).is_empty());
        // RAC wants actimeo=0.
        assert_eq!(
            checks(&check_nfs_options(GOOD, Cluster::Rac)),
            [("nfs-attribute-cache", Severity::Warning)]
        );
        let rac = GOOD.replace("hard", "acregmin=0,acregmax=0,acdirmin=0,acdirmax=0,hard");
        assert!(check_nfs_options(&rac, Cluster::Rac).is_empty());
        assert_eq!(
            checks(&check_nfs_options(STATS_K1, Cluster::Single)),
            [("nfs-nconnect", Severity::Warning)]
        );
    }

    #[test]
    fn kerberos_mounts_are_read_and_their_cost_said() {
        assert_eq!(parse_options(GOOD).sec, "sys");
        assert!(
            check_nfs_options(&GOOD.replace("sec=sys", "sec=krb5"), Cluster::Single).is_empty()
        );
        for sec in ["krb5i", "krb5p"] {
            let f = check_nfs_options(
                &GOOD.replace("sec=sys", &format!("sec={sec}")),
                Cluster::Single,
            );
            assert_eq!(checks(&f), [("nfs-security", Severity::Info)], "{sec}");
            assert_eq!(f[0].found, format!("the NFS mount is sec={sec}"));
            assert!(f[0].why.contains("per I/O"), "{}", f[0].why);
        }
    }

    #[test]
    fn a_bad_mount_warns_for_each_option_naming_its_source() {
        let bad = "rw,relatime,vers=3,rsize=16384,wsize=65536,namlen=255,acregmin=0,acregmax=0,acdirmin=0,acdirmax=0,soft,nolock,proto=udp,timeo=100,retrans=2";
        let f = check_nfs_options(bad, Cluster::Single);
        assert_eq!(
            checks(&f),
            [
                ("nfs-nconnect", Severity::Warning),
                ("nfs-hard", Severity::Error),
                ("nfs-proto", Severity::Warning),
                ("nfs-timeo", Severity::Warning),
                ("nfs-transfer-size", Severity::Warning),
                ("nfs-transfer-size", Severity::Info),
                ("nfs-attribute-cache", Severity::Warning),
            ]
        );
        for x in &f {
            assert!(
                x.why.contains("Oracle") || x.why.contains("nfs(5)") || x.why.contains("dbio"),
                "{x:?}"
            );
        }
        assert!(f[1].why.contains("359515.1") && f[1].why.contains(NFS_MAN));
        assert!(f[3].found.contains("timeo=100 (10.0 s)"), "{}", f[3].found);
        assert!(f[4].found.contains("rsize=16384") && f[4].why.contains(ORACLE_GUIDE));
        assert!(f[6].found.contains("(acregmax=0)"), "{}", f[6].found);
        // Without a parameter file, no attribute cache is only an info line.
        let f = check_nfs_options(bad, Cluster::Unknown);
        assert_eq!(f.last().unwrap().severity, Severity::Info);
    }

    #[test]
    fn options_parse_as_the_kernel_writes_them() {
        let o = parse_options("rw,vers=4.1,rsize=524288,wsize=1048576,softerr,noac,proto=tcp6");
        assert_eq!(o.vers, "4.1");
        assert_eq!(o.proto, "tcp6");
        assert_eq!(o.soft.as_deref(), Some("softerr"));
        assert_eq!(
            (o.rsize, o.wsize, o.timeo),
            (Some(524288), Some(1048576), None)
        );
        assert_eq!((o.nconnect, o.no_attr_cache_by.as_str()), (1, "noac"));
        let o = parse_options("nfsvers=3,actimeo=0,nconnect=8,nconnectx=2");
        assert_eq!((o.vers.as_str(), o.nconnect), ("3", 8));
        assert_eq!(o.no_attr_cache_by, "actimeo=0");
        // acregmin=0 alone still caches (up to acregmax).
        assert!(!parse_options("acregmin=0,acregmax=60").no_attr_cache);
        let f = check_nfs_options(
            "vers=4.1,nconnect=2,rsize=1048576,wsize=1048576,hard,timeo=600",
            Cluster::Single,
        );
        assert_eq!(checks(&f), [("nfs-vers", Severity::Info)]);
    }

    #[test]
    fn the_slot_table() {
        assert_eq!(check_sunrpc_slots(Some(16)).len(), 1);
        assert!(check_sunrpc_slots(Some(16))[0]
            .why
            .contains("kernel-parameters"));
        assert!(check_sunrpc_slots(Some(128)).is_empty());
        assert!(check_sunrpc_slots(None).is_empty());
        assert!(slots_looked_at(None).contains("not readable"));
    }

    #[test]
    fn cluster_database_from_the_parameter_file() {
        let p = crate::doctor::parse_init_ora;
        assert_eq!(Cluster::of(&p("*.cluster_database=TRUE\n")), Cluster::Rac);
        assert_eq!(
            Cluster::of(&p("*.cluster_database=false\n")),
            Cluster::Single
        );
        assert_eq!(Cluster::of(&p("*.db_name=ORCL\n")), Cluster::Single);
    }
}
