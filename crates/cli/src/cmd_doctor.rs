//! `dbio doctor`: the storage pitfalls of a target (and an Oracle parameter
//! file), one line per finding, like a linter.

use std::path::PathBuf;

use anyhow::Context;
use dbio_diag::doctor::{check_target, parse_init_ora, Checkup, Severity};
use dbio_diag::doctor_nfs::Cluster;

#[derive(clap::Args)]
#[command(
    about = "Check a target (and an Oracle parameter file) for storage pitfalls",
    long_about = "Check a target directory for the storage pitfalls field reports name: data \
        files that copy on write (btrfs without chattr +C), a copy-on-write file system above \
        80% full, ZFS recordsize other than 8K for data files or under 128K for redo and \
        logbias=latency on data files (with the zfs tool), data files and redo logs on one \
        file system (info), fragmented data files, \
        O_DIRECT refused, the I/O scheduler and queue depth of the devices, and on kernel NFS \
        mounts Oracle's documented Linux options for data files (hard, tcp, timeo=600, rsize \
        and wsize at least 32768, vers=3, actimeo=0 only for RAC: cluster_database=true in \
        --init-ora), one connection (no nconnect), rsize/wsize under dbio's advised 1 MiB \
        (info) and sunrpc.tcp_max_slot_table_entries under 128; each NFS finding names its \
        source (Oracle's note or guide, nfs(5), the kernel's documentation). With --init-ora: \
        filesystemio_options not SETALL, parallel_max_servers above twice the cores (the \
        CALIBRATE_IO oversubscription).\n\nOne line per finding: \
        severity, check, what was found, why it matters, and the fix; then how many checks \
        ran and passed (--verbose: one `ok[CHECK]` line for each that passed). Exit code 0 when there \
        is no warning or error, 1 when there is one (info lines do not count), 2 when the \
        checks could not run.\n\nExample: dbio doctor --target /data/dbio --init-ora \
        ./initORCL.ora"
)]
pub struct Args {
    /// Directory of the data files (a dbio data set or a database's) [default: the default
    /// data set]
    #[arg(long, value_name = "DIR")]
    target: Option<PathBuf>,
    /// An Oracle parameter file (init.ora, or a pfile made from an spfile), or an AWR
    /// report, text or HTML (its "init.ora Parameters" section), to check
    #[arg(long, value_name = "FILE")]
    init_ora: Option<PathBuf>,
    /// CPUs of the database host, for the parameter checks [default: this machine's]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=65536))]
    cores: Option<u32>,
    /// Print the findings as JSON instead of lines
    #[arg(long)]
    json: bool,
    /// Also list every check that passed, one line each
    #[arg(long, short)]
    verbose: bool,
}

pub fn main(args: Args) -> anyhow::Result<i32> {
    let target = args.target.unwrap_or_else(crate::common::default_target);
    let params = match &args.init_ora {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("--init-ora {}", p.display()))?;
            // An AWR report carries the parameters in its "init.ora Parameters" section.
            Some(if text.contains("WORKLOAD REPOSITORY") {
                dbio_sources::awr::parameters(&text)
            } else {
                parse_init_ora(&text)
            })
        }
        None => None,
    };
    // RAC or not decides the NFS attribute cache check.
    let cluster = params.as_deref().map_or(Cluster::Unknown, Cluster::of);
    let mut up = check_target(&target, cluster)?;
    if let Some(params) = &params {
        let cores = args.cores.map(|c| c as usize).unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        });
        up.params(params, cores);
    }
    up.findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    if args.json {
        let doc = serde_json::json!({
            "target": target.display().to_string(),
            "findings": up.findings,
            "checks": up.ran,
            "passed": up.passed().iter().map(|c| &c.check).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!(
            "{}",
            render(&up, &target.display().to_string(), args.verbose)
        );
    }
    Ok(i32::from(
        up.findings.iter().any(|f| f.severity >= Severity::Warning),
    ))
}

fn render(up: &Checkup, target: &str, verbose: bool) -> String {
    let mut out = String::new();
    for f in &up.findings {
        out.push_str(&format!(
            "{}[{}]: {}: {} Fix: {}\n",
            f.severity.name(),
            f.check,
            f.found,
            f.why,
            f.fix
        ));
    }
    let passed = up.passed();
    if verbose {
        for c in &passed {
            out.push_str(&format!("ok[{}]: {}\n", c.check, c.looked_at));
        }
    }
    let bad = up
        .findings
        .iter()
        .filter(|f| f.severity >= Severity::Warning)
        .count();
    let checks = format!(
        "{} of {} passed{}",
        passed.len(),
        dbio_report::fmt_count(up.ran.len() as u64, "check"),
        if verbose {
            ""
        } else {
            " (--verbose lists them)"
        }
    );
    out.push_str(&if bad == 0 {
        format!("{target}: no problems found; {checks}\n")
    } else {
        format!(
            "{target}: {}; {checks}\n",
            dbio_report::fmt_count(bad as u64, "problem")
        )
    });
    out
}
