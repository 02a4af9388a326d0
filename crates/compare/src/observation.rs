//! Observations: the figures of one measured run (a dbio run or calibrate result, or an
//! imported AWR report), with the configuration, load and repeat they belong to. A
//! comparison only ever sees observations, so results of every origin and format version
//! compare alike.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::CompareError;

/// One measured run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// The configuration it measured (a sweep's configuration name, or the set it was
    /// given in).
    pub config: String,
    /// The load it ran at: the number of users (a `users` label, else the run's own).
    pub load: u32,
    /// Which repeat of that configuration and load, where known; repeats pair across
    /// configurations by this number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    /// Where it came from (a file name).
    pub source: String,
    /// Figures by metric name (see [`Direction::of`]): `iops`, `mbps`, `cpu_us_per_io`,
    /// and per I/O class `CLASS iops`, `CLASS mean_us`, `CLASS p50_us`, ...
    pub metrics: BTreeMap<String, f64>,
    /// Latency histograms per I/O class, (lower bound us, upper bound us, count), for the
    /// overlaid histogram charts.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub histograms: BTreeMap<String, Vec<(u64, u64, u64)>>,
}

/// Whether more of a metric is better (throughput) or worse (latency, CPU).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    HigherIsBetter,
    LowerIsBetter,
}

impl Direction {
    /// Throughput metrics end in `iops` or `mbps`; everything else (latencies in `_us`,
    /// CPU per I/O, waits) is better lower.
    pub fn of(metric: &str) -> Direction {
        if metric.ends_with("iops") || metric.ends_with("mbps") {
            Direction::HigherIsBetter
        } else {
            Direction::LowerIsBetter
        }
    }
}

/// Per-class figures taken from a run result, in the order they are shown.
const CLASS_FIGURES: [&str; 7] = [
    "iops", "mbps", "mean_us", "p50_us", "p90_us", "p95_us", "p99_us",
];

/// Reads one result file into an observation. `config` names the configuration when the
/// result carries no `config` label of its own.
pub fn from_file(path: &Path, config: Option<&str>) -> Result<Observation, CompareError> {
    let at = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| CompareError::Read {
        path: at.clone(),
        error: e.to_string(),
    })?;
    let value: Value = serde_json::from_str(&text).map_err(|e| CompareError::Format {
        path: at.clone(),
        what: format!("not JSON ({e})"),
    })?;
    from_value(&value, &at, config)
}

/// An observation from a parsed result (`kind` "run" or "calibrate").
pub fn from_value(
    v: &Value,
    source: &str,
    config: Option<&str>,
) -> Result<Observation, CompareError> {
    let bad = |what: &str| CompareError::Format {
        path: source.to_string(),
        what: what.to_string(),
    };
    let labels = v.get("labels");
    let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    let config = label("config")
        .or(config)
        .ok_or_else(|| {
            bad("no configuration: the result has no \"config\" label and none was given")
        })?
        .to_string();
    let repeat = label("repeat").and_then(|r| r.parse().ok());
    let mut metrics = BTreeMap::new();
    let mut histograms = BTreeMap::new();
    let num = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64).filter(|x| x.is_finite());
    let load = match v.get("kind").and_then(Value::as_str) {
        Some("run") => {
            for k in ["iops", "mbps", "cpu_us_per_io"] {
                if let Some(x) = num(v, k) {
                    metrics.insert(k.to_string(), x);
                }
            }
            for class in v
                .get("classes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(name) = class.get("class").and_then(Value::as_str) else {
                    return Err(bad("a class without a name"));
                };
                if num(class, "ios").unwrap_or(0.0) == 0.0 {
                    continue;
                }
                for k in CLASS_FIGURES {
                    if let Some(x) = num(class, k) {
                        metrics.insert(format!("{name} {k}"), x);
                    }
                }
                let buckets: Vec<(u64, u64, u64)> = class
                    .get("histogram")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|b| {
                        Some((
                            b.get("lower_us")?.as_u64()?,
                            b.get("upper_us")?.as_u64()?,
                            b.get("count")?.as_u64()?,
                        ))
                    })
                    .collect();
                if !buckets.is_empty() {
                    histograms.insert(name.to_string(), buckets);
                }
            }
            let cfg = v
                .get("config")
                .ok_or_else(|| bad("no \"config\" section"))?;
            let users = num(cfg, "users").unwrap_or(1.0) as u32;
            label("users").and_then(|u| u.parse().ok()).unwrap_or(users)
        }
        Some("calibrate") => {
            for k in ["max_iops", "max_mbps", "latency_us", "latency_p99_us"] {
                if let Some(x) = num(v, k) {
                    metrics.insert(k.to_string(), x);
                }
            }
            label("users").and_then(|u| u.parse().ok()).unwrap_or(1)
        }
        Some(other) => {
            return Err(bad(&format!(
                "a \"{other}\" result, not a run or calibrate result"
            )))
        }
        None => return Err(bad("not a dbio result (no \"kind\")")),
    };
    if metrics.is_empty() {
        return Err(bad("no figures in it"));
    }
    Ok(Observation {
        config,
        load,
        repeat,
        source: source.to_string(),
        metrics,
        histograms,
    })
}
