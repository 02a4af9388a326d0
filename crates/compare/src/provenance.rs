//! Whether the runs of a comparison differ in something nobody asked for: a different
//! dbio build, or a configuration whose runs got another engine, mount or NFS session
//! than its options explain. A comparison of such runs measures the difference too.

use std::collections::{BTreeMap, BTreeSet};

use crate::observation::Observation;

/// Facts every run of a comparison should share.
const BUILD: [&str; 2] = ["dbio version", "git commit"];

/// Facts of a run's setup, with the options that may change them.
const SETUP: [(&str, &[&str]); 3] = [
    ("engine", &["engine", "target"]),
    ("mount", &["target"]),
    ("NFS", &["target", "conns", "rwsize", "oranfstab"]),
];

/// Options the sweep sets per run, or that only name outputs: never a difference.
const NOT_SETUP: [&str; 8] = [
    "label", "json", "csv", "md", "html", "users", "time", "warmup",
];

/// One sentence per unexpected difference, for the reader (and `--strict`).
pub fn differences(obs: &[Observation], configs: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for fact in BUILD {
        let by_value = values_of(obs.iter(), fact);
        if by_value.len() > 1 {
            out.push(format!("the runs differ in {fact}: {}", listing(&by_value)));
        }
    }
    let of_config = |c: &'_ str| {
        let c = c.to_string();
        obs.iter().filter(move |o| o.config == c)
    };
    for (fact, _) in SETUP {
        for c in configs {
            let by_value = values_of(of_config(c), fact);
            if by_value.len() > 1 {
                out.push(format!(
                    "{c}: its runs differ in {fact}: {}",
                    listing(&by_value)
                ));
            }
        }
    }
    let Some((baseline, others)) = configs.split_first() else {
        return out;
    };
    let base_opts = of_config(baseline).find_map(options);
    for c in others {
        let (Some(b), Some(o)) = (&base_opts, of_config(c).find_map(options)) else {
            continue;
        };
        let changed: BTreeSet<&str> = b
            .keys()
            .chain(o.keys())
            .filter(|k| b.get(*k) != o.get(*k))
            .map(String::as_str)
            .collect();
        for (fact, explained_by) in SETUP {
            let (vb, vo) = (
                common_value(of_config(baseline), fact),
                common_value(of_config(c), fact),
            );
            if vb == vo || explained_by.iter().any(|k| changed.contains(k)) {
                continue;
            }
            let changed: Vec<&str> = changed.iter().copied().collect();
            out.push(format!(
                "{c} against {baseline}: {fact} differs ({} against {}) though their options \
                 ({}) do not explain it",
                vo.as_deref().unwrap_or("unknown"),
                vb.as_deref().unwrap_or("unknown"),
                if changed.is_empty() {
                    "the same".to_string()
                } else {
                    format!("--{}", changed.join(", --"))
                }
            ));
        }
    }
    out
}

/// Value -> configurations and number of runs with it.
fn values_of<'a>(
    obs: impl Iterator<Item = &'a Observation>,
    fact: &str,
) -> BTreeMap<&'a str, (BTreeSet<&'a str>, usize)> {
    let mut by_value: BTreeMap<&str, (BTreeSet<&str>, usize)> = BTreeMap::new();
    for o in obs {
        if let Some(v) = o.setup.get(fact) {
            let e = by_value.entry(v).or_default();
            e.0.insert(&o.config);
            e.1 += 1;
        }
    }
    by_value
}

fn listing(by_value: &BTreeMap<&str, (BTreeSet<&str>, usize)>) -> String {
    by_value
        .iter()
        .map(|(v, (configs, runs))| {
            let configs: Vec<&str> = configs.iter().copied().collect();
            format!(
                "{v} ({} run{}: {})",
                runs,
                if *runs == 1 { "" } else { "s" },
                configs.join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The value most runs have.
fn common_value<'a>(obs: impl Iterator<Item = &'a Observation>, fact: &str) -> Option<String> {
    values_of(obs, fact)
        .into_iter()
        .max_by_key(|(_, (_, n))| *n)
        .map(|(v, _)| v.to_string())
}

/// A run's options by name (values of a repeated option joined), leaving out what the
/// sweep sets per run; `None` where the result does not record them.
fn options(o: &Observation) -> Option<BTreeMap<String, String>> {
    if o.options.is_empty() {
        return None;
    }
    let mut map: BTreeMap<String, String> = BTreeMap::new();
    let words = &o.options[..];
    let mut i = 0;
    while i < words.len() {
        let Some(key) = words[i].strip_prefix("--") else {
            i += 1;
            continue;
        };
        let (key, value) = match key.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => match words.get(i + 1) {
                Some(v) if !v.starts_with("--") => {
                    i += 1;
                    (key.to_string(), v.clone())
                }
                _ => (key.to_string(), "true".to_string()),
            },
        };
        i += 1;
        if NOT_SETUP.contains(&key.as_str()) {
            continue;
        }
        let e = map.entry(key).or_default();
        if !e.is_empty() {
            e.push(' ');
        }
        e.push_str(&value);
    }
    Some(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(config: &str, version: &str, engine: &str, args: &str) -> Observation {
        Observation {
            config: config.into(),
            load: 1,
            repeat: None,
            source: format!("{config}.json"),
            metrics: Default::default(),
            histograms: Default::default(),
            setup: [("dbio version", version), ("engine", engine)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            options: args.split_whitespace().map(str::to_string).collect(),
            nfs: None,
        }
    }

    fn configs() -> Vec<String> {
        vec!["q1".into(), "q8".into()]
    }

    #[test]
    fn runs_that_differ_only_in_their_options_pass() {
        let obs = [
            run(
                "q1",
                "0.1.0",
                "psync",
                "--target /d --outstanding 1 --label repeat=1",
            ),
            run(
                "q8",
                "0.1.0",
                "psync",
                "--target /d --outstanding 8 --label repeat=2",
            ),
            // Another engine, explained by the option that chose it.
            run("q8", "0.1.0", "psync", "--target /d --outstanding 8"),
        ];
        assert_eq!(differences(&obs, &configs()), Vec::<String>::new());
        let obs = [
            run("q1", "0.1.0", "psync", "--engine psync"),
            run("q8", "0.1.0", "io_uring", "--engine io_uring"),
        ];
        assert_eq!(differences(&obs, &configs()), Vec::<String>::new());
    }

    #[test]
    fn a_build_or_an_engine_nobody_asked_for_is_named() {
        let obs = [
            run("q1", "0.1.0", "psync", "--target /d --outstanding 1"),
            run("q8", "0.2.0", "io_uring", "--target /d --outstanding 8"),
        ];
        let d = differences(&obs, &configs());
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(
            d[0].starts_with("the runs differ in dbio version: 0.1.0 (1 run: q1), 0.2.0"),
            "{d:?}"
        );
        assert_eq!(
            d[1],
            "q8 against q1: engine differs (io_uring against psync) though their options \
             (--outstanding) do not explain it"
        );
        // Within one configuration any difference is unexpected.
        let obs = [
            run("q1", "0.1.0", "psync", ""),
            run("q1", "0.1.0", "io_uring", ""),
            run("q8", "0.1.0", "psync", ""),
        ];
        let d = differences(&obs, &configs());
        assert_eq!(
            d,
            ["q1: its runs differ in engine: io_uring (1 run: q1), psync (1 run: q1)"]
        );
    }
}
