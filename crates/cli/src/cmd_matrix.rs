//! `dbio matrix`: Orion's grid of small random I/O against large I/O.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::ensure;
use dbio_experiment::{matrix, MatrixSpec, Shape};
use dbio_report::matrix::{csv_path, matrix_terminal, write_matrix, MatrixOutputs};
use dbio_workload::DatasetError;

use crate::common::{self, duration_arg, LabelArgs, StorageArgs, EXIT_INTERRUPTED};

#[derive(clap::Args)]
#[command(
    about = "Measure Orion's matrix: small random reads against large reads, each point at once",
    long_about = "Measure Orion's matrix: small random reads (one 8 KiB block, an OLTP's single-block \
        reads) and large random reads (1 MiB, scans and backups) run at the same time, each with \
        its own number of outstanding I/Os, and every point of the chosen shape is measured after \
        a warm-up: small IOPS and latency, large MB/s. Levels are 1, 2, 4, ... up to \
        --num-small and --num-large.\n\n\
        Shapes (Orion's -matrix): basic (small alone at each level, then large alone), detailed \
        (every combination, none included), row (large fixed at --large-at, small varied), col \
        (small fixed at --small-at, large varied), max (small varied with large at its maximum, \
        large varied with small at its maximum).\n\n\
        Output: the points; --csv PREFIX writes Orion's grids PREFIX_iops.csv, PREFIX_mbps.csv and \
        PREFIX_lat.csv (a row per large level, a column per small level); --html heatmaps.\n\n\
        Example: dbio matrix --target /data/dbio --matrix basic --html matrix.html"
)]
pub struct Args {
    #[command(flatten)]
    storage: StorageArgs,
    /// The matrix shape: basic, detailed, row, col or max
    #[arg(long = "matrix", value_name = "SHAPE", default_value = "basic", value_parser = shape_arg)]
    shape: Shape,
    /// Highest number of small I/Os outstanding
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=1024))]
    num_small: u32,
    /// Highest number of large I/Os outstanding
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=256))]
    num_large: u32,
    /// With --matrix row: the large I/Os outstanding [default: --num-large]
    #[arg(long, value_name = "N")]
    large_at: Option<u32>,
    /// With --matrix col: the small I/Os outstanding [default: --num-small]
    #[arg(long, value_name = "N")]
    small_at: Option<u32>,
    /// Measured time of each point (a warm-up of a fifth, at most 1 s, comes first)
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = duration_arg)]
    time_per_point: Duration,
    /// Write the result as JSON to FILE
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write Orion's grids to PREFIX_iops.csv, PREFIX_mbps.csv and PREFIX_lat.csv
    #[arg(long = "csv", value_name = "PREFIX")]
    csv_prefix: Option<PathBuf>,
    /// Write the result as Markdown to FILE
    #[arg(long, value_name = "FILE")]
    md: Option<PathBuf>,
    /// Write a self-contained HTML report with heatmaps to FILE
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    #[command(flatten)]
    label: LabelArgs,
}

fn shape_arg(s: &str) -> Result<Shape, String> {
    Shape::parse(s).ok_or_else(|| format!("{s:?}: expected basic, detailed, row, col or max"))
}

pub fn main(args: Args) -> anyhow::Result<i32> {
    let outputs = MatrixOutputs {
        json: args.json.clone(),
        csv_prefix: args.csv_prefix.clone(),
        md: args.md.clone(),
        html: args.html.clone(),
    };
    let csvs = args.csv_prefix.iter().map(|p| csv_path(p, "_iops.csv"));
    for p in [&args.json, &args.md, &args.html]
        .into_iter()
        .flatten()
        .cloned()
        .chain(csvs)
    {
        let dir = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        ensure!(
            dir.is_dir(),
            "{}: directory {} does not exist",
            p.display(),
            dir.display()
        );
    }
    let stop = common::stop_flag();
    let Some(storage) = args.storage.open("a matrix", stop)? else {
        eprintln!("dbio: {}", DatasetError::Interrupted);
        return Ok(EXIT_INTERRUPTED);
    };
    let spec = MatrixSpec {
        target: storage.name.clone(),
        dataset: storage.dataset.clone(),
        engine: storage.engine,
        direct: storage.direct,
        shape: args.shape,
        max_small: args.num_small,
        max_large: args.num_large,
        row_large: args.large_at.unwrap_or(args.num_large),
        col_small: args.small_at.unwrap_or(args.num_small),
        point: args.time_per_point,
        seed: 0x5eed,
    };
    let points = spec.points().len();
    let per_point =
        args.time_per_point.as_secs_f64() + (args.time_per_point.as_secs_f64() / 5.0).min(1.0);
    eprintln!(
        "{points} points of {:.1} s each (warm-up included): about {:.0} s",
        per_point,
        per_point * points as f64
    );
    let print = |line: &str| eprintln!("{line}");
    let mut result = matrix(&spec, stop, Some(&print))?;
    result.labels = args.label.labels();
    print!("{}", matrix_terminal(&result));
    common::wrote(write_matrix(&result, &outputs)?);
    Ok(if result.interrupted {
        EXIT_INTERRUPTED
    } else {
        0
    })
}
