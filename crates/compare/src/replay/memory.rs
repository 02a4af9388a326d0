//! What a replay did with production's page cache: the outcome of one run beside the
//! shape the model holds (`dbio_sources::model::shape`), and the rows of a memory ramp
//! (`--page-cache 256M,512M,1G`). Judging, so here beside the report it fills.

use dbio_sources::model::WorkloadModel;
use dbio_stats::RunResult;

use super::report::{MemoryEvent, MemoryStep, PageCacheOutcome, ReplayReport};

/// Production's page cache (from the model) beside what `run`'s device saw of the
/// replay's reads in its measured window.
pub fn page_cache_outcome(model: &WorkloadModel, run: &RunResult) -> Option<PageCacheOutcome> {
    let p = model.page_cache.as_ref()?;
    let mut o = PageCacheOutcome {
        production_hit_share: p.hit_share,
        production_device_read_bytes: p.device_read_bytes,
        production_bytes: p.bytes,
        ..PageCacheOutcome::default()
    };
    let reads = run
        .classes
        .iter()
        .filter(|c| c.class.ends_with("-read"))
        .map(|c| c.ios)
        .sum::<u64>();
    let device = run.devices.as_deref().and_then(|d| {
        let dev = d.devices.first()?;
        // The samples inside the measured window (the last elapsed_s of the run).
        let from = d.elapsed_s - run.elapsed_s - 0.5;
        let (n, bytes) = dev
            .samples
            .iter()
            .filter(|s| s.t_s > from + d.interval_s)
            .fold((0u64, 0u64), |(n, b), s| (n + s.reads, b + s.read_bytes));
        Some((dev.name.clone(), n, bytes))
    });
    match device {
        Some((name, n, bytes)) if reads > 0 => {
            o.replay_hit_share = Some((1.0 - n as f64 / reads as f64).clamp(0.0, 1.0));
            o.replay_device_read_bytes = (n > 0).then(|| bytes / n);
            o.replay_source = format!(
                "{name}: {n} reads, {bytes} bytes in the measured window (/proc/diskstats, \
                 every process's), against the replay's {reads} reads"
            );
        }
        Some(_) => o.replay_source = "the replay made no reads".into(),
        None => {
            o.replay_source = "not known: the run sampled no block device (an NFS target)".into()
        }
    }
    Some(o)
}

/// The row of a memory ramp for `r`, the judgement of a step run with a page cache
/// of `bytes`.
pub fn memory_step(r: &ReplayReport, bytes: u64) -> MemoryStep {
    MemoryStep {
        page_cache_bytes: bytes,
        hit_share: r.page_cache.as_ref().and_then(|p| p.replay_hit_share),
        events: r
            .events
            .iter()
            .filter(|e| e.class.ends_with("-read"))
            .map(|e| MemoryEvent {
                event: e.event.clone(),
                production_mean_us: e.production_mean_us,
                predicted_mean_us: e.predicted_mean_us.or(e.here_mean_us),
            })
            .collect(),
    }
}
