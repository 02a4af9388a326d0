//! `dbio compare`: the statistics people compute by hand between configurations.

use std::path::PathBuf;

use anyhow::bail;
use dbio_compare::inputs::read_sets;
use dbio_compare::interleaved::Interleaved;
use dbio_compare::{compare, Options};
use dbio_report::comparison::TextStyle;

use crate::common::OutputArgs;

/// What `--` between inputs becomes before option parsing (which would otherwise take
/// only the first `--` and drop the others): a value no file name can be.
pub const SET_BREAK: &str = "\u{1}--";

#[derive(clap::Args)]
#[command(
    about = "Compare configurations: figures over repeats, impact against a baseline, significance",
    long_about = "Compare configurations the way the field does by hand, with the statistics done \
        right, and say at once which is better. The report opens with a verdict per configuration \
        against the baseline: for IOPS, MB/s and the mean latency of every I/O class, how many \
        times better or worse (\"14.7x better\", \"worse by 12%\", oriented by the metric: more \
        throughput and less latency are better), its 95% interval, the p-value and the test that \
        decided; better in green, worse in red, within noise in grey. Then every figure (mean, \
        p50 to p99 latency per class, CPU per I/O) over the repeats: mean, standard deviation, \
        min, max and a 95% confidence interval.\n\n\
        The test: the runs of a sweep ran interleaved, repeat by repeat, so drift of the machine \
        or the storage moves both runs of a repeat alike; they are tested as pairs, on the \
        per-repeat ratios (the sweep's manifest, sweep.json, says which results are its runs: \
        both configurations need the same repeats). The paired t-test on the logarithms of the \
        ratios with 5 or more pairs; Wilcoxon's signed-rank test where fewer pairs, skew or an \
        outlier (a stalled run) call for it and it can reach the level; where it cannot (5 pairs \
        never reach 5%), the paired t-test again, its assumption stated. Other runs (sets given \
        by hand, AWR imports) are independent samples: Welch's t-test with 5 or more repeats a \
        side; the Mann-Whitney U rank test where fewer repeats, skew or an outlier call for it \
        and it can reach the level; else Welch's t-test, its assumption of normally distributed \
        repeats stated (3 repeats a side can never reach 5%). A difference the test cannot tell \
        from the noise is \"within noise\"; a single run on a side is untested. Repeats pair by \
        number for per-repeat impacts (CSV, JSON); unequal repeats are compared by their means, \
        with a note.\n\n\
        The charts show the latency of single-block reads (\"db file sequential read\") where \
        the runs have them, else of the class with the largest share of I/O time; --class \
        chooses another. Runs that differ in something their options do not explain (dbio \
        version or commit, engine, mount, NFS version, rsize/wsize, connections, paths) are \
        warned about; --strict refuses them.\n\n\
        Inputs: a sweep directory (`dbio sweep --out DIR`), result files of `dbio run` or `dbio \
        calibrate`, directories of them, observation files (`dbio awr --json`), or PostgreSQL \
        captures (`dbio pg capture --out FILE`). Each result names its configuration by its \
        `config` label (sweeps set it), else by its directory; a capture by its file name \
        without the extension. Sets separated by `--` are one configuration each, named after \
        their directories.\n\n\
        A capture's figures are a run's for the same I/O, so that production and a run of its \
        replay compare: per class (single-block-read or multiblock-read, redo-write, dbwr-write) \
        IOPS and MB/s, and the mean latency where PostgreSQL timed it (track_io_timing, \
        track_wal_io_timing; block writes, copies into the page cache, never); its load is the \
        most client sessions seen, the replay's users. A capture with a reset or restart \
        between its snapshots is refused.\n\n\
        Examples:\n  dbio compare results/ --baseline knfs --html cmp.html --md cmp.md\n  \
        dbio compare a/*.json -- b/*.json\n  dbio compare awr.json --baseline NFS\n  \
        dbio compare prod.json -- here/*.json"
)]
pub struct Args {
    /// Results to compare: sweep directories, result files, directories of them,
    /// observation files or PostgreSQL captures; `--` between sets makes each set one
    /// configuration
    #[arg(value_name = "RESULTS", required = true)]
    inputs: Vec<PathBuf>,
    /// The configuration the others are measured against [default: the first one read]
    #[arg(long, value_name = "CONFIG")]
    baseline: Option<String>,
    /// Significance level of the tests (two-sided)
    #[arg(long, value_name = "LEVEL", default_value_t = 0.05, value_parser = alpha_arg)]
    alpha: f64,
    /// The I/O class whose latency the charts show, e.g. redo-write [default:
    /// single-block-read where the runs have it, else the class with the most I/O time]
    #[arg(long, value_name = "CLASS")]
    class: Option<String>,
    /// Refuse to compare runs that differ in something their options do not explain
    /// (dbio version or commit, engine, mount, NFS session) instead of warning
    #[arg(long)]
    strict: bool,
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
            class: args.class,
            interleaved: Interleaved::find(&inputs.observations),
        },
    )?;
    if args.strict && !cmp.warnings.is_empty() {
        bail!(
            "--strict: the runs differ in what their options do not explain: {}",
            cmp.warnings.join("; ")
        );
    }
    for w in &cmp.warnings {
        eprintln!("dbio: warning: {w}");
    }
    let style = terminal_style();
    print!(
        "{}",
        dbio_report::comparison::comparison_terminal(&cmp, style)
    );
    let files = dbio_report::comparison::write_comparison(&cmp, &args.output.outputs())?;
    crate::common::wrote(files);
    Ok(())
}

/// The width to fit (COLUMNS, else the terminal's, else 100) and whether to colour the
/// verdicts (a terminal, and NO_COLOR unset).
fn terminal_style() -> TextStyle {
    use std::io::IsTerminal;
    let tty = std::io::stdout().is_terminal();
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| *c > 0);
    let width = columns
        .or_else(|| tty.then(window_columns).flatten())
        .unwrap_or(100);
    TextStyle {
        width,
        color: tty && std::env::var_os("NO_COLOR").is_none(),
    }
}

/// Columns of the terminal on stdout (TIOCGWINSZ).
fn window_columns() -> Option<usize> {
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ fills the winsize we own; stdout is a valid descriptor.
    let rc = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) };
    (rc == 0 && ws.ws_col > 0).then_some(ws.ws_col as usize)
}
