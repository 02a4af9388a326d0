//! `dbio verify DATASET`: reads back every block of a data set written with
//! `--verify` and checks it against the generation map kept beside it.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use dbio_engine::EngineKind;
use dbio_experiment::verify_map;
use dbio_storage::{Target, TargetError};
use dbio_workload::DatasetError;

use crate::common::{self, engine_arg, Progress, EXIT_INTERRUPTED};

/// Exit code when a block does not verify.
pub const EXIT_CORRUPT: i32 = 1;

#[derive(clap::Args)]
#[command(
    about = "Check every block of a data set written with --verify",
    long_about = "Read back every block of a data set written by `dbio run --verify` and check it \
        against the generation map kept beside it (dbio-verify.map): the block head (data set, \
        file, block number, write generation), the generation stamp of every sector and the \
        checksum. Blocks whose write was in flight when dbio stopped (even by kill -9) may hold \
        the old or the new generation; both are accepted and the map is settled. An nfs:// data \
        set is read through dbio's NFS client; its map lives for a run only, so there the \
        blocks' own consistency is checked (checksum, torn, misdirected), not their \
        generation.\n\nExit code: \
        0 when every block checks, 1 when one does not (the first bad blocks are listed: file, \
        block, what is wrong), 2 on bad input, 130 when interrupted.\n\nExample: dbio verify \
        /data/dbio"
)]
pub struct Args {
    /// Directory of the data set (the --target of the run), or an nfs:// URL
    #[arg(value_name = "DATASET")]
    dataset: PathBuf,
    /// I/O engine that reads the blocks: io_uring or psync
    #[arg(long, value_name = "ENGINE", default_value = "psync", value_parser = engine_arg)]
    engine: EngineKind,
    /// Read through the page cache instead of O_DIRECT
    #[arg(long)]
    buffered: bool,
    #[command(flatten)]
    nfs: crate::nfs_target::NfsArgs,
}

/// A manifest verify cannot read: say what can be done, not what `run` would do
/// with `--force-overwrite` (an option verify does not have).
fn not_a_data_set(e: TargetError, dir: &std::path::Path) -> anyhow::Error {
    let path = match &e {
        TargetError::Dataset(DatasetError::Foreign(path)) => path,
        TargetError::Dataset(DatasetError::TooLarge { path, .. }) => path,
        _ => return e.into(),
    };
    anyhow::anyhow!(
        "{path}: not a dbio data-set manifest (damaged, or not written by dbio): there is no \
         data set here to verify; `dbio run --verify --force-overwrite --target {}` makes a new \
         one, overwriting these files",
        dir.display()
    )
}

pub fn main(args: Args) -> anyhow::Result<i32> {
    let dir = &args.dataset;
    anyhow::ensure!(
        args.engine != EngineKind::Null,
        "--engine null: verify needs an engine that reads data (io_uring or psync)"
    );
    // An nfs:// data set (or one under an oranfstab mount point) is read
    // through dbio's NFS client; its generation map lives for a run only.
    let target = Target::open(dir, &args.nfs.options())?;
    common::print_notices(&target);
    let (ds, complete) = target.open_existing().map_err(|e| not_a_data_set(e, dir))?;
    if !complete {
        println!(
            "{}: creation of data set {:016x} did not finish; it holds no written blocks \
             to check and is created again on next use",
            dir.display(),
            ds.id
        );
        return Ok(0);
    }
    let engine = target.engine(args.engine)?;
    let stop = common::stop_flag();
    let mut progress = Progress::new();
    let check = verify_map::check(&ds, engine, !args.buffered, stop, &mut |done, total| {
        progress.show(done, total)
    })?;
    progress.end_line();
    common::print_notices(&target);
    let (counts, complete) = (check.counts, check.complete);
    println!(
        "{}: data set {:016x}: {} blocks checked in {:.1} s: lost {}, torn {}, misdirected {}, \
         checksum {}",
        dir.display(),
        ds.id,
        counts.blocks_checked,
        progress.elapsed().as_secs_f64(),
        counts.lost,
        counts.torn,
        counts.misdirected,
        counts.checksum
    );
    if !check.generations {
        println!(
            "write generations not checked (lost writes cannot be told): the generation map of \
             an nfs:// data set lives for a run only, whose final pass checks them"
        );
    }
    if counts.in_flight > 0 {
        println!(
            "{} blocks had a write in flight when dbio stopped; each holds the old or the new \
             generation, as it may",
            counts.in_flight
        );
    }
    for b in &counts.bad {
        println!(
            "  {} block {}: {} ({})",
            b.file,
            b.block,
            b.fault.name(),
            b.detail
        );
    }
    if counts.faults() > counts.bad.len() as u64 {
        println!("  ... {} more", counts.faults() - counts.bad.len() as u64);
    }
    if !complete || stop.load(Ordering::Relaxed) {
        println!("interrupted: not every block was checked");
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(if counts.faults() > 0 { EXIT_CORRUPT } else { 0 })
}
