//! `sweep`: a planned experiment. Configurations times user loads times repeats, run
//! interleaved, each run's result kept in a directory whose manifest (`sweep.json`) says
//! what is done, so that an interrupted sweep resumes without redoing or losing a run.
//!
//! The runs themselves are carried out by an [`Executor`] (the command line runs each as
//! a `dbio run` process of its own, so that one run's state never leaks into the next).

pub mod plan;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

pub use plan::{CheckedPlan, ConfigPlan, Plan, PlannedRun, Users};

/// The manifest's file name in a sweep directory.
pub const MANIFEST: &str = "sweep.json";
/// `kind` of a sweep manifest.
pub const SWEEP_KIND: &str = "sweep";
const FORMAT_VERSION: u32 = 1;
/// Largest manifest read back (a plan of the largest size is far below).
const MANIFEST_MAX: u64 = 64 << 20;

/// Errors of a sweep, each naming what and where.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("plan: {0}")]
    Plan(String),
    #[error("{path}: {error}")]
    Io { path: String, error: String },
    #[error("{0}")]
    Directory(String),
    #[error("{path}: not a sweep manifest ({what})")]
    Manifest { path: String, what: String },
    #[error("run {run} failed: {message} (fix it and continue with `dbio sweep --resume --out {dir}`, with the corrected --config or --plan if its options were wrong)")]
    RunFailed {
        run: String,
        message: String,
        dir: String,
    },
    #[error("hook before {config:?} failed: {message} (fix it and continue with `dbio sweep --resume --out {dir}`, with the corrected --plan if the hook was wrong)")]
    HookFailed {
        config: String,
        message: String,
        dir: String,
    },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> SweepError + '_ {
    move |e| SweepError::Io {
        path: path.display().to_string(),
        error: e.to_string(),
    }
}

/// What a sweep directory holds: the plan and the state of every run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    /// Always "sweep".
    pub kind: String,
    pub format_version: u32,
    pub dbio_version: String,
    pub created_unix: f64,
    pub plan: Plan,
    pub runs: Vec<RunRecord>,
}

/// One run and how it went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    #[serde(flatten)]
    pub run: PlannedRun,
    /// Result file, relative to the sweep directory.
    pub file: String,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix: Option<f64>,
    /// Wall time of the run, start-up and data-set check included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pending,
    Done,
    Interrupted,
    Failed,
}

/// How one run ended, as the executor saw it.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The result was written where asked.
    Done,
    /// A stop signal ended it; its partial result does not count.
    Interrupted,
    Failed(String),
}

/// Why a configuration's `before` hook failed.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("cannot start {shell}: {source}")]
    Spawn {
        shell: &'static str,
        source: std::io::Error,
    },
    #[error("{command:?} ended with {status}")]
    Exit {
        command: String,
        status: std::process::ExitStatus,
    },
}

/// Why a command line does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadArguments {
    #[error("option {option}: `dbio {command}` has no such option")]
    UnknownOption { option: String, command: String },
    /// The parser's own line.
    #[error("{0}")]
    Refused(String),
}

/// Carries out runs and hooks.
pub trait Executor {
    /// Runs a configuration's `before` hook.
    fn before(&mut self, command: &str, run: &PlannedRun) -> Result<(), HookError>;
    /// Runs one run with these command options, writing its result JSON to `result`.
    fn run(&mut self, run: &PlannedRun, args: &[String], result: &Path) -> Outcome;
}

/// Where a sweep stands, told before each run.
#[derive(Debug, Clone)]
pub struct Progress<'a> {
    pub run: &'a PlannedRun,
    /// Runs done so far (earlier sessions included).
    pub done: usize,
    pub total: usize,
    /// Time spent in this session.
    pub elapsed: Duration,
    /// Estimated time to finish, from this session's runs (or the plan before any).
    pub left: Duration,
}

/// How a call of [`execute`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finished {
    /// Runs done in total.
    pub done: usize,
    pub total: usize,
    /// A stop signal ended the sweep early.
    pub interrupted: bool,
}

impl Manifest {
    /// Starts a sweep in `dir`: refuses a directory that holds a sweep already (that one
    /// is resumed) or anything else, since a sweep only writes where it owns everything.
    pub fn create(dir: &Path, plan: &CheckedPlan) -> Result<Manifest, SweepError> {
        if dir.join(MANIFEST).exists() {
            return Err(SweepError::Directory(format!(
                "{} holds a sweep already: continue it with --resume, or choose another --out",
                dir.display()
            )));
        }
        if dir.exists() {
            let mut entries = std::fs::read_dir(dir).map_err(io_err(dir))?;
            if entries.next().is_some() {
                return Err(SweepError::Directory(format!(
                    "{} is not empty and holds no sweep: choose a new or empty --out",
                    dir.display()
                )));
            }
        }
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        let manifest = Manifest {
            kind: SWEEP_KIND.into(),
            format_version: FORMAT_VERSION,
            dbio_version: env!("CARGO_PKG_VERSION").into(),
            created_unix: now_unix(),
            plan: plan.plan.clone(),
            runs: plan
                .schedule()
                .into_iter()
                .map(|run| RunRecord {
                    file: run.file(),
                    run,
                    status: Status::Pending,
                    started_unix: None,
                    wall_s: None,
                    message: None,
                })
                .collect(),
        };
        manifest.save(dir)?;
        Ok(manifest)
    }

    /// Reads the manifest of the sweep in `dir`.
    pub fn load(dir: &Path) -> Result<Manifest, SweepError> {
        let path = dir.join(MANIFEST);
        let bad = |what: String| SweepError::Manifest {
            path: path.display().to_string(),
            what,
        };
        let meta = std::fs::metadata(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                SweepError::Directory(format!(
                    "{} holds no sweep ({MANIFEST} is missing)",
                    dir.display()
                ))
            } else {
                io_err(&path)(e)
            }
        })?;
        if meta.len() > MANIFEST_MAX {
            return Err(bad(format!(
                "{} bytes, more than a manifest can be",
                meta.len()
            )));
        }
        let text = std::fs::read_to_string(&path).map_err(io_err(&path))?;
        let m: Manifest = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        if m.kind != SWEEP_KIND || m.format_version != FORMAT_VERSION {
            return Err(bad(format!(
                "kind {:?}, format {}",
                m.kind, m.format_version
            )));
        }
        for r in &m.runs {
            if r.file != r.run.file() {
                return Err(bad(format!("run {} names file {:?}", r.run.index, r.file)));
            }
        }
        Ok(m)
    }

    /// Writes the manifest so that a crash leaves the old one or the new one, whole.
    pub fn save(&self, dir: &Path) -> Result<(), SweepError> {
        let path = dir.join(MANIFEST);
        let tmp = dir.join(format!("{MANIFEST}.tmp"));
        let text = serde_json::to_string_pretty(self).map_err(|e| SweepError::Io {
            path: path.display().to_string(),
            error: e.to_string(),
        })?;
        write_durably(&tmp, text.as_bytes())?;
        std::fs::rename(&tmp, &path).map_err(io_err(&path))
    }

    /// Replaces the plan of a sweep in `dir` with a corrected one (a typo in a
    /// configuration's options, a hook that failed): the runs must stay the same, and a
    /// configuration that has results already must keep its options, so that every
    /// result of a configuration measured the same thing. Returns the configurations
    /// whose options changed.
    pub fn replan(&mut self, dir: &Path, plan: &CheckedPlan) -> Result<Vec<String>, SweepError> {
        let bad = |m: String| SweepError::Plan(m);
        let runs: Vec<PlannedRun> = self.runs.iter().map(|r| r.run.clone()).collect();
        if plan.schedule() != runs {
            return Err(bad(format!(
                "the corrected plan changes the runs (configurations, users or repeats) of the \
                 sweep in {}: start a new sweep with another --out",
                dir.display()
            )));
        }
        let old = self.plan.clone().check()?;
        let done = |config: &str| {
            self.runs
                .iter()
                .filter(|r| r.run.config == config && r.status == Status::Done)
                .count()
        };
        let any_done = self.done() > 0;
        let same_runs = old.plan.command == plan.plan.command
            && old.time == plan.time
            && old.warmup == plan.warmup
            && old.plan.launcher == plan.plan.launcher;
        if any_done && !same_runs {
            return Err(bad(format!(
                "the corrected plan changes command, time, warm-up or launcher, but {} runs are \
                 done with the old ones: keep them, or start a new sweep with another --out",
                self.done()
            )));
        }
        let mut changed = Vec::new();
        for new in &plan.plan.configs {
            let before = old
                .config(&new.name)
                .expect("same schedule, same configurations");
            if old.plan.arguments(before)? == plan.plan.arguments(new)?
                && before.before == new.before
            {
                continue;
            }
            let n = done(&new.name);
            if n > 0 {
                return Err(bad(format!(
                    "config {:?} has {n} result{} already; its options cannot change (they \
                     would mix two setups under one name): keep its options, or give the new \
                     ones another name in a new sweep",
                    new.name,
                    if n == 1 { "" } else { "s" }
                )));
            }
            changed.push(new.name.clone());
        }
        self.plan = plan.plan.clone();
        self.save(dir)?;
        Ok(changed)
    }

    pub fn done(&self) -> usize {
        self.runs
            .iter()
            .filter(|r| r.status == Status::Done)
            .count()
    }
}

fn write_durably(path: &Path, bytes: &[u8]) -> Result<(), SweepError> {
    use std::io::Write;
    let mut f = std::fs::File::create(path).map_err(io_err(path))?;
    f.write_all(bytes).map_err(io_err(path))?;
    f.sync_all().map_err(io_err(path))
}

fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// A result file that exists, parses and was not interrupted: the run is done even if
/// the manifest did not get to say so (a crash between the two).
fn finished_result(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return false;
    };
    v.get("kind")
        .is_some_and(|k| k == "run" || k == "calibrate")
        && v.get("interrupted").and_then(|i| i.as_bool()) == Some(false)
}

/// The options a planned run is given: its configuration's, then the sweep's own (users,
/// time, warm-up, and labels that name configuration, load and repeat in the result).
pub fn run_arguments(plan: &CheckedPlan, run: &PlannedRun) -> Result<Vec<String>, SweepError> {
    let config = plan.config(&run.config).ok_or_else(|| {
        SweepError::Plan(format!(
            "run {} names unknown config {:?}",
            run.index, run.config
        ))
    })?;
    let mut args = plan.plan.arguments(config)?;
    if plan.plan.command == "run" {
        args.extend(["--users".into(), run.users.to_string()]);
        if !plan.warmup.is_zero() {
            args.extend(["--warmup".into(), format!("{}ms", plan.warmup.as_millis())]);
        }
    }
    args.extend(["--time".into(), format!("{}ms", plan.time.as_millis())]);
    for (k, v) in [
        ("config", run.config.clone()),
        ("users", run.users.to_string()),
        ("repeat", run.repeat.to_string()),
    ] {
        args.extend(["--label".into(), format!("{k}={v}")]);
    }
    Ok(args)
}

/// Checks the whole command line of every configuration's first run with `parse` (the
/// command, e.g. "run", and its arguments; an error is one line), so that an option the
/// command does not know stops the sweep before `--out` exists, not at that run.
pub fn check_arguments(
    plan: &CheckedPlan,
    parse: impl Fn(&str, &[String]) -> Result<(), BadArguments>,
) -> Result<(), SweepError> {
    let schedule = plan.schedule();
    for config in &plan.plan.configs {
        let Some(run) = schedule.iter().find(|r| r.config == config.name) else {
            continue;
        };
        let args = run_arguments(plan, run)?;
        parse(&plan.plan.command, &args)
            .map_err(|e| SweepError::Plan(format!("config {:?}: {e}", config.name)))?;
    }
    Ok(())
}

/// Runs every run of the manifest that is not done, in order, saving the manifest after
/// each. Stops at the first failed run or hook (the manifest then says which), or when
/// `stop` is set (the run in flight counts as not done).
pub fn execute(
    dir: &Path,
    manifest: &mut Manifest,
    exec: &mut dyn Executor,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Finished, SweepError> {
    let plan = manifest.plan.clone().check()?;
    let session = Instant::now();
    let total = manifest.runs.len();
    let mut last_config: Option<String> = None;
    let mut walls: Vec<f64> = Vec::new();
    let mut first = true;
    for i in 0..total {
        if manifest.runs[i].status == Status::Done {
            continue;
        }
        let run = manifest.runs[i].run.clone();
        let final_path: PathBuf = dir.join(run.file());
        if finished_result(&final_path) {
            manifest.runs[i].status = Status::Done;
            manifest.runs[i].message = None;
            manifest.save(dir)?;
            continue;
        }
        if stop.load(Ordering::SeqCst) {
            return Ok(finished(manifest, true));
        }
        if !first && !plan.pause.is_zero() && !sleep_unless_stopped(plan.pause, stop) {
            return Ok(finished(manifest, true));
        }
        first = false;
        let remaining = manifest.runs[i..]
            .iter()
            .filter(|r| r.status != Status::Done)
            .count();
        let per_run = if walls.is_empty() {
            (plan.time + plan.warmup + plan.pause).as_secs_f64()
        } else {
            walls.iter().sum::<f64>() / walls.len() as f64 + plan.pause.as_secs_f64()
        };
        progress(&Progress {
            run: &run,
            done: manifest.done(),
            total,
            elapsed: session.elapsed(),
            left: Duration::from_secs_f64(per_run * remaining as f64),
        });
        let config = plan.config(&run.config).cloned().ok_or_else(|| {
            SweepError::Plan(format!(
                "run {} names unknown config {:?}",
                run.index, run.config
            ))
        })?;
        if last_config.as_deref() != Some(run.config.as_str()) {
            if let Some(hook) = &config.before {
                if let Err(e) = exec.before(hook, &run) {
                    let message = e.to_string();
                    manifest.runs[i].status = Status::Failed;
                    manifest.runs[i].message = Some(format!("hook: {message}"));
                    manifest.save(dir)?;
                    return Err(SweepError::HookFailed {
                        config: run.config,
                        message,
                        dir: dir.display().to_string(),
                    });
                }
            }
            last_config = Some(run.config.clone());
        }
        let args = run_arguments(&plan, &run)?;
        let parent = final_path.parent().unwrap_or(dir);
        std::fs::create_dir_all(parent).map_err(io_err(parent))?;
        let partial = final_path.with_extension("json.partial");
        let _ = std::fs::remove_file(&partial);
        let started = Instant::now();
        manifest.runs[i].started_unix = Some(now_unix());
        let outcome = match exec.run(&run, &args, &partial) {
            Outcome::Done if !finished_result(&partial) => {
                Outcome::Failed("it wrote no complete result".into())
            }
            o => o,
        };
        let wall = started.elapsed().as_secs_f64();
        manifest.runs[i].wall_s = Some(wall);
        match outcome {
            Outcome::Done => {
                std::fs::rename(&partial, &final_path).map_err(io_err(&final_path))?;
                manifest.runs[i].status = Status::Done;
                manifest.runs[i].message = None;
                manifest.save(dir)?;
                walls.push(wall);
            }
            Outcome::Interrupted => {
                let _ = std::fs::remove_file(&partial);
                manifest.runs[i].status = Status::Interrupted;
                manifest.save(dir)?;
                return Ok(finished(manifest, true));
            }
            Outcome::Failed(message) => {
                let _ = std::fs::remove_file(&partial);
                manifest.runs[i].status = Status::Failed;
                manifest.runs[i].message = Some(message.clone());
                manifest.save(dir)?;
                return Err(SweepError::RunFailed {
                    run: format!(
                        "{} ({}, {} user{}, repeat {})",
                        run.index + 1,
                        run.config,
                        run.users,
                        if run.users == 1 { "" } else { "s" },
                        run.repeat
                    ),
                    message,
                    dir: dir.display().to_string(),
                });
            }
        }
    }
    Ok(finished(manifest, false))
}

fn finished(manifest: &Manifest, interrupted: bool) -> Finished {
    Finished {
        done: manifest.done(),
        total: manifest.runs.len(),
        interrupted,
    }
}

/// Sleeps `d`, waking every 100 ms to look at `stop`; false if it was set.
fn sleep_unless_stopped(d: Duration, stop: &AtomicBool) -> bool {
    let end = Instant::now() + d;
    while Instant::now() < end {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        std::thread::sleep((end - Instant::now()).min(Duration::from_millis(100)));
    }
    !stop.load(Ordering::SeqCst)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
