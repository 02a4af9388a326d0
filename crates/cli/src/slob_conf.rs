//! `--slob-conf FILE`: a run's workload from a SLOB 2.5 slob.conf, shown as
//! a table before the run. Options given on the command line win. `dbio
//! replay --slob-conf` calls [`apply`] with its own `Args` the same way.

use std::collections::HashSet;
use std::path::Path;

use dbio_experiment::{RunOptions, SlobRow};
use dbio_sources::slob::SlobConf;

/// Sets `options` from the slob.conf at `path`, leaving alone the options of
/// `A` (the command's arguments) that the command line gave; with `show`,
/// prints the table, the notice and the warning on stderr.
pub fn apply<A: clap::Args>(
    path: &Path,
    options: &mut RunOptions,
    show: bool,
) -> anyhow::Result<()> {
    let conf = SlobConf::parse(path)?;
    let given = given_on_command_line::<A>();
    let rows = options.apply_slob(&conf, &|o| given.contains(o))?;
    if show {
        eprint!("{}", table(&conf, &rows));
        notices(&conf);
    }
    Ok(())
}

/// As [`apply`] for `dbio replay`, whose workload model decides the mix:
/// the settings it overrides are named in one notice line. Replay's
/// `--scale` multiplies production's load, so only `--size` wins over SCALE.
pub fn apply_to_replay<A: clap::Args>(
    path: &Path,
    options: &mut RunOptions,
    show: bool,
) -> anyhow::Result<()> {
    let conf = SlobConf::parse(path)?;
    let mut given = given_on_command_line::<A>();
    given.remove("--scale");
    let (rows, not_taken) = options.apply_slob_to_replay(&conf, &|o| given.contains(o))?;
    if show {
        eprint!("{}", table(&conf, &rows));
        if !not_taken.is_empty() {
            eprintln!(
                "note: {}: the workload model's rates and sizes decide the mix and pace \
                 the arrivals; not taken: {}",
                conf.path.display(),
                not_taken.join(", ")
            );
        }
        notices(&conf);
    }
    Ok(())
}

fn notices(conf: &SlobConf) {
    if let Some(n) = conf.not_io_notice() {
        eprintln!("note: {n}");
    }
    if let Some(w) = conf.unsupported_warning() {
        eprintln!("warning: {w}");
    }
}

/// The long options (`--update-pct`) the command line gave to the command
/// whose arguments are `A`. clap's derived arguments keep no trace of it, so
/// the command line is read again with the same definitions.
fn given_on_command_line<A: clap::Args>() -> HashSet<String> {
    let cmd = A::augment_args(clap::Command::new("dbio"));
    let ids: Vec<(String, String)> = cmd
        .get_arguments()
        .filter_map(|a| Some((a.get_id().to_string(), a.get_long()?.to_string())))
        .collect();
    // argv[0] is dbio; the subcommand's name stands in as the binary name.
    let Ok(m) = cmd.try_get_matches_from(std::env::args_os().skip(1)) else {
        return HashSet::new();
    };
    ids.into_iter()
        .filter(|(id, _)| m.value_source(id) == Some(clap::parser::ValueSource::CommandLine))
        .map(|(_, long)| format!("--{long}"))
        .collect()
}

/// The settings and what they became, one line each.
fn table(conf: &SlobConf, rows: &[SlobRow]) -> String {
    let width = rows.iter().map(|r| r.slob.len()).max().unwrap_or(0).min(60);
    let mut out = format!("{}, as dbio options:\n", conf.path.display());
    for r in rows {
        let dbio = match r.overridden_by {
            Some(o) => format!("{}: not taken, the command line's {o} wins", r.dbio),
            None => r.dbio.clone(),
        };
        out.push_str(&format!("  {:<width$}  {dbio}\n", r.slob));
    }
    out
}
