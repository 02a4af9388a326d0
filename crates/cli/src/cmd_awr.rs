//! `dbio awr`: Oracle AWR reports (text or HTML) turned into observations `dbio compare`
//! takes, and shown section by section.

use std::path::PathBuf;

use anyhow::bail;
use dbio_compare::awr_import::import;
use dbio_compare::inputs::{ObservationFile, OBSERVATIONS_KIND};
use dbio_sources::awr::AwrReport;

#[derive(clap::Args)]
#[command(
    about = "Read Oracle AWR reports (text or HTML) into results that `dbio compare` takes",
    long_about = "Read a directory of Oracle AWR reports (awrrpt.sql output, text or HTML, 11.2 to \
        19c, PDB reports too) and turn each into an observation: I/O requests and MB per second \
        (from the Load Profile, else the Instance Activity Stats; never from blocks), and per I/O \
        wait event (User I/O, System I/O, Commit; background System I/O events too) the mean wait \
        and waits per second. The mean is total wait time over waits or the Avg wait column, \
        whichever the report prints more precisely (11g's Avg column is whole milliseconds). \
        Wait event histograms (11g ms, 12c detail, 19c us tables merged) become the same buckets \
        as dbio's own. --detail shows each report's Load Profile, events, IOStat, histograms and \
        tablespace I/O; --model writes all of it as JSON. \
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
    /// Show each report section by section (the default when one report is read)
    #[arg(long)]
    detail: bool,
    /// Write every report read, whole (events, load profile, IOStat, histograms, file
    /// I/O), to FILE as JSON
    #[arg(long, value_name = "FILE")]
    model: Option<PathBuf>,
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
    for (o, r) in got.observations.iter().zip(&got.reports) {
        // The foreground I/O wait with the most waits.
        let top = r
            .events
            .iter()
            .filter(|e| matches!(e.wait_class.as_str(), "User I/O" | "System I/O" | "Commit"))
            .filter_map(|e| Some((e, e.waits?, e.mean_wait_us?)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map_or("-".into(), |(e, _, mean)| {
                format!("{} {}", e.event, micros(mean))
            });
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
    if args.detail || got.reports.len() == 1 {
        for (o, r) in got.observations.iter().zip(&got.reports) {
            print!("\n{}", detail(&o.source, r));
        }
    }
    if let Some(path) = &args.model {
        let reports: Vec<serde_json::Value> = got
            .observations
            .iter()
            .zip(&got.reports)
            .map(|(o, r)| serde_json::json!({ "source": o.source, "report": r }))
            .collect();
        let text = serde_json::to_string_pretty(&reports)? + "\n";
        dbio_report::write_atomic(path, text.as_bytes())?;
    }
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

/// A wait in the unit that reads best: "21.0 us", "4.96 ms", "52.9 s".
fn micros(us: f64) -> String {
    if us < 10.0 {
        format!("{us:.2} us")
    } else if us < 1000.0 {
        format!("{us:.1} us")
    } else if us < 1e6 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{:.1} s", us / 1e6)
    }
}

/// A histogram bound as Oracle titles its power-of-two buckets: 512us, 1ms (1024 us),
/// 2s (2048 ms).
fn bound(us: u64) -> String {
    match us {
        u64::MAX => "inf".into(),
        0..1024 => format!("{us}us"),
        1024..1_048_576 => format!("{}ms", us as f64 / 1024.0),
        _ => format!("{}s", us as f64 / 1_048_576.0),
    }
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.decimals$}"))
}

/// One report, section by section.
fn detail(source: &str, r: &AwrReport) -> String {
    let mut out = format!(
        "{source}: {} ({}), release {}, snapshots {}-{}, {:.0} s\n",
        r.db_name,
        r.instance,
        r.release.as_deref().unwrap_or("?"),
        r.begin_snap.map_or("?".into(), |s| s.to_string()),
        r.end_snap.map_or("?".into(), |s| s.to_string()),
        r.elapsed_s
    );
    let lp = &r.load_profile;
    out += &format!(
        "  Load Profile: reads {}/s ({} MiB/s), writes {}/s ({} MiB/s), from the {}; \
         blocks read {}/s, written {}/s; redo {} B/s; logical/physical reads {}\n",
        opt(lp.read_iops, 1),
        opt(lp.read_mib_s, 1),
        opt(lp.write_iops, 1),
        opt(lp.write_mib_s, 1),
        lp.requests_from
            .as_deref()
            .unwrap_or("report (no request figures)"),
        opt(lp.physical_read_blocks, 1),
        opt(lp.physical_write_blocks, 1),
        opt(lp.redo_bytes, 0),
        opt(lp.logical_to_physical, 1),
    );
    let mut t = dbio_report::Table::new(&[
        "<event",
        "<class",
        "waits",
        "time s",
        "mean",
        "+-",
        "<mean from",
    ]);
    let io = |e: &&dbio_sources::awr::WaitEvent| {
        matches!(e.wait_class.as_str(), "User I/O" | "System I/O" | "Commit")
    };
    let rows = r.events.iter().filter(io).map(|e| (e, ""));
    let bg = r.background_events.iter().filter(io).map(|e| (e, " (bg)"));
    for (e, tag) in rows.chain(bg) {
        t.row(vec![
            format!("{}{tag}", e.event),
            e.wait_class.clone(),
            opt(e.waits, 0),
            format!("{:.1}", e.total_wait_s),
            e.mean_wait_us.map_or("-".into(), micros),
            e.mean_error_us.map_or("-".into(), micros),
            e.mean_source.map_or("-", |s| s.label()).to_string(),
        ]);
    }
    out += &format!("  I/O wait events:\n{}", t.text("    "));
    for (title, rows) in [
        ("by Function", &r.io_by_function),
        ("by Filetype", &r.io_by_filetype),
    ] {
        if rows.is_empty() {
            continue;
        }
        let mut t = dbio_report::Table::new(&[
            "<name",
            "read req/s",
            "read MiB/s",
            "write req/s",
            "write MiB/s",
            "waits",
            "avg wait",
            "small read",
            "large read",
        ]);
        for s in rows.iter() {
            t.row(vec![
                s.name.clone(),
                opt(s.read_reqs_s, 2),
                opt(s.read_mib_s, 3),
                opt(s.write_reqs_s, 2),
                opt(s.write_mib_s, 3),
                opt(s.waits, 0),
                s.avg_wait_us.map_or("-".into(), micros),
                s.small_read_us.map_or("-".into(), micros),
                s.large_read_us.map_or("-".into(), micros),
            ]);
        }
        out += &format!("  IOStat {title}:\n{}", t.text("    "));
    }
    let shown: Vec<_> = r
        .histograms
        .iter()
        .filter(|(e, _)| {
            r.events.iter().chain(&r.background_events).any(|x| {
                &x.event == *e
                    && matches!(x.wait_class.as_str(), "User I/O" | "System I/O" | "Commit")
            })
        })
        .collect();
    if !shown.is_empty() {
        out += "  Wait event histograms (% of waits per bucket, by upper bound):\n";
        for (event, h) in shown {
            let buckets: Vec<String> = h
                .buckets
                .iter()
                .filter(|b| b.pct > 0.0)
                .map(|b| {
                    let upper = bound(b.upper_us);
                    format!("<{upper} {:.1}", b.pct)
                })
                .collect();
            out += &format!("    {event}: {}\n", buckets.join(", "));
        }
    }
    if !r.tablespaces.is_empty() {
        let mut t = dbio_report::Table::new(&[
            "<tablespace",
            "reads/s",
            "avg read",
            "blocks/read",
            "writes/s",
        ]);
        for f in r.tablespaces.iter().take(10) {
            t.row(vec![
                f.tablespace.clone(),
                opt(f.reads_s, 0),
                f.avg_read_us.map_or("-".into(), micros),
                opt(f.blocks_per_read, 2),
                opt(f.writes_s, 0),
            ]);
        }
        let more = r.tablespaces.len().saturating_sub(10);
        let more = if more > 0 {
            format!(" ({more} more in --model)")
        } else {
            String::new()
        };
        out += &format!("  Tablespace IO{more}:\n{}", t.text("    "));
    }
    out
}
