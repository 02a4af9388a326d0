//! Observations: the figures of one measured run (a dbio run or calibrate result, or an
//! imported AWR report), with the configuration, load and repeat they belong to. A
//! comparison only ever sees observations, so results of every origin and format version
//! compare alike.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

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
    /// What the run really got beyond its options, by fact ("dbio version", "git
    /// commit", "engine", "mount", "NFS"), where the result says.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub setup: BTreeMap<String, String>,
    /// The command-line options the run was given, where the result says.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// The NFS traffic its views counted (kernel mount or dbio's client), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nfs: Option<crate::nfs_views::NfsTraffic>,
}

impl Observation {
    /// The configuration of an input file that carries no labels: `set` where the
    /// inputs came in sets, else the file's name without its extension.
    pub fn config_of_file(path: &std::path::Path, set: Option<&str>) -> String {
        match set {
            Some(s) => s.to_string(),
            None => path.file_stem().map_or_else(
                || path.display().to_string(),
                |s| s.to_string_lossy().into_owned(),
            ),
        }
    }

    /// A database's captured I/O as an observation of `config` at `load` users: per
    /// class of the model `iops` (every I/O counted), `mbps` (the rate times the size
    /// per I/O the replay moves) and `mean_us` only where the database timed the I/O
    /// as storage latency; totals `iops` and `mbps` over the classes. So production
    /// and a run of its replay sit side by side under the same figure names.
    pub fn of_model(
        m: &dbio_sources::WorkloadModel,
        config: &str,
        load: u32,
        repeat: Option<u32>,
        source: &str,
    ) -> Observation {
        let mut metrics = BTreeMap::new();
        let (mut iops, mut mbps) = (0.0, 0.0);
        for k in &m.classes {
            // dbio's MB are 10^6 bytes.
            let class_mbps = k.rate * f64::from(k.size) / 1e6;
            iops += k.rate;
            mbps += class_mbps;
            metrics.insert(format!("{} iops", k.class), k.rate);
            metrics.insert(format!("{} mbps", k.class), class_mbps);
            if let Some(mean) = k.production_mean_us.filter(|x| x.is_finite()) {
                metrics.insert(format!("{} mean_us", k.class), mean);
            }
        }
        metrics.insert("iops".into(), iops);
        metrics.insert("mbps".into(), mbps);
        Observation {
            config: config.to_string(),
            load,
            repeat,
            source: source.to_string(),
            metrics,
            histograms: BTreeMap::new(),
            setup: BTreeMap::new(),
            options: Vec::new(),
            nfs: None,
        }
    }
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

/// The parts of a run or calibrate result (any format version) a comparison reads; the
/// rest (the raw recorder, series, views) is skipped unparsed, which keeps reading
/// thousands of results fast.
#[derive(Debug, Deserialize)]
pub struct ResultView {
    pub kind: Option<String>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    interrupted: bool,
    config: Option<ConfigView>,
    iops: Option<f64>,
    mbps: Option<f64>,
    cpu_us_per_io: Option<f64>,
    #[serde(default)]
    classes: Vec<ClassView>,
    max_iops: Option<f64>,
    max_mbps: Option<f64>,
    latency_us: Option<f64>,
    latency_p99_us: Option<f64>,
    dbio_version: Option<String>,
    #[serde(default)]
    provenance: Option<dbio_stats::Provenance>,
    /// The NFS views, read leniently (see [`crate::nfs_views`]).
    #[serde(default)]
    nfs: Option<serde_json::Value>,
    #[serde(default)]
    kernel_nfs: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
struct ConfigView {
    users: Option<u32>,
    engine: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ClassView {
    class: String,
    #[serde(default)]
    ios: u64,
    iops: Option<f64>,
    mbps: Option<f64>,
    mean_us: Option<f64>,
    p50_us: Option<f64>,
    p90_us: Option<f64>,
    p95_us: Option<f64>,
    p99_us: Option<f64>,
    #[serde(default)]
    histogram: Vec<BucketView>,
}

#[derive(Debug, Deserialize)]
struct BucketView {
    lower_us: u64,
    upper_us: u64,
    count: u64,
}

impl ResultView {
    pub fn interrupted(&self) -> bool {
        self.interrupted
    }
}

/// An observation from a result (`kind` "run" or "calibrate").
pub fn from_view(
    v: &ResultView,
    source: &str,
    config: Option<&str>,
) -> Result<Observation, CompareError> {
    let bad = |what: &str| CompareError::Format {
        path: source.to_string(),
        what: what.to_string(),
    };
    let label = |k: &str| v.labels.get(k).map(String::as_str);
    let config = label("config")
        .or(config)
        .ok_or_else(|| {
            bad("no configuration: the result has no \"config\" label and none was given")
        })?
        .to_string();
    if v.interrupted {
        return Err(bad(
            "an interrupted run: its figures cover only part of the time",
        ));
    }
    let repeat = label("repeat").and_then(|r| r.parse().ok());
    let users_label = label("users").and_then(|u| u.parse().ok());
    let mut metrics = BTreeMap::new();
    let mut histograms = BTreeMap::new();
    let mut put = |k: String, x: Option<f64>| {
        if let Some(x) = x.filter(|x| x.is_finite()) {
            metrics.insert(k, x);
        }
    };
    let load = match v.kind.as_deref() {
        Some("run") => {
            put("iops".into(), v.iops);
            put("mbps".into(), v.mbps);
            put("cpu_us_per_io".into(), v.cpu_us_per_io);
            for c in v.classes.iter().filter(|c| c.ios > 0) {
                for (k, x) in [
                    ("iops", c.iops),
                    ("mbps", c.mbps),
                    ("mean_us", c.mean_us),
                    ("p50_us", c.p50_us),
                    ("p90_us", c.p90_us),
                    ("p95_us", c.p95_us),
                    ("p99_us", c.p99_us),
                ] {
                    put(format!("{} {k}", c.class), x);
                }
                if !c.histogram.is_empty() {
                    let b = c
                        .histogram
                        .iter()
                        .map(|b| (b.lower_us, b.upper_us, b.count))
                        .collect();
                    histograms.insert(c.class.clone(), b);
                }
            }
            let users = v
                .config
                .as_ref()
                .ok_or_else(|| bad("no \"config\" section"))?
                .users;
            users_label.or(users).unwrap_or(1)
        }
        Some("calibrate") => {
            put("max_iops".into(), v.max_iops);
            put("max_mbps".into(), v.max_mbps);
            put("latency_us".into(), v.latency_us);
            put("latency_p99_us".into(), v.latency_p99_us);
            users_label.unwrap_or(1)
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
    let (setup, options) = setup_of(v);
    Ok(Observation {
        config,
        load,
        repeat,
        source: source.to_string(),
        metrics,
        histograms,
        setup,
        options,
        nfs: crate::nfs_views::traffic_of(v.kernel_nfs.as_ref(), v.nfs.as_ref()),
    })
}

/// The facts of a result's provenance (older results: version and engine only).
fn setup_of(v: &ResultView) -> (BTreeMap<String, String>, Vec<String>) {
    let mut setup = BTreeMap::new();
    let p = v.provenance.as_ref();
    let version = p.map(|p| p.dbio_version.clone()).or(v.dbio_version.clone());
    if let Some(version) = version {
        setup.insert("dbio version".to_string(), version);
    }
    let engine = p
        .map(|p| p.engine.clone())
        .or_else(|| v.config.as_ref().and_then(|c| c.engine.clone()));
    if let Some(engine) = engine {
        setup.insert("engine".to_string(), engine);
    }
    let Some(p) = p else {
        return (setup, Vec::new());
    };
    setup.insert("git commit".to_string(), p.git_commit.clone());
    if let Some(m) = &p.mount {
        setup.insert(
            "mount".to_string(),
            format!(
                "{} {} on {} ({})",
                m.fs_type, m.source, m.mount_point, m.options
            ),
        );
    }
    if !p.nfs.is_empty() {
        let servers: Vec<String> = p
            .nfs
            .iter()
            .map(|n| {
                let slots = n.slots.map_or(String::new(), |s| format!(", {s} slots"));
                format!(
                    "{}: NFSv{}, rsize {} wsize {}, {} paths, {} connections{slots}",
                    n.server, n.version, n.rsize, n.wsize, n.paths, n.connections
                )
            })
            .collect();
        setup.insert("NFS".to_string(), servers.join("; "));
    }
    (setup, p.args.clone())
}
