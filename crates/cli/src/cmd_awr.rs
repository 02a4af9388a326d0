//! `dbio awr`: Oracle AWR text reports turned into observations `dbio compare` takes.

use std::path::PathBuf;

use anyhow::bail;
use dbio_compare::awr::import;
use dbio_compare::inputs::{ObservationFile, OBSERVATIONS_KIND};

#[derive(clap::Args)]
#[command(
    about = "Read Oracle AWR text reports into results that `dbio compare` takes",
    long_about = "Read a directory of Oracle AWR text reports (awrrpt.sql output, 11g to 19c) and \
        turn each into an observation: physical I/O requests and MB per second from the Load \
        Profile, and per I/O wait event (User I/O, System I/O, Commit) the average wait and waits \
        per second from the top foreground events; wait event histograms where present. \
        --group names each report's configuration, user load and repeat from its path under DIR \
        with a regular expression and its named groups config (required), users and repeat, so \
        that the runs of a SLOB sweep compare without running anything again. A report that \
        cannot be read is named with its line and what was expected there; the others go on \
        (exit status 1 then).\n\n\
        Example:\n  dbio awr reports/ --group '(?P<config>[A-Z]+)/awr_(?P<users>\\d+)_(?P<repeat>\\d+)\\.txt' \
        --json awr.json\n  dbio compare awr.json --baseline NFS"
)]
pub struct Args {
    /// Directory of AWR text reports (searched recursively)
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Regular expression on each report's path under DIR, with named groups config,
    /// users and repeat
    #[arg(long, value_name = "REGEX")]
    group: String,
    /// Write the observations to FILE (for `dbio compare`)
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

pub fn main(args: Args) -> anyhow::Result<i32> {
    let group = regex::Regex::new(&args.group).map_err(|e| {
        anyhow::anyhow!(
            "--group: not a regular expression: {}",
            e.to_string().lines().last().unwrap_or("")
        )
    })?;
    anyhow::ensure!(args.dir.is_dir(), "{}: not a directory", args.dir.display());
    let got = import(&args.dir, &group)?;
    for p in &got.problems {
        eprintln!("dbio: awr: {p}");
    }
    if !got.unmatched.is_empty() {
        let shown: Vec<&str> = got.unmatched.iter().take(3).map(String::as_str).collect();
        eprintln!(
            "dbio: awr: {} files did not match --group (e.g. {})",
            got.unmatched.len(),
            shown.join(", ")
        );
    }
    if got.observations.is_empty() {
        bail!("no AWR report read under {}", args.dir.display());
    }
    let mut t = dbio_report::Table::new(&[
        "<report",
        "<config",
        "users",
        "repeat",
        "IOPS",
        "MB/s",
        "<top I/O wait",
    ]);
    for o in &got.observations {
        // The I/O wait with the most waits per second.
        let top = o
            .metrics
            .iter()
            .filter_map(|(k, v)| Some((k.strip_suffix(" iops")?, *v)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .and_then(|(e, _)| Some((e, o.metrics.get(&format!("{e} mean_us"))?)))
            .map_or("-".into(), |(e, v)| format!("{e} {v:.0} us"));
        let figure = |k: &str| o.metrics.get(k).map_or("-".into(), |v| format!("{v:.0}"));
        t.row(vec![
            o.source
                .strip_prefix(&format!("{}/", args.dir.display()))
                .unwrap_or(&o.source)
                .to_string(),
            o.config.clone(),
            o.load.to_string(),
            o.repeat.map_or("-".into(), |r| r.to_string()),
            figure("iops"),
            figure("mbps"),
            top,
        ]);
    }
    print!("{}", t.text(""));
    if let Some(path) = &args.json {
        let file = ObservationFile {
            kind: OBSERVATIONS_KIND.into(),
            format_version: 1,
            observations: got.observations,
        };
        let text = serde_json::to_string_pretty(&file)? + "\n";
        dbio_report::write_atomic(path, text.as_bytes())?;
        crate::common::wrote(vec![path.clone()]);
    }
    Ok(if got.problems.is_empty() { 0 } else { 1 })
}
