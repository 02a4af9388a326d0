//! Which runs were interleaved. A sweep runs every configuration once per repeat and
//! load, one right after another, so whatever drifts (the machine's other work, the
//! storage's state) moves the runs of one repeat alike, and a comparison tests them as
//! pairs. That a result is a sweep's run is known from the sweep's manifest
//! (`sweep.json`), which lists each run's result file with its configuration, load and
//! repeat; results given any other way (sets by hand, AWR imports) stay unpaired.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::observation::Observation;

/// The manifest's file name in a sweep directory.
const MANIFEST: &str = "sweep.json";
/// Directories above a result where its sweep's manifest may be (`runs/CONFIG/FILE`).
const LEVELS: usize = 3;
/// Largest manifest read (a sweep's largest plan is far below).
const MANIFEST_MAX: u64 = 64 << 20;

/// Where a run sits in its sweep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepRun {
    /// The sweep directory, canonical.
    pub sweep: PathBuf,
    pub config: String,
    pub users: u32,
    pub repeat: u32,
}

/// The runs of sweeps among the observations, by their source.
#[derive(Debug, Clone, Default)]
pub struct Interleaved {
    runs: BTreeMap<String, SweepRun>,
}

/// The parts of a manifest read here (it is `experiment::sweep::Manifest`).
#[derive(Deserialize)]
struct ManifestView {
    kind: String,
    runs: Vec<RunView>,
}

#[derive(Deserialize)]
struct RunView {
    config: String,
    users: u32,
    repeat: u32,
    file: String,
}

impl Interleaved {
    /// Finds the sweep of each observation read from a result file: the manifest in a
    /// directory above it that lists the file under the configuration, load and repeat
    /// the result's labels give. A manifest that cannot be read leaves its runs unpaired.
    pub fn find(obs: &[Observation]) -> Interleaved {
        let mut manifests: BTreeMap<PathBuf, Option<BTreeMap<PathBuf, RunView>>> = BTreeMap::new();
        let mut runs = BTreeMap::new();
        for o in obs {
            let Ok(file) = std::fs::canonicalize(&o.source) else {
                continue;
            };
            for dir in file.ancestors().skip(1).take(LEVELS) {
                let listed = manifests
                    .entry(dir.to_path_buf())
                    .or_insert_with(|| read_manifest(dir));
                let Some(listed) = listed else {
                    continue;
                };
                let Ok(rel) = file.strip_prefix(dir) else {
                    continue;
                };
                let found = listed.get(rel);
                if let Some(r) = found.filter(|r| {
                    r.config == o.config && r.users == o.load && Some(r.repeat) == o.repeat
                }) {
                    runs.insert(
                        o.source.clone(),
                        SweepRun {
                            sweep: dir.to_path_buf(),
                            config: r.config.clone(),
                            users: r.users,
                            repeat: r.repeat,
                        },
                    );
                }
                break;
            }
        }
        Interleaved { runs }
    }

    /// Records that the observation read from `source` is this run of a sweep.
    pub fn insert(&mut self, source: &str, run: SweepRun) {
        self.runs.insert(source.to_string(), run);
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The pairs (index in `base`, index in `other`) of the runs of the same repeat, in
    /// repeat order, where both groups are runs of one sweep, each of its configuration at
    /// the same load, with the same repeats once each; else `None`.
    pub fn pairs(
        &self,
        base: &[&Observation],
        other: &[&Observation],
    ) -> Option<Vec<(usize, usize)>> {
        let side = |g: &[&Observation]| -> Option<BTreeMap<u32, (usize, &SweepRun)>> {
            let mut by_repeat = BTreeMap::new();
            for (i, o) in g.iter().enumerate() {
                let run = self.runs.get(&o.source)?;
                let consistent =
                    run.config == o.config && run.users == o.load && Some(run.repeat) == o.repeat;
                if !consistent || by_repeat.insert(run.repeat, (i, run)).is_some() {
                    return None;
                }
            }
            Some(by_repeat)
        };
        let (b, o) = (side(base)?, side(other)?);
        let first = b.values().next()?.1;
        let one_sweep = b
            .values()
            .chain(o.values())
            .all(|(_, r)| r.sweep == first.sweep && r.users == first.users);
        if !one_sweep || !b.keys().eq(o.keys()) {
            return None;
        }
        Some(
            b.values()
                .zip(o.values())
                .map(|(x, y)| (x.0, y.0))
                .collect(),
        )
    }
}

/// The runs a sweep's manifest lists, by result file relative to the sweep directory.
fn read_manifest(dir: &Path) -> Option<BTreeMap<PathBuf, RunView>> {
    let path = dir.join(MANIFEST);
    if std::fs::metadata(&path).ok()?.len() > MANIFEST_MAX {
        return None;
    }
    let text = std::fs::read_to_string(&path).ok()?;
    let m: ManifestView = serde_json::from_str(&text).ok()?;
    (m.kind == "sweep").then(|| {
        m.runs
            .into_iter()
            .map(|r| (PathBuf::from(&r.file), r))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(dir: &Path, config: &str, repeat: u32) -> Observation {
        let file = dir.join(format!("runs/{config}/u2-r{repeat}.json"));
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "{}").unwrap();
        Observation {
            config: config.into(),
            load: 2,
            repeat: Some(repeat),
            source: file.display().to_string(),
            metrics: [("iops".to_string(), 1.0)].into_iter().collect(),
            histograms: Default::default(),
            setup: Default::default(),
            options: Vec::new(),
            nfs: None,
        }
    }

    fn manifest(dir: &Path, configs: &[&str], repeats: u32) {
        let mut runs = Vec::new();
        for r in 1..=repeats {
            for c in configs {
                runs.push(serde_json::json!({
                    "index": runs.len(), "config": c, "users": 2, "repeat": r,
                    "file": format!("runs/{c}/u2-r{r}.json"), "status": "done",
                }));
            }
        }
        let m = serde_json::json!({"kind": "sweep", "format_version": 1, "runs": runs});
        std::fs::write(dir.join(MANIFEST), m.to_string()).unwrap();
    }

    #[test]
    fn a_sweeps_runs_pair_by_repeat_and_others_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let sweep = dir.path().join("sweep");
        let hand = dir.path().join("hand");
        let a: Vec<Observation> = (1..=3).map(|r| result(&sweep, "a", r)).collect();
        let b: Vec<Observation> = [3, 1, 2].map(|r| result(&sweep, "b", r)).to_vec();
        // Results labelled alike but run by hand, with no manifest.
        let c: Vec<Observation> = (1..=3).map(|r| result(&hand, "c", r)).collect();
        manifest(&sweep, &["a", "b"], 3);
        let all: Vec<Observation> = a.iter().chain(&b).chain(&c).cloned().collect();
        let found = Interleaved::find(&all);
        fn refs(v: &[Observation]) -> Vec<&Observation> {
            v.iter().collect()
        }
        assert_eq!(
            found.pairs(&refs(&a), &refs(&b)),
            Some(vec![(0, 1), (1, 2), (2, 0)])
        );
        assert_eq!(found.pairs(&refs(&a), &refs(&c)), None);
        // A repeat missing on one side: the sets differ, no pairs.
        assert_eq!(found.pairs(&refs(&a[..2]), &refs(&b)), None);
        // A set given by hand that mixes the sweep's configurations under one name.
        let mut mixed = refs(&a);
        mixed.extend(refs(&b));
        assert_eq!(found.pairs(&refs(&a), &mixed), None);
        // A result whose label disagrees with the manifest is not taken for its run.
        let mut relabelled = b.clone();
        relabelled[0].repeat = Some(9);
        let f = Interleaved::find(&relabelled);
        assert!(!f.runs.contains_key(&relabelled[0].source) && f.runs.len() == 2);
        assert!(Interleaved::find(&c).is_empty());
    }
}
