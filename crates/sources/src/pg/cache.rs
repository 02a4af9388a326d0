//! What the statistics views cannot say about PostgreSQL's reads: how many reached the
//! device (the rest the OS page cache served), how large the device's reads were, how
//! large that cache was, and how the reads spread over relations. Read beside each
//! snapshot where the server runs on the capturing host (`/proc/PID/io`, the data
//! directory's block device, the server's memory cgroup); the relations from
//! `pg_statio_all_tables` wherever it runs. The readings are kept in `readings.rs`; here
//! is their arithmetic; reading them is the binary's work.

use super::capture::PgCapture;
pub use super::readings::{DeviceReads, HostSnapshot, RelationReads};
use crate::model::shape::{self, fit, hit_share};
use crate::model::{PageCacheShape, RelationShare, WorkloadModel};

/// Field `name` of `/proc/PID/io` ("read_bytes", "rchar").
pub fn parse_proc_io(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == name).then(|| v.trim().parse().ok())?
    })
}

/// Reads completed and bytes read, from a block device's `stat` file.
pub fn parse_block_stat(text: &str) -> Option<(u64, u64)> {
    let f: Vec<u64> = text
        .split_whitespace()
        .take(3)
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    (f.len() == 3).then(|| (f[0], f[2].saturating_mul(512)))
}

/// What the capture says of the page cache: (device reads per PostgreSQL read,
/// bytes per device read, PostgreSQL's reads, and where from), or why not known.
struct Misses {
    per_read: f64,
    device_read_bytes: f64,
    /// Device bytes over PostgreSQL's read bytes.
    fetched_share: f64,
    source: String,
}

impl PgCapture {
    /// Bytes the server's processes had fetched from storage between the snapshots
    /// (`/proc/PID/io` read_bytes), with how many processes: None when a process came
    /// or went between them (its reads would be missed) or none could be read.
    fn storage_read_bytes(&self) -> Option<(u64, usize)> {
        let (b, e) = (self.begin.sched.as_ref()?, self.end.sched.as_ref()?);
        let same = |p: &super::ProcessSched, x: &super::ProcessSched| {
            p.pid == x.pid && (p.started - x.started).abs() < 1e-3
        };
        let mut total = 0u64;
        for x in &e.processes {
            let before = b.processes.iter().find(|p| same(p, x))?;
            let (Some(a), Some(z)) = (before.read_bytes, x.read_bytes) else {
                return None;
            };
            total += z.checked_sub(a)?;
        }
        let gone = b
            .processes
            .iter()
            .any(|p| !e.processes.iter().any(|x| same(p, x)));
        (!gone && !e.processes.is_empty()).then_some((total, e.processes.len()))
    }

    fn misses(&self, pg_reads: f64, pg_bytes: f64) -> Result<Misses, String> {
        let host = |s: &super::PgSnapshot| s.host.clone();
        let (Some(b), Some(e)) = (host(&self.begin), host(&self.end)) else {
            return Err(
                "the capture has no host readings (a remote server, or a dbio \
                        that did not read them)"
                    .into(),
            );
        };
        let (Some(db), Some(de)) = (b.device, e.device) else {
            let why = e.unread.first().or(b.unread.first()).cloned();
            return Err(why.unwrap_or_else(|| "the data directory's device is not known".into()));
        };
        let reads = de.reads.saturating_sub(db.reads);
        let read_bytes = de.read_bytes.saturating_sub(db.read_bytes);
        if pg_reads <= 0.0 {
            return Err("PostgreSQL read nothing between the snapshots".into());
        }
        if reads == 0 || read_bytes == 0 {
            return Ok(Misses {
                per_read: 0.0,
                device_read_bytes: 0.0,
                fetched_share: 0.0,
                source: format!(
                    "{} ({}) read nothing between the snapshots, against {pg_reads:.0} \
                     PostgreSQL reads",
                    de.name, de.dev
                ),
            });
        }
        let size = read_bytes as f64 / reads as f64;
        let device = format!(
            "{} ({}: {reads} reads, {read_bytes} bytes)",
            de.name, de.dev
        );
        let (device_reads, source) = match self.storage_read_bytes() {
            Some((bytes, procs)) => {
                let n = bytes as f64 / size;
                (
                    n,
                    format!(
                        "/proc/PID/io read_bytes of the {procs} server processes: {bytes} \
                         bytes fetched from storage, at {size:.0} bytes per read of {device} \
                         = {n:.0} device reads for {pg_reads:.0} PostgreSQL reads"
                    ),
                )
            }
            // A process that came or went took its counts with it: the device's own
            // reads then, every process's.
            None => (
                reads as f64,
                format!(
                    "{device}, every process's (server processes came or went between the \
                     snapshots, or their /proc/PID/io could not be read: run the capture as \
                     root or the server's user) for {pg_reads:.0} PostgreSQL reads"
                ),
            ),
        };
        Ok(Misses {
            per_read: device_reads / pg_reads,
            device_read_bytes: size,
            fetched_share: device_reads * size / pg_bytes.max(1.0),
            source,
        })
    }

    /// The relations read between the snapshots: (name, bytes, reads, accesses: hits
    /// and reads), a table's heap and its indexes apart, those never accessed left out.
    fn relation_reads(&self) -> Vec<(String, u64, f64, f64)> {
        let mut out = Vec::new();
        for e in &self.end.relations {
            let b = self.begin.relations.iter().find(|b| b.relid == e.relid);
            let z = RelationReads::default();
            let b = b.unwrap_or(&z);
            let d = |x: u64, y: u64| x.saturating_sub(y) as f64;
            let heap = (d(e.heap_reads, b.heap_reads), d(e.heap_hits, b.heap_hits));
            let index = (
                d(e.index_reads, b.index_reads),
                d(e.index_hits, b.index_hits),
            );
            if heap.0 + heap.1 > 0.0 {
                out.push((e.name.clone(), e.heap_bytes, heap.0, heap.0 + heap.1));
            }
            if index.0 + index.1 > 0.0 {
                let name = format!("{} (indexes)", e.name);
                out.push((name, e.index_bytes, index.0, index.0 + index.1));
            }
        }
        out.sort_by(|a, b| b.3.total_cmp(&a.3));
        out
    }

    /// Shared buffers' hit share between the snapshots (hits over hits and reads of
    /// relations), and where from.
    fn buffer_hits(&self) -> Option<(f64, String)> {
        let rel =
            |r: &serde_json::Value| r.get("object").and_then(|v| v.as_str()) == Some("relation");
        let any = |_: &serde_json::Value| true;
        let (hits, reads, from) = if self.has_view("pg_stat_io") {
            (
                self.delta("pg_stat_io", "hits", rel)?,
                self.delta("pg_stat_io", "reads", rel)?,
                "pg_stat_io, object relation: hits/(hits + reads)",
            )
        } else {
            (
                self.delta("pg_stat_database", "blks_hit", any)?,
                self.delta("pg_stat_database", "blks_read", any)?,
                "pg_stat_database: blks_hit/(blks_hit + blks_read)",
            )
        };
        (hits + reads > 0.0).then(|| {
            let h = hits / (hits + reads);
            (
                h,
                format!("{from} = {hits:.0}/{:.0} = {h:.4}", hits + reads),
            )
        })
    }
}

/// Relations kept by name; the others are merged into "the rest".
const RELATIONS_KEPT: usize = 16;

/// The page cache's shape and the relations, into `m` (whose read class is made).
pub fn shape(c: &PgCapture, bs: u32, m: &mut WorkloadModel) {
    let Some((pg_reads, pg_bytes)) = m
        .classes
        .iter()
        .find(|k| k.event == super::READ_EVENT)
        .and_then(|k| Some((k.production_ios?, k.production_ios? * f64::from(k.size))))
    else {
        return;
    };
    // The buffer pool in front of the reads: where its size and hit share are known,
    // the replay draws every access and reads what a pool of that size misses.
    let pool = c
        .setting_bytes("shared_buffers")
        .zip(c.buffer_hits())
        .filter(|(b, _)| *b > 0);
    // Relations: their shares of the accesses (with a pool) or of the reads the views
    // count for the database captured; the rest of the data set (other databases,
    // relations not read) gets the rest.
    let mut rels = c.relation_reads();
    let of = |r: &(String, u64, f64, f64)| if pool.is_some() { r.3 } else { r.2 };
    let counted: f64 = rels.iter().map(of).sum();
    let total_bytes: u64 = c.database_bytes.values().sum();
    if counted > 0.0 {
        let mut kept: Vec<RelationShare> = Vec::new();
        rels.sort_by(|a, b| of(b).total_cmp(&of(a)));
        let dropped = rels.split_off(rels.len().min(RELATIONS_KEPT));
        let (rest_reads, rest_accesses) = dropped
            .iter()
            .fold((0.0, 0.0), |(r, a), d| (r + d.2, a + d.3));
        // Shared buffers' hits of a relation: what is not read of what is accessed.
        let hit_of = |reads: f64, accesses: f64| {
            (pool.is_some() && accesses > 0.0).then(|| (1.0 - reads / accesses).clamp(0.0, 1.0))
        };
        let denom = if pool.is_some() {
            counted
        } else {
            counted.max(pg_reads)
        };
        for r in &rels {
            kept.push(RelationShare {
                name: r.0.clone(),
                bytes: r.1,
                share: of(r) / denom,
                hit_share: hit_of(r.2, r.3),
                skew: None,
            });
        }
        let kept_bytes: u64 = kept.iter().map(|r| r.bytes).sum();
        let kept_share: f64 = kept.iter().map(|r| r.share).sum();
        let rest_bytes = total_bytes.saturating_sub(kept_bytes);
        let rest_share = (1.0 - kept_share).max(0.0);
        if rest_bytes > 0 {
            kept.push(RelationShare {
                name: "the rest".into(),
                bytes: rest_bytes,
                share: rest_share,
                // Nothing accessed beyond the kept: shared buffers' overall share.
                hit_share: hit_of(rest_reads, rest_accesses)
                    .or(pool.as_ref().map(|(_, (h, _))| *h)),
                skew: None,
            });
        }
        m.notes.push(format!(
            "relations: {} with {} in pg_statio_all_tables of the database captured \
             ({counted:.0}, against {pg_reads:.0} reads of the server); laid out in the \
             data set in proportion to their sizes",
            kept.len() - usize::from(rest_bytes > 0),
            if pool.is_some() {
                "accesses (blocks hit and read)"
            } else {
                "reads"
            }
        ));
        m.relations = kept;
    }
    let mut p = PageCacheShape::default();
    let host = c.end.host.as_ref();
    p.bytes = host.and_then(|h| h.page_cache_bytes);
    p.bytes_source = host.map_or_else(
        || "not known: the capture has no host readings".into(),
        |h| h.page_cache_source.clone(),
    );
    p.read_ahead_kb = host
        .and_then(|h| h.device.as_ref())
        .and_then(|d| d.read_ahead_kb);
    match c.misses(pg_reads, pg_bytes) {
        Ok(x) => {
            p.hit_share = Some((1.0 - x.per_read).clamp(0.0, 1.0));
            p.fetched_share = Some((x.fetched_share * 1000.0).round() / 1000.0);
            p.device_read_bytes = Some(x.device_read_bytes.round() as u64);
            p.hit_source = x.source;
            p.clustered = x.device_read_bytes > 2.0 * f64::from(bs);
        }
        Err(why) => p.hit_source = format!("not known: {why}"),
    }
    match pool {
        Some((bytes, (hit, from))) => {
            p.buffer_pool_bytes = Some(bytes);
            p.buffer_pool_hit_share = Some(hit);
            if !m.relations.is_empty() && m.relations.iter().all(|r| r.hit_share.is_some()) {
                fit_each_relation(m, &mut p, bs, bytes);
            } else {
                let target = (bytes, hit, format!("shared_buffers' ({from})"));
                fit_skew(m, &mut p, bs, total_bytes, target);
            }
        }
        None if !m.data_buffered => {
            p.skew_source = "none: PostgreSQL read with direct I/O, no page cache between, \
                             and shared buffers' hits are not known"
                .into()
        }
        None => match (p.bytes, p.hit_share) {
            (Some(b), Some(h)) => {
                let target = (b, h, "the page cache's".to_string());
                fit_skew(m, &mut p, bs, total_bytes, target)
            }
            _ => p.skew_source = "none: the page cache's size or hit share is not known".into(),
        },
    }
    m.page_cache = Some(p);
}

/// Each relation's exponent, fitted to its own shared-buffers hit share in a pool of
/// `pool_bytes` they share (an index's upper levels always hit; its heap may be read
/// uniformly); the model's `skew` is their mean weighted by the accesses.
fn fit_each_relation(m: &mut WorkloadModel, p: &mut PageCacheShape, bs: u32, pool_bytes: u64) {
    let rels: Vec<(u64, f64, f64)> = m
        .relations
        .iter()
        .map(|r| {
            (
                (r.bytes / u64::from(bs)).max(1),
                r.share,
                r.hit_share.unwrap_or(0.0),
            )
        })
        .collect();
    let cache_blocks = pool_bytes as f64 / f64::from(bs);
    // With the page cache's size and share known, the span read at all is fitted
    // with the exponents, so that the page cache under the pool serves its share.
    let page_cache = match (p.bytes, p.hit_share) {
        (Some(b), Some(h)) if m.data_buffered && b > 0 => Some((b as f64 / f64::from(bs), h)),
        _ => None,
    };
    let mut span_note = String::new();
    let exps = match page_cache {
        Some((pc_blocks, target)) => {
            let (span, exps) = shape::fit_span(&rels, cache_blocks, pc_blocks, target);
            let with: Vec<(u64, f64, f64)> = rels
                .iter()
                .zip(&exps)
                .map(|(&(n, q, _), &s)| (((n as f64 * span).round() as u64).max(1), q, s))
                .collect();
            let got = shape::page_cache_hit_share(&with, cache_blocks, pc_blocks);
            p.span = Some(span);
            span_note = if span >= 1.0 {
                format!(
                    "every block: whole relations give the page cache's {target:.3} \
                     ({got:.3} of the pool's misses served)"
                )
            } else {
                format!(
                    "the hottest {:.2}% of each relation's blocks, so that a page cache \
                     of {pc_blocks:.0} blocks under the pool serves {got:.3} of its misses \
                     (production's: {target:.3}); whole relations would give {:.3}",
                    span * 100.0,
                    whole_relations(&rels, cache_blocks, pc_blocks)
                )
            };
            exps
        }
        None => shape::fit_each(&rels, cache_blocks),
    };
    let mut mean = 0.0;
    for (r, s) in m.relations.iter_mut().zip(&exps) {
        let s = (s * 1000.0).round() / 1000.0;
        r.skew = Some(s);
        mean += r.share * s;
    }
    p.skew = Some((mean * 1000.0).round() / 1000.0);
    p.skew_source = format!(
        "fitted per relation to each one's shared-buffers hit share (pg_statio_all_tables: \
         blocks hit over hit and read) in a least-recently-used pool of {cache_blocks:.0} \
         blocks they share (Che's approximation); {}",
        m.relations
            .iter()
            .take(4)
            .map(|r| format!(
                "{} {:.3} at {:.3}",
                r.name,
                r.skew.unwrap_or(0.0),
                r.hit_share.unwrap_or(0.0)
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if !span_note.is_empty() {
        p.skew_source.push_str("; read: ");
        p.skew_source.push_str(&span_note);
    }
}

/// The page cache's share of the pool's misses with every block of each relation
/// read, the exponents fitted to the pool's hit shares alone.
fn whole_relations(rels: &[(u64, f64, f64)], pool_blocks: f64, pc_blocks: f64) -> f64 {
    let exps = shape::fit_each(rels, pool_blocks);
    let with: Vec<(u64, f64, f64)> = rels
        .iter()
        .zip(&exps)
        .map(|(&(n, q, _), &s)| (n, q, s))
        .collect();
    shape::page_cache_hit_share(&with, pool_blocks, pc_blocks)
}

/// The Zipf exponent at which a least-recently-used cache of `target`'s bytes serves
/// its hit share of the accesses (shared buffers' when known, else the page cache's).
fn fit_skew(
    m: &WorkloadModel,
    p: &mut PageCacheShape,
    bs: u32,
    total_bytes: u64,
    (cache, hit, whose): (u64, f64, String),
) {
    let blocks = |b: u64| (b / u64::from(bs)).max(1);
    let rels: Vec<(u64, f64)> = if m.relations.is_empty() {
        vec![(blocks(total_bytes), 1.0)]
    } else {
        m.relations
            .iter()
            .map(|r| (blocks(r.bytes), r.share))
            .collect()
    };
    let cache_blocks = cache as f64 / f64::from(bs);
    match fit(&rels, cache_blocks, hit) {
        Ok(s) => {
            p.skew = Some((s * 1000.0).round() / 1000.0);
            p.skew_source = format!(
                "fitted to {whose} hit share: a Zipf law of exponent {s:.3} within each \
                 relation gives {hit:.3} in a least-recently-used cache of {cache_blocks:.0} \
                 blocks (uniform accesses would hit {:.3})",
                hit_share(&rels, 0.0, cache_blocks)
            );
        }
        Err(why) => {
            p.skew = Some(0.0);
            p.skew_source = format!("uniform ({whose}): {why}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::cpu::{ProcessSched, SchedSnapshot};
    use super::super::fixtures::pg15;
    use super::*;
    use crate::pg::model_of;

    fn host(reads: u64, read_bytes: u64) -> Option<HostSnapshot> {
        Some(HostSnapshot {
            device: Some(DeviceReads {
                name: "vda1".into(),
                dev: "254:1".into(),
                reads,
                read_bytes,
                read_ahead_kb: Some(128),
            }),
            page_cache_bytes: Some(64 << 20),
            page_cache_source: "memory cgroup /dbio-pg-1".into(),
            unread: Vec::new(),
        })
    }

    fn backend(read_bytes: u64) -> Option<SchedSnapshot> {
        Some(SchedSnapshot {
            processes: vec![ProcessSched {
                pid: 7,
                backend_type: "client backend".into(),
                started: 1.0,
                timeslices: 1,
                read_bytes: Some(read_bytes),
                ..ProcessSched::default()
            }],
            unread: None,
        })
    }

    fn relation(relid: u32, name: &str, heap: u64, index: u64) -> RelationReads {
        RelationReads {
            relid,
            name: name.into(),
            heap_reads: heap,
            index_reads: index,
            heap_bytes: 768 << 20,
            index_bytes: 128 << 20,
            heap_hits: 9 * heap,
            index_hits: 99 * index,
        }
    }

    /// pg15()'s 50,000 reads, of which the server fetched 2,500 device reads of 128 KiB
    /// (another process read 500 more on the device), through 64 MiB of page cache.
    fn captured() -> crate::pg::PgCapture {
        let mut c = pg15();
        c.begin.host = host(1000, 1000 * 4096);
        c.end.host = host(4000, 1000 * 4096 + 3000 * 131_072);
        c.begin.sched = backend(10);
        c.end.sched = backend(10 + 2500 * 131_072);
        c.begin.relations = vec![relation(1, "public.accounts", 100, 50)];
        c.end.relations = vec![
            relation(1, "public.accounts", 30_100, 15_050),
            relation(2, "public.branches", 0, 0),
        ];
        c
    }

    #[test]
    fn the_page_cache_s_share_and_the_relations_come_from_the_host_and_the_views() {
        let m = model_of(&captured(), "cap.json").unwrap();
        let p = m.page_cache.as_ref().unwrap();
        assert!((p.hit_share.unwrap() - 0.95).abs() < 1e-9, "{p:?}");
        assert_eq!(p.device_read_bytes, Some(131_072));
        // 2,500 device reads of 16 blocks for 50,000 of one.
        assert_eq!(p.fetched_share, Some(0.8));
        assert_eq!(p.bytes, Some(64 << 20));
        assert!(p.clustered);
        assert!(
            p.hit_source.contains("2500 device reads for 50000"),
            "{}",
            p.hit_source
        );
        let names: Vec<(&str, f64)> = m
            .relations
            .iter()
            .map(|r| (r.name.as_str(), (r.share * 1e6).round() / 1e6))
            .collect();
        assert_eq!(
            names,
            vec![
                ("public.accounts", 0.6),
                ("public.accounts (indexes)", 0.3),
                ("the rest", 0.1)
            ]
        );
        // The fitted skew gives production's share back in a cache of its size.
        let s = p.skew.unwrap();
        assert!(s > 0.0, "{p:?}");
        let rels: Vec<(u64, f64)> = m
            .relations
            .iter()
            .map(|r| ((r.bytes / 8192).max(1), r.share))
            .collect();
        let back = crate::model::shape::hit_share(&rels, s, (64 << 20) as f64 / 8192.0);
        assert!((back - 0.95).abs() < 0.005, "{back}");
    }

    #[test]
    fn with_shared_buffers_hits_the_skew_is_fitted_to_them_over_every_access() {
        let mut c = captured();
        c.settings.insert(
            "shared_buffers".into(),
            crate::pg::PgSetting {
                setting: "2048".into(),
                unit: Some("8kB".into()),
            },
        );
        // 950,000 hits for 50,000 reads: 0.95 of the accesses.
        for (snap, hits) in [(&mut c.begin, 10_000), (&mut c.end, 960_000)] {
            for r in snap.views.get_mut("pg_stat_database").unwrap() {
                if r["datname"] == "postgres" {
                    r["blks_hit"] = hits.into();
                }
            }
        }
        let m = model_of(&c, "cap.json").unwrap();
        let p = m.page_cache.as_ref().unwrap();
        assert_eq!(p.buffer_pool_bytes, Some(16 << 20));
        assert!(
            (p.buffer_pool_hit_share.unwrap() - 0.95).abs() < 1e-9,
            "{p:?}"
        );
        assert!(
            p.skew_source.starts_with("fitted per relation"),
            "{}",
            p.skew_source
        );
        // Shares of every access: the heap's 30,000 reads and 270,000 hits against the
        // indexes' 15,000 and 1,485,000; each relation's own hit share.
        let heap = &m.relations[1];
        assert_eq!(heap.name, "public.accounts");
        assert!(
            (heap.share - 300_000.0 / 1_800_000.0).abs() < 1e-9,
            "{heap:?}"
        );
        assert!((heap.hit_share.unwrap() - 0.9).abs() < 1e-9, "{heap:?}");
        assert!((m.relations[0].hit_share.unwrap() - 0.99).abs() < 1e-9);
        // The fitted exponents give each relation its hit share back in the pool, over
        // the span read (the page cache's share fitted with them).
        let span = p.span.unwrap();
        assert!(span > 0.0 && span <= 1.0, "{p:?}");
        let rels: Vec<(u64, f64, f64)> = m
            .relations
            .iter()
            .map(|r| {
                let n = ((r.bytes / 8192) as f64 * span).round() as u64;
                (n.max(1), r.share, r.skew.unwrap())
            })
            .collect();
        let back = crate::model::shape::hit_shares_each(&rels, 2048.0);
        for (b, r) in back.iter().zip(&m.relations) {
            // The steepest exponent bounds what a small, cold "rest" can reach.
            if r.skew.unwrap() < crate::model::shape::MAX_SKEW {
                assert!(
                    (b - r.hit_share.unwrap()).abs() < 0.01,
                    "{back:?} {:?}",
                    m.relations
                );
            }
        }
    }

    #[test]
    fn without_the_host_the_model_says_what_it_could_not_see() {
        let mut c = captured();
        c.end.host = None;
        let m = model_of(&c, "cap.json").unwrap();
        let p = m.page_cache.unwrap();
        assert_eq!(p.hit_share, None);
        assert!(
            p.hit_source
                .starts_with("not known: the capture has no host"),
            "{p:?}"
        );
        assert!(p.bytes_source.starts_with("not known"), "{p:?}");
        assert_eq!(p.skew, None);
        // A process whose counts went down is another: the device's own reads then,
        // every process's (3000 of them for 50,000 PostgreSQL reads).
        let mut c = captured();
        c.end.sched = backend(0);
        let p = model_of(&c, "cap.json").unwrap().page_cache.unwrap();
        assert!(
            p.hit_source
                .contains("every process's (server processes came"),
            "{p:?}"
        );
        assert!((p.hit_share.unwrap() - 0.94).abs() < 1e-9, "{p:?}");
    }

    #[test]
    fn proc_io_and_block_stat_parse() {
        let io = "rchar: 12\nwchar: 3\nsyscr: 4\nsyscw: 1\nread_bytes: 8192\nwrite_bytes: 0\n";
        assert_eq!(parse_proc_io(io, "read_bytes"), Some(8192));
        assert_eq!(parse_proc_io(io, "rchar"), Some(12));
        assert_eq!(parse_proc_io(io, "cancelled_write_bytes"), None);
        let stat = "    1234        5     9876      100        0        0        0        0";
        assert_eq!(parse_block_stat(stat), Some((1234, 9876 * 512)));
        assert_eq!(parse_block_stat("12 x"), None);
    }
}
