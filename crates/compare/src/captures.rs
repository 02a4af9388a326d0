//! A database capture as an observation for `dbio compare`: the capture's I/O under
//! the figure names a dbio run gives the same I/O (`single-block-read iops`,
//! `redo-write mean_us`, `iops`, `mbps`, ...), so that production and a run of its
//! replay sit side by side in one comparison. Which sources are captures, and what
//! model each gives, is dbio-sources' to say ([`Source::capture`]).

use std::path::Path;

use dbio_sources::source::{Captured, Source};

use crate::{CompareError, Observation};

/// `c` as one observation of `config` at `users`. Without `users` the load is the most
/// client sessions seen, which is the replay's default number of users: the capture
/// then pairs with a run of its replay. Figures are the model's classes (the I/O
/// replayed): per class `iops` (every I/O is counted), `mbps` (rate times the size
/// per I/O the replay moves) and `mean_us` only where the database timed the I/O
/// and the time is storage latency (PostgreSQL's block writes are page-cache copies:
/// never). Totals `iops` and `mbps` over those classes.
pub fn observation(
    c: &Captured,
    config: &str,
    users: Option<u32>,
    repeat: Option<u32>,
    source: &str,
) -> Observation {
    let load = users.unwrap_or(c.sessions).max(1);
    Observation::of_model(&c.model, config, load, repeat, source)
}

/// A capture file's text as an observation, for the sources that are captures
/// (`source`); None for one that is not. Its configuration is `set` where the inputs
/// came in sets, else the file name without its extension (a capture carries no
/// labels). A capture that cannot be used is one error naming the file.
pub fn observe_capture(
    source: Source,
    text: &str,
    path: &Path,
    set: Option<&str>,
) -> Option<Result<Observation, CompareError>> {
    let at = path.display().to_string();
    let captured = source.capture(text, &at)?;
    Some(match captured {
        Ok(c) => {
            let config = Observation::config_of_file(path, set);
            Ok(observation(&c, &config, None, None, &at))
        }
        Err(what) => Err(CompareError::Format { path: at, what }),
    })
}

#[cfg(test)]
mod tests {
    use dbio_sources::mysql::fixtures::mariadb;
    use dbio_sources::pg::fixtures::{pg15, settings};
    use dbio_sources::pg::PgCapture;

    use super::*;
    use crate::{compare, Options, Verdict};

    /// A PostgreSQL capture as an observation, as a capture file of it gives one.
    fn pg_observation(
        c: &PgCapture,
        config: &str,
        users: Option<u32>,
        repeat: Option<u32>,
        source: &str,
    ) -> Result<Observation, String> {
        let text = serde_json::to_string(c).unwrap();
        let c = Source::Postgres.capture(&text, source).unwrap()?;
        Ok(observation(&c, config, users, repeat, source))
    }

    fn observe_file(
        text: &str,
        path: &Path,
        set: Option<&str>,
    ) -> Result<Observation, CompareError> {
        observe_capture(Source::of(text), text, path, set).unwrap()
    }

    #[test]
    fn a_capture_has_the_figures_of_a_run() {
        let o = pg_observation(&pg15(), "prod", None, Some(2), "c.json").unwrap();
        assert_eq!((o.config.as_str(), o.load, o.repeat), ("prod", 4, Some(2)));
        let m = |k: &str| o.metrics.get(k).copied();
        // 50,000 reads in 100 s taking 25 s; 2,000 WAL flushes taking 2 s; 1,000
        // buffered block writes.
        assert_eq!(m("single-block-read iops"), Some(500.0));
        assert_eq!(m("single-block-read mean_us"), Some(500.0));
        assert_eq!(m("single-block-read mbps"), Some(500.0 * 8192.0 / 1e6));
        assert_eq!(m("redo-write iops"), Some(20.0));
        assert_eq!(m("redo-write mean_us"), Some(1000.0));
        assert_eq!(m("dbwr-write iops"), Some(10.0));
        // Copies into the page cache, not storage latency.
        assert_eq!(m("dbwr-write mean_us"), None);
        assert_eq!(m("iops"), Some(530.0));
        // Summed over the classes, so to rounding.
        assert!((m("mbps").unwrap() - 530.0 * 8192.0 / 1e6).abs() < 1e-9);
        assert!(o.histograms.is_empty());
        let at = pg_observation(&pg15(), "prod", Some(16), None, "c.json").unwrap();
        assert_eq!(at.load, 16);
    }

    #[test]
    fn untimed_figures_are_absent_not_zero() {
        let mut c = pg15();
        c.settings = settings(&[("track_io_timing", "off"), ("track_wal_io_timing", "off")]);
        let o = pg_observation(&c, "prod", None, None, "c.json").unwrap();
        assert!(o.metrics.keys().all(|k| !k.ends_with("mean_us")), "{o:?}");
        assert_eq!(o.metrics.get("single-block-read iops"), Some(&500.0));
    }

    #[test]
    fn two_captures_compare_on_read_latency() {
        let a = pg_observation(&pg15(), "a", None, None, "a.json").unwrap();
        let mut slow = pg15();
        slow.end.views.get_mut("pg_stat_database").unwrap()[1]["blk_read_time"] =
            serde_json::json!(50_500.0);
        let b = pg_observation(&slow, "b", None, None, "b.json").unwrap();
        assert_eq!(b.metrics["single-block-read mean_us"], 1000.0);
        let cmp = compare(&[a, b], &Options::default()).unwrap();
        assert_eq!(cmp.class.as_deref(), Some("single-block-read"));
        let p = cmp
            .pairs
            .iter()
            .find(|p| p.metric == "single-block-read mean_us")
            .unwrap();
        assert_eq!(p.effect.as_ref().unwrap().factor, 0.5);
        // One capture a side: no test can tell.
        assert_eq!(p.verdict, Verdict::TooFewRepeats);
    }

    #[test]
    fn a_capture_file_is_named_by_its_set_or_stem_and_a_bad_one_by_its_file() {
        let text = serde_json::to_string_pretty(&pg15()).unwrap();
        let o = observe_file(&text, Path::new("caps/prodA.json"), None).unwrap();
        assert_eq!(
            (o.config.as_str(), o.source.as_str()),
            ("prodA", "caps/prodA.json")
        );
        let o = observe_file(&text, Path::new("caps/prodA.json"), Some("set1")).unwrap();
        assert_eq!(o.config, "set1");

        let mut c = pg15();
        c.end.postmaster_start = "2026-11-27 07:00:30+00".into();
        let text = serde_json::to_string(&c).unwrap();
        let e = observe_file(&text, Path::new("caps/prodB.json"), None)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("caps/prodB.json: the server restarted between the snapshots"),
            "{e}"
        );
        assert_eq!(e.matches("prodB.json").count(), 1, "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn a_mysql_capture_file_is_observed_at_its_most_sessions() {
        let text = serde_json::to_string_pretty(&mariadb()).unwrap();
        let path = std::path::Path::new("/x/prod.json");
        let o = observe_file(&text, path, None).unwrap();
        assert_eq!((o.config.as_str(), o.load), ("prod", 8));
        assert_eq!(o.metrics.get("single-block-read iops"), Some(&200.0));
        assert_eq!(o.metrics.get("redo-write iops"), Some(&100.0));
        assert_eq!(o.metrics.get("redo-write mean_us"), None);
    }
}
