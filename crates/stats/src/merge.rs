//! Merging runs: the results of runs that were parts of one load (the
//! ranks of a run over several hosts, or runs started together) become one
//! result, with percentiles derived again from the exact histograms.

use std::time::Duration;

use crate::open_loop::OpenLoopSection;
use crate::raw::{RawError, RawRecorder};
use crate::recorder::Recorder;
use crate::schema::{
    ClassResult, Labels, NfsSection, RunResult, VerifySummary, FORMAT_VERSION, RUN_KIND,
};

/// Bad blocks a [`VerifySummary`] lists at most.
const MAX_BAD: usize = 20;

/// One result from `runs` taken as parts of one load that ran at the same
/// time: counts and bytes are summed, histograms merged exactly (from each
/// run's `raw`), and rates, means and percentiles derived again over the
/// longest run's `elapsed_s`. Seconds of the series are aligned from each
/// run's own start. Users and CPU time are summed; the other settings are
/// the first run's. The NFS sections are put together (servers and files
/// once each, channels and events of every run, calls summed), verify
/// counts summed, and only the labels every run shares with the same
/// value are kept.
///
/// Fails without runs, when a run has no raw recorder (its percentiles
/// could not be merged exactly), or when a raw recorder is malformed.
pub fn merge_runs(runs: &[RunResult]) -> Result<RunResult, RawError> {
    let first = runs.first().ok_or(RawError::NoRuns)?;
    let mut raw = RawRecorder::default();
    for (index, r) in runs.iter().enumerate() {
        raw.merge(r.raw.as_ref().ok_or(RawError::NoRaw { index })?)?;
    }
    let elapsed_s = runs.iter().map(|r| r.elapsed_s).fold(0.0, f64::max);
    let recorder = Recorder::from_raw(&raw)?;
    let elapsed = Duration::try_from_secs_f64(elapsed_s).unwrap_or_default();
    let (classes, mut files, series) = recorder.finish(elapsed);
    for (i, f) in files.iter_mut().enumerate() {
        if let Some(named) = runs.iter().find_map(|r| r.files.get(i)) {
            f.name = named.name.clone();
            f.size = named.size;
        }
    }
    let mut config = first.config.clone();
    config.users = runs.iter().map(|r| r.config.users).sum();
    let mut cpu = first.cpu.clone();
    for r in &runs[1..] {
        cpu.user_s += r.cpu.user_s;
        cpu.system_s += r.cpu.system_s;
    }
    let mut merged = RunResult {
        kind: RUN_KIND.into(),
        format_version: FORMAT_VERSION,
        dbio_version: first.dbio_version.clone(),
        started_unix: runs
            .iter()
            .map(|r| r.started_unix)
            .fold(f64::INFINITY, f64::min),
        elapsed_s,
        interrupted: runs.iter().any(|r| r.interrupted),
        stop_reason: runs.iter().find_map(|r| r.stop_reason.clone()),
        config,
        failed_ios: recorder.failed(),
        cpu,
        classes: classes.clone(),
        files,
        series,
        nfs: merge_nfs(runs),
        verify: merge_verify(runs),
        open_loop: merge_open_loop(runs, &classes),
        labels: common_labels(runs),
        raw: Some(Box::new(raw)),
        provenance: first.provenance.clone(),
        ..Default::default()
    };
    merged.fill_totals();
    Ok(merged)
}

fn merge_open_loop(runs: &[RunResult], classes: &[ClassResult]) -> Option<Box<OpenLoopSection>> {
    let parts: Vec<&OpenLoopSection> = runs.iter().filter_map(|r| r.open_loop.as_deref()).collect();
    (!parts.is_empty()).then(|| Box::new(OpenLoopSection::merge(&parts, classes)))
}

fn merge_nfs(runs: &[RunResult]) -> Option<Box<NfsSection>> {
    let mut sections = runs.iter().filter_map(|r| r.nfs.as_deref());
    let mut m = sections.next()?.clone();
    for n in sections {
        for s in &n.servers {
            if !m.servers.contains(s) {
                m.servers.push(s.clone());
            }
        }
        m.channels.extend(n.channels.iter().cloned());
        for f in &n.files {
            if !m.files.contains(f) {
                m.files.push(f.clone());
            }
        }
        m.stats.add(&n.stats);
        if let Some(s) = &n.setup {
            m.setup.get_or_insert_with(Default::default).add(s);
        }
        m.events.extend(n.events.iter().cloned());
    }
    m.events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    Some(Box::new(m))
}

fn merge_verify(runs: &[RunResult]) -> Option<Box<VerifySummary>> {
    let mut all = runs.iter().filter_map(|r| r.verify.as_deref());
    let mut m = all.next()?.clone();
    for v in all {
        m.blocks_checked += v.blocks_checked;
        m.final_pass_blocks += v.final_pass_blocks;
        m.final_pass_complete &= v.final_pass_complete;
        m.lost += v.lost;
        m.torn += v.torn;
        m.misdirected += v.misdirected;
        m.checksum += v.checksum;
        let room = MAX_BAD.saturating_sub(m.bad.len());
        m.bad.extend(v.bad.iter().take(room).cloned());
    }
    Some(Box::new(m))
}

fn common_labels(runs: &[RunResult]) -> Labels {
    let mut labels = runs[0].labels.clone();
    labels.retain(|k, v| runs[1..].iter().all(|r| r.labels.get(k) == Some(v)));
    labels
}
