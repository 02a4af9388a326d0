//! `mpirun -n N dbio calibrate ...`: one rank of a calibration over several
//! hosts. Each rank calibrates its own part of the data set; the levels of
//! the ramps start on every rank together, and after each level rank 0
//! merges the ranks' recorders exactly and hands the total back to all, so
//! that every rank takes the same decisions (next level, knee, cap) on the
//! total load.

use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Context;
use dbio_experiment::{calibrate_in_step, ExperimentError, Step};
use dbio_mpi::World;
use dbio_report::AnyResult;
use dbio_stats::{CpuUsage, RawRecorder, Recorder};
use serde_json::{json, Value};

use crate::cmd_calibrate::Args;
use crate::common::{self, EXIT_INTERRUPTED};
use crate::mpi_run::rank_target;

/// Runs this rank's part; rank 0 writes the result. An error on one rank
/// ends the whole job (MPI_Abort).
pub fn main(args: &Args, world: World) -> anyhow::Result<i32> {
    match rank_part(args, &world) {
        Ok(code) => {
            world.finalize()?;
            Ok(code)
        }
        Err(e) => {
            eprintln!("dbio: rank {} of {}: {e:#}", world.rank(), world.size());
            world.abort(2)
        }
    }
}

fn rank_part(args: &Args, world: &World) -> anyhow::Result<i32> {
    if world.is_root() {
        args.output.check()?;
    }
    anyhow::ensure!(!args.time().is_zero(), "--time must be longer than zero");
    let stop = common::stop_flag();
    let base = args
        .storage
        .target
        .clone()
        .unwrap_or_else(common::default_target);
    let name = rank_target(&base, world.rank(), args.storage.nfs.oranfstab.as_deref())?;
    let storage = args.storage.open_at(&name, "calibrate", stop)?;
    let stopped = storage.is_none() || stop.load(Ordering::Relaxed);
    let (false, Some(storage)) = (world.any(stopped)?, storage) else {
        if world.is_root() {
            eprintln!("dbio: interrupted before calibration started");
        }
        return Ok(EXIT_INTERRUPTED);
    };
    let mut spec = args.spec(&storage);
    spec.seed ^= world.rank() as u64;
    // The curve's lines go to stderr, from rank 0 only.
    let print = |line: &str| eprintln!("{line}");
    let progress: Option<&(dyn Fn(&str) + Sync)> = world.is_root().then_some(&print);
    let mut step = InStep { world };
    let mut result = calibrate_in_step(&spec, stop, progress, &mut step)?;
    if !world.is_root() {
        return Ok(if result.interrupted {
            EXIT_INTERRUPTED
        } else {
            0
        });
    }
    result.target = base.display().to_string();
    result.labels = args.label.labels();
    result
        .labels
        .insert("ranks".into(), world.size().to_string());
    let interrupted = result.interrupted;
    let result = AnyResult::Calibrate(result);
    print!("{}", dbio_report::terminal(&result));
    common::wrote(dbio_report::write_outputs(&result, &args.output.outputs())?);
    Ok(if interrupted { EXIT_INTERRUPTED } else { 0 })
}

/// [`Step`] over the MPI world.
struct InStep<'a> {
    world: &'a World,
}

fn mpi_err(e: impl std::fmt::Display) -> ExperimentError {
    ExperimentError::Config(format!("calibrating in step: {e}"))
}

impl Step for InStep<'_> {
    fn processes(&self) -> u32 {
        self.world.size() as u32
    }

    fn agree(&mut self, code: u8) -> Result<u8, ExperimentError> {
        self.world.max_u8(code).map_err(mpi_err)
    }

    fn total(
        &mut self,
        level: Recorder,
        measured: Duration,
        cpu: CpuUsage,
    ) -> Result<(Recorder, Duration, CpuUsage), ExperimentError> {
        let part =
            json!({ "raw": level.to_raw(), "measured_s": measured.as_secs_f64(), "cpu": cpu });
        let bytes = serde_json::to_vec(&part).map_err(mpi_err)?;
        let parts = self.world.gather_bytes(&bytes).map_err(mpi_err)?;
        let total = match parts {
            Some(parts) => merge_parts(&parts).map_err(mpi_err)?,
            None => Vec::new(),
        };
        let total = self.world.broadcast_bytes(&total).map_err(mpi_err)?;
        let (raw, measured_s, cpu) = read_part(&total).map_err(mpi_err)?;
        let recorder = Recorder::from_raw(&raw).map_err(mpi_err)?;
        Ok((recorder, Duration::from_secs_f64(measured_s), cpu))
    }
}

/// One level's part of a rank (or the total): recorder, time, CPU.
fn read_part(bytes: &[u8]) -> anyhow::Result<(RawRecorder, f64, CpuUsage)> {
    let mut v: Value = serde_json::from_slice(bytes)?;
    let raw = serde_json::from_value(v["raw"].take()).context("raw")?;
    let measured = v["measured_s"].as_f64().context("measured_s")?;
    let cpu = serde_json::from_value(v["cpu"].take()).context("cpu")?;
    Ok((raw, measured.max(0.0), cpu))
}

/// The ranks' parts of a level as one: recorders merged exactly, the
/// longest time, CPU summed.
fn merge_parts(parts: &[Vec<u8>]) -> anyhow::Result<Vec<u8>> {
    let mut raw = RawRecorder::default();
    let mut measured = 0.0f64;
    let mut cpu = CpuUsage::default();
    for (rank, p) in parts.iter().enumerate() {
        let (r, m, c) = read_part(p).with_context(|| format!("level result of rank {rank}"))?;
        raw.merge(&r)?;
        measured = measured.max(m);
        cpu.user_s += c.user_s;
        cpu.system_s += c.system_s;
    }
    Ok(serde_json::to_vec(
        &json!({ "raw": raw, "measured_s": measured, "cpu": cpu }),
    )?)
}
