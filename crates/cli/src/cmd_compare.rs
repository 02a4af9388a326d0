//! `dbio compare`: the statistics people compute by hand between configurations.

use std::path::PathBuf;

use anyhow::bail;
use dbio_compare::inputs::read_sets;
use dbio_compare::{compare, Options};

use crate::common::OutputArgs;

/// What `--` between inputs becomes before option parsing (which would otherwise take
/// only the first `--` and drop the others): a value no file name can be.
pub const SET_BREAK: &str = "\u{1}--";

#[derive(clap::Args)]
#[command(
    about = "Compare configurations: figures over repeats, impact against a baseline, significance",
    long_about = "Compare configurations the way the field does by hand, with the statistics done \
        right. For each configuration and user load: IOPS, MB/s, CPU per I/O and latency per I/O \
        class (mean, p50, p90, p95, p99) over the repeats, with mean, standard deviation, min, max \
        and a 95% confidence interval. For each configuration against the baseline: impact % = \
        100 x (baseline - other) / baseline per repeat (repeats paired by number), the throughput \
        ratio, and a two-sided test: Welch's t-test, or the Mann-Whitney U rank test where a side \
        has fewer than 5 repeats, is skewed or has an outlier (a stalled run). A difference the test cannot tell from the noise of \
        the repeats is called \"within noise\"; too few repeats to ever reach the level are called \
        so.\n\n\
        Inputs: a sweep directory (`dbio sweep --out DIR`), result files of `dbio run` or `dbio \
        calibrate`, directories of them, or observation files (`dbio awr --json`). Each result \
        names its configuration by its `config` label (sweeps set it), else by its directory. \
        Sets separated by `--` are one configuration each, named after their directories.\n\n\
        Examples:\n  dbio compare results/ --baseline knfs --html cmp.html --md cmp.md\n  \
        dbio compare a/*.json -- b/*.json\n  dbio compare awr.json --baseline NFS"
)]
pub struct Args {
    /// Results to compare: sweep directories, result files, directories of them, or
    /// observation files; `--` between sets makes each set one configuration
    #[arg(value_name = "RESULTS", required = true)]
    inputs: Vec<PathBuf>,
    /// The configuration the others are measured against [default: the first one read]
    #[arg(long, value_name = "CONFIG")]
    baseline: Option<String>,
    /// Significance level of the tests (two-sided)
    #[arg(long, value_name = "LEVEL", default_value_t = 0.05, value_parser = alpha_arg)]
    alpha: f64,
    #[command(flatten)]
    output: OutputArgs,
}

fn alpha_arg(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(a) if a > 0.0 && a < 0.5 => Ok(a),
        _ => Err(format!(
            "{s:?}: a significance level between 0 and 0.5, e.g. 0.05"
        )),
    }
}

pub fn main(args: Args) -> anyhow::Result<()> {
    args.output.check()?;
    let mut sets: Vec<Vec<PathBuf>> = vec![Vec::new()];
    for p in args.inputs {
        if p.as_os_str() == SET_BREAK {
            sets.push(Vec::new());
        } else {
            sets.last_mut().expect("one set at least").push(p);
        }
    }
    if sets.iter().any(Vec::is_empty) {
        bail!("an empty set of results around `--`: give files or directories on both sides");
    }
    let inputs = read_sets(&sets)?;
    for s in &inputs.skipped {
        // A sweep directory holds its manifest; that is no news.
        if !s.contains("\"sweep\"") {
            eprintln!("dbio: skipped {s}");
        }
    }
    let cmp = compare(
        &inputs.observations,
        &Options {
            baseline: args.baseline,
            alpha: args.alpha,
        },
    )?;
    print!("{}", dbio_report::comparison::comparison_terminal(&cmp));
    dbio_report::comparison::write_comparison(&cmp, &args.output.outputs())?;
    Ok(())
}
