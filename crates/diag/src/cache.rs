//! Could a run's reads have come from memory? The data set against the page
//! cache that could hold it: this host's for a local target read without
//! O_DIRECT, the server's for NFS (ganesha, like most servers, answers READs
//! from its page cache whatever the client asked). A data set that fits
//! measures memory, not storage.

use dbio_stats::CacheCheck;

/// Where the data set's blocks could be cached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CachePlace {
    /// Local files: `direct` is O_DIRECT, which bypasses the page cache.
    Local { direct: bool },
    /// An NFS server on this host (its page cache is this host's memory).
    NfsHere,
    /// An NFS server elsewhere: its memory is not known here.
    NfsElsewhere,
}

/// A data set this many times the cache keeps random reads' hits at a tenth.
const AVOID_FACTOR: u64 = 10;

/// MemTotal of /proc/meminfo, bytes.
pub fn mem_total() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    meminfo_total(&text)
}

/// MemTotal of a /proc/meminfo text as procfs parses it (kB turned into
/// bytes); None where procfs refuses the text (a field every kernel writes
/// is missing, or a number does not parse).
fn meminfo_total(text: &str) -> Option<u64> {
    use procfs::FromRead;
    procfs::Meminfo::from_read(text.as_bytes())
        .ok()
        .map(|m| m.mem_total)
}

/// Whether `host` (as a URL names it) is this machine: a loopback address or
/// "localhost".
pub fn is_this_host(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost")
        || h.parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn gib(b: u64) -> String {
    dbio_workload::units::format_size(b)
}

/// The check for a data set of `dataset_bytes` at `place`, on a host of
/// `memory` bytes (None: unknown).
pub fn cache_check(dataset_bytes: u64, place: CachePlace, memory: Option<u64>) -> CacheCheck {
    let ds = gib(dataset_bytes);
    let (cache, memory) = match place {
        CachePlace::Local { direct: true } => {
            return CacheCheck {
                cache: "page cache".into(),
                verdict: "bypassed".into(),
                dataset_bytes,
                note: format!(
                    "O_DIRECT bypasses the page cache for the {ds} data set (a cache below it, \
                     in a virtual disk or an array, is not seen from here)"
                ),
                ..Default::default()
            }
        }
        CachePlace::Local { direct: false } => ("page cache", memory),
        CachePlace::NfsHere => ("NFS server's page cache", memory),
        CachePlace::NfsElsewhere => ("NFS server's page cache", None),
    };
    let Some(memory) = memory.filter(|m| *m > 0) else {
        return CacheCheck {
            cache: cache.into(),
            verdict: "unknown".into(),
            dataset_bytes,
            note: format!(
                "the server may answer reads of the {ds} data set from its page cache: a data \
                 set of ten times its memory or more keeps that under a tenth of the reads"
            ),
            ..Default::default()
        };
    };
    let avoid = memory.saturating_mul(AVOID_FACTOR);
    let (verdict, what) = if dataset_bytes <= memory {
        ("fits", "fits in")
    } else if dataset_bytes < avoid {
        ("partly", "partly fits in")
    } else {
        ("unlikely", "is ten times or more")
    };
    let mem = gib(memory);
    let note = if verdict == "unlikely" {
        format!("the data set ({ds}) {what} the {cache} ({mem} of memory): reads come from storage")
    } else {
        format!(
            "the data set ({ds}) {what} the {cache} ({mem} of memory): reads may come from memory; \
             a data set of {} or more (--size) keeps that under a tenth",
            gib(avoid)
        )
    };
    CacheCheck {
        cache: cache.into(),
        verdict: verdict.into(),
        memory_bytes: memory,
        dataset_bytes,
        avoid_from_bytes: avoid,
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn a_data_set_is_judged_against_the_memory_that_could_hold_it() {
        let c = cache_check(GIB, CachePlace::NfsHere, Some(8 * GIB));
        assert_eq!(c.verdict, "fits");
        assert_eq!(c.avoid_from_bytes, 80 * GIB);
        assert!(c.note.contains("80.0 GiB or more"), "{}", c.note);
        assert_eq!(
            cache_check(20 * GIB, CachePlace::Local { direct: false }, Some(8 * GIB)).verdict,
            "partly"
        );
        assert_eq!(
            cache_check(80 * GIB, CachePlace::NfsHere, Some(8 * GIB)).verdict,
            "unlikely"
        );
        assert_eq!(
            cache_check(GIB, CachePlace::Local { direct: true }, Some(8 * GIB)).verdict,
            "bypassed"
        );
        let far = cache_check(GIB, CachePlace::NfsElsewhere, Some(8 * GIB));
        assert_eq!((far.verdict.as_str(), far.memory_bytes), ("unknown", 0));
        assert!(far.note.contains("may"), "{}", far.note);
    }

    #[test]
    fn memory_and_hosts_read_as_the_kernel_and_urls_give_them() {
        // A 24 GiB machine's, Linux 6.18.
        let meminfo = include_str!("../testdata/meminfo-6.18.txt");
        assert_eq!(meminfo_total(meminfo), Some(24_683_772 * 1024));
        let without: String = meminfo
            .lines()
            .filter(|l| !l.starts_with("MemTotal:"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(meminfo_total(&without), None);
        assert_eq!(meminfo_total("MemFree: 1 kB\n"), None);
        assert!(mem_total().is_some_and(|m| m > 0));
        for here in ["127.0.0.1", "::1", "[::1]", "localhost", "127.1.2.3"] {
            assert!(is_this_host(here), "{here}");
        }
        for there in ["10.0.0.2", "filer", "::2"] {
            assert!(!is_this_host(there), "{there}");
        }
    }
}
