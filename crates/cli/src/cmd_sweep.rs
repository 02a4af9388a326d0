//! `dbio sweep`: a planned experiment, each run a `dbio run` (or `calibrate`) process of
//! its own, its result kept in the sweep directory.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{bail, Context};
use dbio_experiment::sweep::{
    self, ConfigPlan, Executor, Manifest, Outcome, Plan, PlannedRun, Progress, Users,
};

use crate::common::{stop_flag_within, EXIT_INTERRUPTED, STOP_GRACE};

#[derive(clap::Args)]
#[command(
    about = "Run a planned experiment: configurations x user loads x repeats, interleaved, resumable",
    long_about = "Run a planned experiment: every configuration at every user load, repeated, the \
        configurations interleaved at each load, their order rotated and reversed by turns (each \
        comes after each other one as often), so that drift and what a run leaves behind fall \
        on all alike. Each run is a `dbio run` (or `dbio \
        calibrate`) of its own; its result goes to OUT/runs/CONFIG/uUSERS-rREPEAT.json, labelled \
        with configuration, users and repeat, and OUT/sweep.json records what is done. A sweep \
        stopped by Ctrl-C, a crash or a reboot continues with --resume, never redoing a finished \
        run. Then `dbio compare OUT` does the statistics.\n\n\
        The plan (TOML):\n\
        \x20 command = \"run\"        # or \"calibrate\"\n\
        \x20 users = \"1,2,4,8\"      # or \"1..16\", or [1, 2, 4]\n\
        \x20 repeats = 3\n\
        \x20 time = \"30s\"           # measured time of each run\n\
        \x20 warmup = \"5s\"          # load before the measurement starts\n\
        \x20 pause = \"2s\"           # idle time between runs\n\
        \x20 launcher = \"mpirun -n 4 --host a,b\"  # optional: each run over several hosts\n\
        \x20 [options]               # `dbio run` options for every configuration\n\
        \x20 profile = \"oltp\"\n\
        \x20 [[config]]\n\
        \x20 name = \"knfs\"\n\
        \x20 target = \"/mnt/nfs/dbio\"\n\
        \x20 before = \"./remount.sh\" # shell command run whenever the configuration changes\n\
        \x20 [[config]]\n\
        \x20 name = \"dnfs\"\n\
        \x20 target = \"nfs://10.0.0.2/export/dbio?version=3\"\n\
        \x20 conns = 8\n\n\
        Options are `dbio run` options by their long name (true for a flag, a list to repeat \
        one). For the simple case, flags instead of a file: --config NAME=OPTIONS per \
        configuration and --options for all, e.g.\n  dbio sweep --out r --users 1,4 --repeats 7 \
        --time 10s --options '--target /data/dbio --profile oltp' --config 'q1=--outstanding 1' \
        --config 'q8=--outstanding 8'\n\n\
        Examples:\n  dbio sweep --plan plan.toml --out results/\n  dbio sweep --resume --out \
        results/"
)]
pub struct Args {
    /// The plan (TOML); see above
    #[arg(long, value_name = "FILE", conflicts_with = "config")]
    plan: Option<PathBuf>,
    /// Directory for the results and the manifest (new or empty; with --resume, the sweep's)
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Continue the sweep in --out where it stopped; with --plan or --config, with a
    /// corrected plan (same runs; configurations with results keep their options)
    #[arg(long)]
    resume: bool,
    /// A configuration as NAME=OPTIONS (`dbio run` options), repeatable; instead of --plan
    #[arg(long, value_name = "NAME=OPTIONS")]
    config: Vec<String>,
    /// Options for every configuration given with --config
    #[arg(
        long,
        value_name = "OPTIONS",
        allow_hyphen_values = true,
        requires = "config"
    )]
    options: Option<String>,
    /// With --config: user loads, e.g. 1..16 or 1,2,4,8
    #[arg(long, value_name = "LIST", requires = "config")]
    users: Option<String>,
    /// With --config: repeats of each configuration and load
    #[arg(long, value_name = "N", requires = "config")]
    repeats: Option<u32>,
    /// With --config: measured time of each run
    #[arg(long, value_name = "DURATION", requires = "config")]
    time: Option<String>,
    /// With --config: load before each run's measurement starts
    #[arg(long, value_name = "DURATION", requires = "config")]
    warmup: Option<String>,
    /// With --config: idle time between runs
    #[arg(long, value_name = "DURATION", requires = "config")]
    pause: Option<String>,
    /// With --config: start each run through this command, e.g. 'mpirun -n 4 --host a,b'
    /// (each run then spans several hosts and gives one merged result)
    #[arg(long, value_name = "COMMAND", requires = "config")]
    launcher: Option<String>,
    /// With --config: `run` or `calibrate`
    #[arg(long, value_name = "COMMAND", requires = "config")]
    command: Option<String>,
}

/// Turns `--key value --flag` into plan options (a flag followed by another flag, or by
/// nothing, is `true`; a key given twice becomes a list).
fn options_map(
    text: &str,
    what: &str,
) -> anyhow::Result<std::collections::BTreeMap<String, toml::Value>> {
    let mut map = std::collections::BTreeMap::new();
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut i = 0;
    while i < words.len() {
        let Some(key) = words[i].strip_prefix("--").filter(|k| !k.is_empty()) else {
            bail!(
                "{what}: {:?} is not an option (expected --name [value])",
                words[i]
            );
        };
        let value = match words.get(i + 1) {
            Some(v) if !v.starts_with("--") => {
                i += 1;
                toml::Value::String(v.to_string())
            }
            _ => toml::Value::Boolean(true),
        };
        match map.remove(key) {
            None => {
                map.insert(key.to_string(), value);
            }
            Some(toml::Value::Array(mut a)) => {
                a.push(value);
                map.insert(key.to_string(), toml::Value::Array(a));
            }
            Some(old) => {
                map.insert(key.to_string(), toml::Value::Array(vec![old, value]));
            }
        }
        i += 1;
    }
    Ok(map)
}

fn plan_from_flags(args: &Args) -> anyhow::Result<Plan> {
    let mut configs = Vec::new();
    for c in &args.config {
        let Some((name, opts)) = c.split_once('=') else {
            bail!("--config {c:?}: expected NAME=OPTIONS, e.g. 'q8=--outstanding 8'");
        };
        configs.push(ConfigPlan {
            name: name.trim().to_string(),
            before: None,
            options: options_map(opts, &format!("--config {name}"))?,
        });
    }
    Ok(Plan {
        command: args.command.clone().unwrap_or_else(|| "run".into()),
        users: Users::Text(args.users.clone().unwrap_or_else(|| "1".into())),
        repeats: args.repeats.unwrap_or(3),
        time: args.time.clone().unwrap_or_else(|| "30s".into()),
        warmup: args.warmup.clone(),
        pause: args.pause.clone(),
        launcher: args.launcher.clone(),
        options: match &args.options {
            Some(o) => options_map(o, "--options")?,
            None => Default::default(),
        },
        configs,
    })
}

pub fn main(args: Args) -> anyhow::Result<i32> {
    // Each run of a sweep is a `dbio run` process of its own, which under
    // mpirun would find the rank's MPI environment and not its own job.
    anyhow::ensure!(
        !dbio_mpi::launched_by_mpirun(),
        "dbio sweep runs on one host and starts its runs itself: give it `--launcher 'mpirun -n N \
         ...'` (or `launcher = ...` in the plan) to run each run over several hosts"
    );
    // The run in flight gets its own grace to end and write its result first.
    let stop = stop_flag_within(2 * STOP_GRACE);
    let given = match &args.plan {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
            Some(Plan::from_toml(&text, &path.display().to_string())?)
        }
        None if !args.config.is_empty() => Some(plan_from_flags(&args)?),
        None => None,
    };
    // Every configuration's options are parsed by `dbio run`'s own parser before --out
    // is made or touched.
    let checked = match given {
        Some(plan) => {
            let plan = plan.check()?;
            sweep::check_arguments(&plan, run_line)?;
            Some(plan)
        }
        None => None,
    };
    let mut manifest = match (args.resume, checked) {
        (true, checked) => {
            let mut m = Manifest::load(&args.out)?;
            if let Some(plan) = checked {
                let changed = m.replan(&args.out, &plan)?;
                if !changed.is_empty() {
                    eprintln!("sweep: corrected plan for {}", changed.join(", "));
                }
            }
            m
        }
        (false, Some(plan)) => {
            warn_repeats(plan.plan.repeats);
            Manifest::create(&args.out, &plan)?
        }
        (false, None) => {
            bail!("nothing to run: give --plan FILE, --config NAME=OPTIONS, or --resume")
        }
    };
    let exe = std::env::current_exe().context("cannot find the dbio executable to run")?;
    let launcher: Vec<String> = manifest
        .plan
        .launcher
        .as_deref()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    let mut exec = Processes {
        exe,
        launcher,
        command: manifest.plan.command.clone(),
        out: args.out.clone(),
        stop,
    };
    let mut show = |p: &Progress| {
        eprintln!(
            "sweep: run {}/{}: {}, {}, repeat {} ({} done, elapsed {}, about {} left)",
            p.run.index + 1,
            p.total,
            p.run.config,
            plural(p.run.users),
            p.run.repeat,
            p.done,
            clock(p.elapsed),
            clock(p.left)
        );
    };
    let finished = sweep::execute(&args.out, &mut manifest, &mut exec, stop, &mut show)?;
    let out = args.out.display();
    if finished.interrupted {
        eprintln!(
            "sweep: stopped with {}/{} runs done; continue with: dbio sweep --resume --out {out}",
            finished.done, finished.total
        );
        return Ok(EXIT_INTERRUPTED);
    }
    eprintln!(
        "sweep: {}/{} runs done in {out}; compare them with: dbio compare {out}",
        finished.done, finished.total
    );
    Ok(0)
}

/// Says at plan time what `dbio compare` can conclude from so few repeats, and how many
/// it takes, before hours of runs. A sweep interleaves its configurations repeat by
/// repeat, so `compare` tests its repeats as pairs: the signed-rank test on the per-repeat
/// ratios, or the paired t-test on their logarithms.
fn warn_repeats(repeats: u32) {
    use dbio_compare::comparison::WELCH_MIN_REPEATS;
    use dbio_compare::statistics::smallest_signed_rank_p;
    let alpha = 0.05;
    let rank = (2..64)
        .find(|&n| smallest_signed_rank_p(n) <= alpha)
        .unwrap_or(64);
    let enough = WELCH_MIN_REPEATS.max(rank + 1);
    let n = repeats as usize;
    let why = if n < 2 {
        "no test can tell a difference from noise with one run a side".to_string()
    } else if n < rank {
        format!(
            "the signed-rank test can never reach the {}% level with fewer than {rank} pairs, \
             so `dbio compare` will rest its verdicts on the paired t-test, assuming normally \
             distributed log ratios",
            alpha * 100.0
        )
    } else if n < enough {
        format!(
            "the signed-rank test reaches the {}% level only when every pair goes one way",
            alpha * 100.0
        )
    } else {
        return;
    };
    eprintln!(
        "sweep: warning: {repeats} repeat{}: {why}; {enough} or more (--repeats {enough}, or \
         repeats = {enough} in the plan) let it check the repeats for skew and outliers",
        if repeats == 1 { "" } else { "s" }
    );
}

/// Whether `dbio COMMAND ARGS` parses (the parser `dbio run` itself uses), as one line.
fn run_line(command: &str, args: &[String]) -> Result<(), sweep::BadArguments> {
    use clap::error::{ContextKind, ErrorKind};
    let line = ["dbio", command]
        .into_iter()
        .map(String::from)
        .chain(args.iter().cloned());
    let Err(e) = <crate::Cli as clap::Parser>::try_parse_from(line) else {
        return Ok(());
    };
    let arg = e.get(ContextKind::InvalidArg).map(|a| a.to_string());
    Err(match (e.kind(), arg) {
        (ErrorKind::UnknownArgument, Some(option)) => sweep::BadArguments::UnknownOption {
            option,
            command: command.to_string(),
        },
        _ => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default();
            sweep::BadArguments::Refused(first.trim_start_matches("error: ").to_string())
        }
    })
}

fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s / 60 % 60)
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// Runs each run as a dbio process and each hook through the shell.
struct Processes {
    exe: PathBuf,
    /// Words each run's command line starts with (e.g. mpirun and its options).
    launcher: Vec<String>,
    command: String,
    out: PathBuf,
    stop: &'static AtomicBool,
}

impl Executor for Processes {
    fn before(&mut self, command: &str, run: &PlannedRun) -> Result<(), sweep::HookError> {
        eprintln!("sweep: before {}: {command}", run.config);
        let status = Command::new("/bin/sh")
            .args(["-c", command])
            .env("DBIO_SWEEP_CONFIG", &run.config)
            .env("DBIO_SWEEP_USERS", run.users.to_string())
            .env("DBIO_SWEEP_REPEAT", run.repeat.to_string())
            .status()
            .map_err(|source| sweep::HookError::Spawn {
                shell: "/bin/sh",
                source,
            })?;
        if status.success() {
            Ok(())
        } else {
            Err(sweep::HookError::Exit {
                command: command.to_string(),
                status,
            })
        }
    }

    fn run(&mut self, run: &PlannedRun, args: &[String], result: &Path) -> Outcome {
        // The run's own report goes to a log beside its result.
        let log_path = self.out.join(run.file()).with_extension("log");
        let log = match std::fs::File::create(&log_path) {
            Ok(f) => f,
            Err(e) => return Outcome::Failed(format!("{}: {e}", log_path.display())),
        };
        let mut cmd = match self.launcher.split_first() {
            Some((program, words)) => {
                let mut c = Command::new(program);
                c.args(words).arg(&self.exe);
                c
            }
            None => Command::new(&self.exe),
        };
        // A run must not outlive a sweep killed outright: its resume would start the same
        // run again while the orphan still writes.
        // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let child = cmd
            .arg(&self.command)
            .args(args)
            .arg("--json")
            .arg(result)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => return Outcome::Failed(format!("cannot start {}: {e}", self.exe.display())),
        };
        let mut stderr = child.stderr.take().expect("piped");
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let mut signalled = false;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) => {}
                Err(_) => break None,
            }
            if self.stop.load(Ordering::SeqCst) && !signalled {
                // Ctrl-C on a terminal reaches the run too; a signal sent to the sweep
                // alone is passed on, so the run stops and writes what it measured.
                // SAFETY: kill with a pid of our own child.
                unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
                signalled = true;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let text = reader.join().unwrap_or_default();
        match status {
            // The sweep checks that a result was written whole and not interrupted.
            Some(s) if s.success() => Outcome::Done,
            Some(s) if s.code() == Some(EXIT_INTERRUPTED) || self.stop.load(Ordering::SeqCst) => {
                Outcome::Interrupted
            }
            Some(s) => {
                let last = text
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("");
                Outcome::Failed(format!("{s}: {last}"))
            }
            None => Outcome::Failed("lost track of the run's process".into()),
        }
    }
}

/// "1 user", "4 users".
fn plural(users: u32) -> String {
    if users == 1 {
        "1 user".into()
    } else {
        format!("{users} users")
    }
}
