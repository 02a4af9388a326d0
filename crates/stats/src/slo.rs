//! Service-level objectives: "is this storage good enough?" as a verdict.
//! `--slo single-block-read=1ms@p99` asks that a class's 99th percentile
//! latency stay at or under 1 ms; without `@pXX` the mean is judged. A run
//! passes when every objective does (`dbio run` and `dbio replay` exit 3
//! otherwise, so a script can gate on it).

use serde::{Deserialize, Serialize};

use crate::schema::ClassResult;

/// Which figure of a class's latency an objective bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SloStat {
    Mean,
    P50,
    P90,
    P95,
    P99,
    P999,
}

impl SloStat {
    /// As written after `@` ("p99"), "mean" for the mean.
    pub fn name(self) -> &'static str {
        match self {
            SloStat::Mean => "mean",
            SloStat::P50 => "p50",
            SloStat::P90 => "p90",
            SloStat::P95 => "p95",
            SloStat::P99 => "p99",
            SloStat::P999 => "p99.9",
        }
    }

    fn parse(s: &str) -> Option<SloStat> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "mean" | "avg" => SloStat::Mean,
            "p50" | "median" => SloStat::P50,
            "p90" => SloStat::P90,
            "p95" => SloStat::P95,
            "p99" => SloStat::P99,
            "p99.9" | "p999" => SloStat::P999,
            _ => return None,
        })
    }

    /// The figure of `c` this statistic names, microseconds.
    pub fn of(self, c: &ClassResult) -> f64 {
        match self {
            SloStat::Mean => c.mean_us,
            SloStat::P50 => c.p50_us,
            SloStat::P90 => c.p90_us,
            SloStat::P95 => c.p95_us,
            SloStat::P99 => c.p99_us,
            SloStat::P999 => c.p999_us,
        }
    }
}

/// One objective: `class`'s `stat` latency at or under `limit_us`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    /// dbio class name, e.g. "redo-write".
    pub class: String,
    /// Upper bound, microseconds.
    pub limit_us: f64,
    /// Which figure is bounded.
    pub stat: SloStat,
}

/// An objective that cannot be read; the message names the bad part.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("--slo {part:?}: {why}")]
pub struct SloError {
    pub part: String,
    pub why: String,
}

impl Slo {
    /// `CLASS=LATENCY[@STAT]`: `single-block-read=1ms@p99`,
    /// `redo-write=500us`. `classes` are the names a class may take.
    pub fn parse(s: &str, classes: &[&str]) -> Result<Slo, SloError> {
        let bad = |why: String| SloError {
            part: s.to_string(),
            why,
        };
        let (class, rest) = s.split_once('=').ok_or_else(|| {
            bad("expected CLASS=LATENCY[@pXX], e.g. single-block-read=1ms@p99".into())
        })?;
        let class = class.trim().to_ascii_lowercase().replace('_', "-");
        if !classes.contains(&class.as_str()) {
            return Err(bad(format!(
                "unknown class {class:?} (one of {})",
                classes.join(", ")
            )));
        }
        let (latency, stat) = match rest.split_once('@') {
            Some((l, p)) => (
                l,
                SloStat::parse(p).ok_or_else(|| {
                    bad(format!(
                        "{p:?} is not a percentile dbio keeps (mean, p50, p90, p95, p99, p99.9)"
                    ))
                })?,
            ),
            None => (rest, SloStat::Mean),
        };
        let limit_us = latency_us(latency).ok_or_else(|| {
            bad(format!(
                "{:?} is not a latency (a number with ns, us, ms or s, e.g. 500us)",
                latency.trim()
            ))
        })?;
        Ok(Slo {
            class,
            limit_us,
            stat,
        })
    }

    /// As `--slo` takes it.
    pub fn to_arg(&self) -> String {
        let at = match self.stat {
            SloStat::Mean => String::new(),
            s => format!("@{}", s.name()),
        };
        format!("{}={}{at}", self.class, latency_text(self.limit_us))
    }
}

/// A latency with its unit, in microseconds: `1ms`, `500us`, `250µs`, `2s`,
/// `800ns`. A bare number is refused: the unit is what a reader checks.
pub fn latency_us(s: &str) -> Option<f64> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (n, unit) = s.split_at(split);
    let n: f64 = n.parse().ok()?;
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "ns" => 1e-3,
        "us" | "µs" | "μs" => 1.0,
        "ms" => 1e3,
        "s" => 1e6,
        _ => return None,
    };
    let v = n * scale;
    (v.is_finite() && v > 0.0).then_some(v)
}

/// A latency in the unit that reads best: "850us", "1.2ms", "2s".
pub fn latency_text(us: f64) -> String {
    // Three significant digits: what a latency is known to.
    let trim = |v: f64| {
        let decimals = if v >= 100.0 {
            0
        } else if v >= 10.0 {
            1
        } else {
            2
        };
        let t = format!("{v:.decimals$}");
        if t.contains('.') {
            t.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            t
        }
    };
    if us >= 1e6 {
        format!("{}s", trim(us / 1e6))
    } else if us >= 1e3 {
        format!("{}ms", trim(us / 1e3))
    } else {
        format!("{}us", trim(us))
    }
}

/// One objective judged against a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SloOutcome {
    pub slo: Slo,
    /// The figure measured, microseconds; absent when the class did no I/O.
    pub measured_us: Option<f64>,
    /// Measured at or under the bound. A class that did no I/O fails: nothing
    /// showed it is met.
    pub pass: bool,
    /// One line: "single-block-read p99 0.42ms <= 1ms: pass".
    pub line: String,
}

/// Judges each objective against the run's classes.
pub fn evaluate(slos: &[Slo], classes: &[ClassResult]) -> Vec<SloOutcome> {
    slos.iter()
        .map(|slo| {
            let measured = classes
                .iter()
                .find(|c| c.class == slo.class && c.ios > 0)
                .map(|c| slo.stat.of(c));
            let pass = measured.is_some_and(|m| m <= slo.limit_us);
            let line = match measured {
                Some(m) => format!(
                    "{} {} {} {} {}: {}",
                    slo.class,
                    slo.stat.name(),
                    latency_text(m),
                    if pass { "<=" } else { ">" },
                    latency_text(slo.limit_us),
                    if pass { "pass" } else { "FAIL" }
                ),
                None => format!(
                    "{} {} <= {}: FAIL (the class did no I/O)",
                    slo.class,
                    slo.stat.name(),
                    latency_text(slo.limit_us)
                ),
            };
            SloOutcome {
                slo: slo.clone(),
                measured_us: measured,
                pass,
                line,
            }
        })
        .collect()
}

/// The exit code a run's objectives give: 0 when all pass (or none is set),
/// 3 when any fails.
pub fn exit_code(outcomes: &[SloOutcome]) -> i32 {
    if outcomes.iter().all(|o| o.pass) {
        0
    } else {
        SLO_FAILED
    }
}

/// Exit code of a run that missed an objective.
pub const SLO_FAILED: i32 = 3;

#[cfg(test)]
mod tests {
    use super::*;

    const CLASSES: [&str; 2] = ["single-block-read", "redo-write"];

    fn class(name: &str, mean: f64, p99: f64) -> ClassResult {
        ClassResult {
            class: name.into(),
            ios: 100,
            mean_us: mean,
            p99_us: p99,
            ..Default::default()
        }
    }

    #[test]
    fn parses_latency_and_percentile() {
        let s = Slo::parse("single-block-read=1ms@p99", &CLASSES).unwrap();
        assert_eq!(
            s,
            Slo {
                class: "single-block-read".into(),
                limit_us: 1000.0,
                stat: SloStat::P99
            }
        );
        let s = Slo::parse("redo_write=500us", &CLASSES).unwrap();
        assert_eq!((s.limit_us, s.stat), (500.0, SloStat::Mean));
        assert_eq!(s.to_arg(), "redo-write=500us");
        assert_eq!(
            Slo::parse("redo-write=1.5ms@p99.9", &CLASSES)
                .unwrap()
                .to_arg(),
            "redo-write=1.5ms@p99.9"
        );
        assert_eq!(latency_us("800ns"), Some(0.8));
        assert_eq!(latency_us("2s"), Some(2e6));
        assert_eq!(latency_us("250µs"), Some(250.0));
    }

    #[test]
    fn refuses_what_it_cannot_judge() {
        let err = |s: &str| Slo::parse(s, &CLASSES).unwrap_err().to_string();
        assert!(err("redo-write").contains("expected CLASS=LATENCY"));
        assert!(err("nope=1ms").contains("unknown class \"nope\""));
        assert!(err("redo-write=1").contains("\"1\" is not a latency"));
        assert!(err("redo-write=-1ms").contains("is not a latency"));
        assert!(err("redo-write=1ms@p42").contains("\"p42\" is not a percentile"));
    }

    #[test]
    fn judges_each_class_and_sets_the_exit_code() {
        let run = [
            class("single-block-read", 200.0, 900.0),
            class("redo-write", 600.0, 2000.0),
        ];
        let slos = [
            Slo::parse("single-block-read=1ms@p99", &CLASSES).unwrap(),
            Slo::parse("redo-write=500us", &CLASSES).unwrap(),
        ];
        let out = evaluate(&slos, &run);
        assert!(out[0].pass);
        assert_eq!(out[0].line, "single-block-read p99 900us <= 1ms: pass");
        assert!(!out[1].pass);
        assert_eq!(out[1].line, "redo-write mean 600us > 500us: FAIL");
        assert_eq!(exit_code(&out), 3);
        assert_eq!(exit_code(&out[..1]), 0);
        assert_eq!(exit_code(&[]), 0);
        // A class that did no I/O is not shown to meet its objective.
        let none = evaluate(&slos[1..], &run[..1]);
        assert!(!none[0].pass && none[0].line.contains("did no I/O"));
    }
}
