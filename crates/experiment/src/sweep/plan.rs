//! A sweep's plan: configurations (each a set of `dbio run` or `dbio calibrate` options),
//! a user ramp, repeats and times, read from TOML, and the order its runs go in.

use std::collections::BTreeMap;
use std::time::Duration;

use dbio_workload::units::parse_duration;
use serde::{Deserialize, Serialize};

use super::SweepError;

/// The plan as written (TOML, or built from flags).
///
/// ```toml
/// command = "run"          # or "calibrate"
/// users = "1,2,4,8"        # or "1..16", or [1, 2, 4]
/// repeats = 3
/// time = "30s"
/// warmup = "5s"
/// pause = "2s"
/// launcher = "mpirun -n 4 --host a,b"   # optional: each run through mpirun
///
/// [options]                # for every configuration
/// profile = "oltp"
///
/// [[config]]
/// name = "knfs"
/// target = "/mnt/nfs/dbio"
/// before = "echo switching to the kernel mount"
///
/// [[config]]
/// name = "dnfs"
/// target = "nfs://10.0.0.2/export/dbio?version=3"
/// conns = 8
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// "run" or "calibrate".
    #[serde(default = "default_command")]
    pub command: String,
    /// User loads: "1..16", "1,2,4,8" or a list.
    #[serde(default = "default_users")]
    pub users: Users,
    #[serde(default = "default_repeats")]
    pub repeats: u32,
    /// Measured time of each run.
    #[serde(default = "default_time")]
    pub time: String,
    /// Unmeasured load before each run's measurement starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<String>,
    /// Idle time between runs (lets the storage settle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause: Option<String>,
    /// A command each run is started through, e.g. `mpirun -n 4 --host a,b` for runs
    /// over several hosts (each run then gives one merged result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launcher: Option<String>,
    /// Options every configuration gets (a configuration's own win).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, toml::Value>,
    #[serde(rename = "config")]
    pub configs: Vec<ConfigPlan>,
}

/// One configuration: a name, an optional hook, and command options by their long name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigPlan {
    pub name: String,
    /// A shell command run before this configuration's runs whenever the configuration
    /// changes (e.g. to restart a database instance or remount).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    #[serde(flatten)]
    pub options: BTreeMap<String, toml::Value>,
}

/// User loads, written as a range, a comma list or a TOML list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Users {
    List(Vec<u32>),
    Text(String),
}

fn default_command() -> String {
    "run".into()
}
fn default_users() -> Users {
    Users::List(vec![1])
}
fn default_repeats() -> u32 {
    3
}
fn default_time() -> String {
    "30s".into()
}

/// Options the sweep sets itself on every run.
const RESERVED: [&str; 6] = ["users", "time", "warmup", "json", "label", "html"];

/// Most runs a plan may hold: beyond, a typo (e.g. a range of thousands) is likelier.
const MAX_RUNS: usize = 100_000;

/// Parses a user ramp: "1..16" (every value), "1,2,4,8", or a single number.
pub fn parse_users(s: &str) -> Result<Vec<u32>, String> {
    let bad = || format!("users {s:?}: expected a range like 1..16 or a list like 1,2,4,8");
    let s = s.trim();
    let list: Vec<u32> = if let Some((a, b)) = s.split_once("..") {
        let a: u32 = a.trim().parse().map_err(|_| bad())?;
        let b: u32 = b
            .trim()
            .trim_start_matches('=')
            .parse()
            .map_err(|_| bad())?;
        if a > b || b - a > 10_000 {
            return Err(bad());
        }
        (a..=b).collect()
    } else {
        s.split(',')
            .map(|x| x.trim().parse().map_err(|_| bad()))
            .collect::<Result<_, _>>()?
    };
    check_users(list).map_err(|e| format!("users {s:?}: {e}"))
}

fn check_users(list: Vec<u32>) -> Result<Vec<u32>, String> {
    if list.is_empty() || list.contains(&0) {
        return Err("every load needs at least one user".into());
    }
    let mut seen = list.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != list.len() {
        return Err("a load appears twice".into());
    }
    Ok(list)
}

/// One run of the sweep, in the order it goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedRun {
    /// Position in the sweep, from 0.
    pub index: usize,
    pub config: String,
    pub users: u32,
    /// Repeat number, from 1.
    pub repeat: u32,
}

impl PlannedRun {
    /// Where its result goes, relative to the sweep directory.
    pub fn file(&self) -> String {
        format!("runs/{}/u{}-r{}.json", self.config, self.users, self.repeat)
    }
}

/// A plan whose values have been checked.
#[derive(Debug, Clone)]
pub struct CheckedPlan {
    pub plan: Plan,
    pub users: Vec<u32>,
    pub time: Duration,
    pub warmup: Duration,
    pub pause: Duration,
}

impl Plan {
    /// Reads a plan from TOML text; `origin` names it in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Plan, SweepError> {
        toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            let at = line.map_or(String::new(), |l| format!(" line {l}"));
            SweepError::Plan(format!("{origin}{at}: {}", one_line(e.message())))
        })
    }

    /// Checks every value, so that a mistake shows before the first run, not hours later.
    pub fn check(self) -> Result<CheckedPlan, SweepError> {
        let bad = |m: String| SweepError::Plan(m);
        if !matches!(self.command.as_str(), "run" | "calibrate") {
            return Err(bad(format!(
                "command {:?}: expected \"run\" or \"calibrate\"",
                self.command
            )));
        }
        let users = match &self.users {
            Users::Text(s) => parse_users(s).map_err(bad)?,
            Users::List(l) => check_users(l.clone()).map_err(|e| bad(format!("users: {e}")))?,
        };
        if self.command == "calibrate" && users != [1] {
            return Err(bad(
                "users: calibrate ramps its own load; a user ramp applies to run".into(),
            ));
        }
        if self.repeats == 0 {
            return Err(bad("repeats: at least 1".into()));
        }
        let dur = |what: &str, s: &str| {
            parse_duration(s).map_err(|_| {
                bad(format!(
                    "{what} {s:?}: expected a duration like 30s, 2m or 500ms"
                ))
            })
        };
        let time = dur("time", &self.time)?;
        if time.is_zero() {
            return Err(bad("time: a run needs a time above zero".into()));
        }
        let warmup = self
            .warmup
            .as_deref()
            .map(|s| dur("warmup", s))
            .transpose()?
            .unwrap_or_default();
        let pause = self
            .pause
            .as_deref()
            .map(|s| dur("pause", s))
            .transpose()?
            .unwrap_or_default();
        if self.configs.is_empty() {
            return Err(bad(
                "no [[config]]: a sweep needs at least one configuration".into(),
            ));
        }
        let mut names: Vec<&str> = Vec::new();
        for c in &self.configs {
            let ok = !c.name.is_empty()
                && c.name.len() <= 64
                && c.name
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || "._-".contains(ch))
                && !c.name.starts_with('.');
            if !ok {
                return Err(bad(format!(
                    "config name {:?}: use 1 to 64 letters, digits, '.', '_' or '-' (it names a directory)",
                    c.name
                )));
            }
            if names.contains(&c.name.as_str()) {
                return Err(bad(format!("config name {:?} appears twice", c.name)));
            }
            names.push(&c.name);
        }
        for (key, _) in self
            .configs
            .iter()
            .flat_map(|c| &c.options)
            .chain(&self.options)
        {
            if RESERVED.contains(&key.as_str()) {
                return Err(bad(format!(
                    "option {key:?} is set by the sweep itself; leave it out of the plan"
                )));
            }
        }
        let runs = users.len() * self.configs.len() * self.repeats as usize;
        if runs > MAX_RUNS {
            return Err(bad(format!("{runs} runs planned; at most {MAX_RUNS}")));
        }
        // Every option must turn into command-line arguments.
        for c in &self.configs {
            self.arguments(c)?;
        }
        Ok(CheckedPlan {
            plan: self,
            users,
            time,
            warmup,
            pause,
        })
    }

    /// The command-line options of a configuration: the plan's common options, then its
    /// own (which win), as `--key value` (true flags as `--key`, false left out, lists
    /// repeated).
    pub fn arguments(&self, config: &ConfigPlan) -> Result<Vec<String>, SweepError> {
        let mut merged = self.options.clone();
        merged.extend(config.options.clone());
        let mut args = Vec::new();
        for (key, value) in &merged {
            let flag = format!("--{key}");
            let mut push = |v: &toml::Value| -> Result<(), SweepError> {
                match v {
                    toml::Value::Boolean(true) => args.push(flag.clone()),
                    toml::Value::Boolean(false) => {}
                    toml::Value::String(s) => args.extend([flag.clone(), s.clone()]),
                    toml::Value::Integer(i) => args.extend([flag.clone(), i.to_string()]),
                    toml::Value::Float(f) => args.extend([flag.clone(), f.to_string()]),
                    _ => {
                        return Err(SweepError::Plan(format!(
                            "config {:?}, option {key:?}: expected a string, number, true/false or a list of them",
                            config.name
                        )))
                    }
                }
                Ok(())
            };
            match value {
                toml::Value::Array(items) => items.iter().try_for_each(&mut push)?,
                v => push(v)?,
            }
        }
        Ok(args)
    }
}

impl CheckedPlan {
    /// Every run in order: each repeat is a whole user ramp, and at each load every
    /// configuration runs once, so that drift of the machine or the storage falls on
    /// every configuration alike. The order is rotated by one every second repeat and
    /// run backwards on the others (a Williams design): each configuration then comes
    /// as often after each other one, so that what a run leaves behind (a storage path
    /// kept busy by a heavy configuration) does not always fall on the same one, as a
    /// plain rotation, which keeps the cyclic order, would make it.
    pub fn schedule(&self) -> Vec<PlannedRun> {
        let configs = &self.plan.configs;
        let n = configs.len();
        let mut runs = Vec::new();
        for repeat in 0..self.plan.repeats {
            let shift = (repeat as usize / 2) % n.max(1);
            let backwards = repeat % 2 == 1;
            for &users in &self.users {
                for i in 0..n {
                    let at = if backwards { n - 1 - i } else { i };
                    let c = &configs[(at + shift) % n];
                    runs.push(PlannedRun {
                        index: runs.len(),
                        config: c.name.clone(),
                        users,
                        repeat: repeat + 1,
                    });
                }
            }
        }
        runs
    }

    pub fn config(&self, name: &str) -> Option<&ConfigPlan> {
        self.plan.configs.iter().find(|c| c.name == name)
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: &str = r#"
        users = "1..3"
        repeats = 2
        time = "2s"
        [options]
        profile = "oltp"
        verify = true
        [[config]]
        name = "a"
        outstanding = 1
        [[config]]
        name = "b"
        outstanding = 8
        workload = ["single-block-read", "redo-write"]
        buffered = false
    "#;

    #[test]
    fn runs_interleave_and_rotate() {
        let p = Plan::from_toml(PLAN, "plan.toml").unwrap().check().unwrap();
        let order: Vec<String> = p
            .schedule()
            .iter()
            .map(|r| format!("{}{}{}", r.config, r.users, r.repeat))
            .collect();
        assert_eq!(
            order,
            ["a11", "b11", "a21", "b21", "a31", "b31", "b12", "a12", "b22", "a22", "b32", "a32"]
        );
        // Three configurations: over six repeats each follows each other one equally
        // often (a plain rotation would always put c before a).
        let three = r#"
            repeats = 6
            [[config]]
            name = "a"
            [[config]]
            name = "b"
            [[config]]
            name = "c"
        "#;
        let p3 = Plan::from_toml(three, "p.toml").unwrap().check().unwrap();
        let seq: Vec<String> = p3.schedule().iter().map(|r| r.config.clone()).collect();
        assert_eq!(seq[..6], ["a", "b", "c", "c", "b", "a"]);
        let mut after = std::collections::BTreeMap::new();
        for rep in seq.chunks(3) {
            for w in rep.windows(2) {
                *after.entry((w[0].clone(), w[1].clone())).or_insert(0) += 1;
            }
        }
        assert_eq!(after.len(), 6, "{after:?}");
        assert!(after.values().all(|&k| k == 2), "{after:?}");
        let b = p.config("b").unwrap();
        assert_eq!(
            p.plan.arguments(b).unwrap(),
            [
                "--outstanding",
                "8",
                "--profile",
                "oltp",
                "--verify",
                "--workload",
                "single-block-read",
                "--workload",
                "redo-write"
            ]
        );
    }

    #[test]
    fn mistakes_show_before_any_run() {
        let cases = [
            (
                "users = \"4..2\"\n[[config]]\nname = \"a\"",
                "users \"4..2\"",
            ),
            (
                "users = [1, 1]\n[[config]]\nname = \"a\"",
                "a load appears twice",
            ),
            ("time = \"soon\"\n[[config]]\nname = \"a\"", "time \"soon\""),
            ("[[config]]\nname = \"../x\"", "config name \"../x\""),
            (
                "[[config]]\nname = \"a\"\n[[config]]\nname = \"a\"",
                "appears twice",
            ),
            (
                "[[config]]\nname = \"a\"\nusers = 4",
                "set by the sweep itself",
            ),
            ("[[config]]\nname = \"a\"\nx = { y = 1 }", "option \"x\""),
            ("repeats = 0\n[[config]]\nname = \"a\"", "repeats"),
            (
                "command = \"walk\"\n[[config]]\nname = \"a\"",
                "command \"walk\"",
            ),
        ];
        for (text, want) in cases {
            let e = Plan::from_toml(text, "p.toml")
                .and_then(Plan::check)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
        let e = Plan::from_toml("speed = 3", "p.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("plan: p.toml line 1: unknown field `speed`"),
            "{e}"
        );
    }

    #[test]
    fn user_ramps() {
        assert_eq!(parse_users("1..4").unwrap(), [1, 2, 3, 4]);
        assert_eq!(parse_users("1,2,4, 8").unwrap(), [1, 2, 4, 8]);
        assert_eq!(parse_users("16").unwrap(), [16]);
        assert!(parse_users("0..2").is_err());
        assert!(parse_users("a").is_err());
    }
}
