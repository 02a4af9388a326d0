//! `mpirun -n N dbio run ...`: one rank of a run over several hosts.
//!
//! MPI only launches, synchronises and gathers: each rank runs the ordinary
//! single-host code on its own part of the data set (`TARGET/rank-R`), all
//! ranks wait for each other once their data sets are ready, run the same
//! time, and send their result (JSON with the raw recorder) to rank 0,
//! which merges them exactly (`stats::merge_runs`), adds one
//! `RankSummary` per rank, and alone prints and writes the outputs.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use dbio_experiment::RunPlan;
use dbio_mpi::World;
use dbio_report::AnyResult;
use dbio_stats::{RankSummary, RunResult};

use crate::cmd_run::{exit_code, measure, Args};
use crate::common;

/// Runs this rank's part and, on rank 0, writes the merged result. An error
/// on one rank ends the whole job (MPI_Abort): the others would wait for it.
pub fn main(args: &Args, world: World) -> anyhow::Result<i32> {
    let rank = world.rank();
    match rank_part(args, &world) {
        Ok(code) => {
            world.finalize()?;
            Ok(code)
        }
        Err(e) => {
            eprintln!("dbio: rank {rank} of {}: {e:#}", world.size());
            world.abort(2)
        }
    }
}

fn rank_part(args: &Args, world: &World) -> anyhow::Result<i32> {
    let rank = world.rank();
    if world.is_root() {
        args.output.check()?;
    }
    // The ranks' recorders are always gathered raw (exact merge); --no-raw
    // leaves the raw form out of the merged result only.
    let mut options = args.options();
    if let Some(conf) = &args.flags.slob_conf {
        crate::slob_conf::apply::<Args>(conf, &mut options, world.is_root())?;
    }
    options.raw = true;
    let plan = RunPlan::new(&options)?;
    let base = args.flags.target_or_default();
    let name = rank_target(&base, rank, args.flags.nfs.oranfstab.as_deref())?;
    let host = dbio_mpi::host_name();
    // All ranks meet once their data sets are ready, and stop together
    // when any was stopped while preparing.
    let mut start = |stopped: bool| -> anyhow::Result<bool> { Ok(world.any(stopped)?) };
    let m = measure(&args.setup(), &plan, &name, &mut start)?;
    let mut result = m.result;
    result.labels.insert("rank".into(), rank.to_string());
    result.labels.insert("host".into(), host);
    let own_code = exit_code(&result);
    let t0 = Instant::now();
    let parts = world.gather_bytes(&serde_json::to_vec(&result)?)?;
    let Some(parts) = parts else {
        return Ok(io_error(world, m.error).unwrap_or(own_code));
    };
    let gathered = t0.elapsed();
    let runs = parts
        .iter()
        .enumerate()
        .map(|(r, b)| serde_json::from_slice(b).with_context(|| format!("result of rank {r}")))
        .collect::<anyhow::Result<Vec<RunResult>>>()?;
    let mut merged = merge(&runs, m.before_start)?;
    merged.config.target = base.display().to_string();
    if args.no_raw {
        merged.raw = None;
    }
    eprintln!(
        "merged the results of {} ranks in {:.1} ms (gathered in {:.1} ms)",
        runs.len(),
        t0.elapsed().as_secs_f64() * 1e3,
        gathered.as_secs_f64() * 1e3
    );
    let outputs = args.output.outputs();
    if m.before_start {
        return common::exit_interrupted(merged, &outputs);
    }
    let code = exit_code(&merged);
    let result = AnyResult::Run(merged);
    print!("{}", dbio_report::terminal(&result));
    common::wrote(dbio_report::write_outputs(&result, &outputs)?);
    Ok(io_error(world, m.error).unwrap_or(code))
}

/// The I/O error that ended this rank's run early, said after the results
/// were gathered (the job then ends normally, exit code 2, rather than by
/// MPI_Abort).
fn io_error(world: &World, error: Option<dbio_experiment::ExperimentError>) -> Option<i32> {
    let e = error?;
    eprintln!("dbio: rank {} of {}: {e}", world.rank(), world.size());
    Some(2)
}

/// One result of the ranks' `runs` (in rank order): merged exactly, or,
/// when the ranks were stopped before their first I/O, rank 0's empty
/// result; with one `RankSummary` per rank.
fn merge(runs: &[RunResult], before_start: bool) -> anyhow::Result<RunResult> {
    let mut merged = if before_start {
        runs[0].clone()
    } else {
        dbio_stats::merge_runs(runs).context("merging the ranks' results")?
    };
    merged.ranks = runs
        .iter()
        .enumerate()
        .map(|(r, run)| {
            let host = run.labels.get("host").map_or("", String::as_str);
            RankSummary::of(r as u32, host, run)
        })
        .collect();
    merged.labels.remove("rank");
    merged.labels.insert("ranks".into(), runs.len().to_string());
    Ok(merged)
}

/// The part of the data set of `rank`: `BASE/rank-R` (see `Target::part`).
pub fn rank_target(base: &Path, rank: usize, oranfstab: Option<&Path>) -> anyhow::Result<PathBuf> {
    Ok(dbio_storage::Target::part(
        base,
        &format!("rank-{rank}"),
        oranfstab,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rank's result as a 30 s run of every I/O class would give it:
    /// latencies spread over four decades, one sample a second.
    fn rank_result(rank: u32) -> RunResult {
        use dbio_stats::{ClassDesc, Recorder};
        let classes: Vec<ClassDesc> = [
            "single-block-read",
            "multiblock-read",
            "direct-read",
            "dbwr-write",
            "redo-write",
        ]
        .iter()
        .map(|c| ClassDesc::new(*c, "wait"))
        .collect();
        let start = Instant::now() - std::time::Duration::from_secs(31);
        let mut rec = Recorder::new(&classes, 8, start);
        let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ u64::from(rank);
        for i in 0..200_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let lat = 20_000 + (x % 1_000) * (1 + (x >> 20) % 1_000);
            let at = start + std::time::Duration::from_millis(i * 30_000 / 200_000);
            rec.record(
                (x % 5) as usize,
                (i % 8) as usize,
                x & 3 == 0,
                8192,
                lat,
                at,
            );
        }
        let elapsed = std::time::Duration::from_secs(30);
        let (classes, files, series) = rec.finish(elapsed);
        let mut r = RunResult {
            kind: dbio_stats::RUN_KIND.into(),
            format_version: dbio_stats::FORMAT_VERSION,
            elapsed_s: 30.0,
            classes,
            files,
            series,
            raw: Some(Box::new(rec.to_raw())),
            ..Default::default()
        };
        r.config.users = 2;
        r.labels.insert("host".into(), format!("host-{rank}"));
        r.fill_totals();
        r
    }

    /// Rank 0's work for 64 ranks: their results parsed from the JSON the ranks
    /// send and merged. The time it prints is in BENCHMARKS.md (`cargo test -p dbio-cli
    /// sixty_four -- --nocapture`); a test does not judge time.
    #[test]
    fn sixty_four_ranks_merge_into_one_result() {
        let parts: Vec<Vec<u8>> = (0..64)
            .map(|r| serde_json::to_vec(&rank_result(r)).unwrap())
            .collect();
        let bytes: usize = parts.iter().map(Vec::len).sum();
        let t0 = Instant::now();
        let runs: Vec<RunResult> = parts
            .iter()
            .map(|b| serde_json::from_slice(b).unwrap())
            .collect();
        let parsed = t0.elapsed();
        let merged = merge(&runs, false).unwrap();
        let took = t0.elapsed();
        eprintln!(
            "64 ranks, {} KiB of JSON: parsed in {:.1} ms, parsed and merged in {:.1} ms",
            bytes / 1024,
            parsed.as_secs_f64() * 1e3,
            took.as_secs_f64() * 1e3
        );
        assert_eq!(merged.ranks.len(), 64);
        assert_eq!(merged.ios, 64 * 200_000);
        assert_eq!(merged.config.users, 128);
    }
}
