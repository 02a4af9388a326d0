//! A run's options from a slob.conf (`dbio run --slob-conf`; `dbio replay
//! --slob-conf` the same way). The reading and mapping are
//! [`dbio_sources::slob`]'s; this sets [`RunOptions`] from them.

use dbio_sources::slob::{self, Knob, SlobConf, MAX_SESSIONS};

use crate::{ExperimentError, RunOptions};

/// One row of the table shown before the run: the setting as in the file,
/// what it became, and the command-line option that won over it, if one did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlobRow {
    pub slob: String,
    pub dbio: String,
    pub overridden_by: Option<&'static str>,
}

impl RunOptions {
    /// Sets the options `conf` gives, except where `given` says the command
    /// line gave the option (named as `dbio run` names it, e.g.
    /// `--update-pct`): explicit options win. On entry `users` counts SLOB
    /// schemas (runit.sh's argument); each runs THREADS_PER_SCHEMA sessions,
    /// and the data set is SCALE per schema. Without `--profile` or
    /// `--workload`, the classes become those SLOB's mix needs. Returns the
    /// rows of the table to show.
    pub fn apply_slob(
        &mut self,
        conf: &SlobConf,
        given: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<SlobRow>, ExperimentError> {
        let mut rows = self.apply_settings(conf, given, &|_| false)?;
        let per_class_rate = self.rate.as_ref().is_some_and(|r| !r.is_total());
        if self.profile.is_none() && self.classes.is_empty() && !per_class_rate {
            // oltp's (and runit.sh's) 25% updates when the file gives none.
            let classes = slob::classes(self.update_pct.unwrap_or(25), self.scan_pct.unwrap_or(0));
            let names: Vec<&str> = classes.iter().map(|c| c.name()).collect();
            rows.push(SlobRow {
                slob: "(UPDATE_PCT, SCAN_PCT)".into(),
                dbio: format!("--workload {}", names.join(",")),
                overridden_by: None,
            });
            self.classes = classes;
        }
        Ok(rows)
    }

    /// As [`RunOptions::apply_slob`], for a replay of a workload model: the
    /// model's rates and sizes decide the mix (UPDATE_PCT, SCAN_PCT,
    /// REDO_STRESS, SCAN_TABLE_SZ, BLOCK_SZ), and its rates pace the
    /// arrivals, so neither SLOB's think time nor a fixed number of
    /// statements (WORK_LOOP, WORK_UNIT) applies. Sessions, hot spot,
    /// RUN_TIME and SCALE do. Returns the rows of the table and the settings
    /// not taken, as the file spells them.
    pub fn apply_slob_to_replay(
        &mut self,
        conf: &SlobConf,
        given: &dyn Fn(&str) -> bool,
    ) -> Result<(Vec<SlobRow>, Vec<String>), ExperimentError> {
        let rows = self.apply_settings(conf, given, &model_decides)?;
        let not_taken = conf
            .settings
            .iter()
            .filter(|s| model_decides(&s.knob))
            .map(|s| s.slob.clone())
            .collect();
        Ok((rows, not_taken))
    }

    /// Sets the options of the settings but those `skip` names; the rows
    /// of those set or won over by the command line.
    fn apply_settings(
        &mut self,
        conf: &SlobConf,
        given: &dyn Fn(&str) -> bool,
        skip: &dyn Fn(&Knob) -> bool,
    ) -> Result<Vec<SlobRow>, ExperimentError> {
        let schemas = self.users;
        // First the block size: SCALE and SCAN_TABLE_SZ in blocks depend on it.
        for s in &conf.settings {
            if let Knob::BlockSize(b) = s.knob {
                if !given("--block-size") && !skip(&s.knob) {
                    self.block_size = u64::from(b);
                }
            }
        }
        let mut rows = Vec::new();
        for s in conf.settings.iter().filter(|s| !skip(&s.knob)) {
            let wins = s.knob.options().iter().copied().find(|o| given(o));
            rows.push(SlobRow {
                slob: s.slob.clone(),
                dbio: s.knob.describe(self.block_size, schemas),
                overridden_by: wins,
            });
            if wins.is_none() {
                self.set(&s.knob, schemas).map_err(|msg| {
                    ExperimentError::Config(format!(
                        "{}: line {}: {}: {msg}",
                        conf.path.display(),
                        s.line,
                        s.slob
                    ))
                })?;
            }
        }
        Ok(rows)
    }

    fn set(&mut self, knob: &Knob, schemas: u32) -> Result<(), TooManySessions> {
        match knob {
            Knob::UpdatePct(p) => self.update_pct = Some(*p),
            Knob::ScanPct(p) => self.scan_pct = Some(*p),
            Knob::RedoStress(r) => self.redo_stress = Some(*r),
            Knob::Time(d) => self.time = Some(*d),
            Knob::Loops(n) => self.loops = n.or(self.loops),
            Knob::Scale(s) => {
                let per = s.bytes(self.block_size);
                self.size = Some(per.saturating_mul(u64::from(schemas)));
                self.scale = None;
            }
            Knob::SessionsPerSchema(t) => {
                let users = u64::from(schemas) * u64::from(*t);
                if users > u64::from(MAX_SESSIONS) {
                    return Err(TooManySessions {
                        schemas,
                        per_schema: *t,
                    });
                }
                self.users = users as u32;
            }
            Knob::Hotspot(Some(h)) => {
                self.hotspot_mb = h.mb;
                self.hotspot_offset_mb = h.offset_mb;
                self.hotspot_frequency = h.frequency;
            }
            Knob::Hotspot(None) => self.hotspot_mb = 0,
            Knob::Think(Some(t)) => {
                self.think_min = t.min;
                self.think_max = t.max;
                self.think_frequency = t.frequency;
            }
            Knob::Think(None) => self.think_frequency = 0,
            Knob::Multiblock(s) => {
                // At most 1 MiB: fits.
                self.multiblock_bytes = Some(slob::multiblock_bytes(*s, self.block_size) as u32);
            }
            Knob::BlockSize(_) | Knob::WorkUnit(_) | Knob::Off(_) => {}
        }
        Ok(())
    }
}

/// Whether a replayed model, not the slob.conf, decides what `knob` sets.
fn model_decides(knob: &Knob) -> bool {
    matches!(
        knob,
        Knob::UpdatePct(_)
            | Knob::ScanPct(_)
            | Knob::RedoStress(_)
            | Knob::Multiblock(_)
            | Knob::BlockSize(_)
            | Knob::Loops(Some(_))
            | Knob::WorkUnit(_)
            | Knob::Think(Some(_))
    )
}

/// A slob.conf whose sessions exceed what SLOB runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{schemas} schemas (--users) x {per_schema} sessions is above SLOB's {MAX_SESSIONS}")]
struct TooManySessions {
    schemas: u32,
    per_schema: u32,
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use dbio_workload::{IoClass, RedoStress};

    use super::*;
    use crate::RunPlan;

    const CONF: &str = "UPDATE_PCT=40\nSCAN_PCT=10\nRUN_TIME=60\nWORK_LOOP=100\n\
        WORK_UNIT=16\nSCALE=2048\nSCAN_TABLE_SZ=32\nREDO_STRESS=HEAVY\nTHREADS_PER_SCHEMA=3\n\
        DO_HOTSPOT=TRUE\nHOTSPOT_MB=4\nHOTSPOT_OFFSET_MB=2\nHOTSPOT_FREQUENCY=5\n\
        SYSDBA_PASSWD=x\n";

    fn conf() -> SlobConf {
        SlobConf::parse_str(Path::new("slob.conf"), CONF).unwrap()
    }

    #[test]
    fn a_slob_conf_sets_the_run_and_its_plan() {
        let mut o = RunOptions {
            users: 2,
            ..RunOptions::default()
        };
        let rows = o.apply_slob(&conf(), &|_| false).unwrap();
        assert_eq!(o.update_pct, Some(40));
        assert_eq!(o.scan_pct, Some(10));
        assert_eq!(o.time, Some(Duration::from_secs(60)));
        assert_eq!(o.loops, Some(1600));
        // 2048 blocks of 8 KiB per schema, 2 schemas; 3 sessions each.
        assert_eq!(o.size, Some(2 * 2048 * 8192));
        assert_eq!(o.users, 6);
        assert_eq!(o.redo_stress, Some(RedoStress::Heavy));
        assert_eq!(
            (o.hotspot_mb, o.hotspot_offset_mb, o.hotspot_frequency),
            (4, 2, 5)
        );
        assert_eq!(o.multiblock_bytes, Some(32 * 8192));
        assert!(rows.iter().all(|r| r.overridden_by.is_none()));
        assert_eq!(
            rows.last().unwrap().dbio,
            "--workload single-block-read,multiblock-read,dbwr-write,redo-write"
        );
        let plan = RunPlan::new(&o).unwrap();
        assert_eq!(plan.profile, "custom");
        assert_eq!(plan.workload.update_pct, 40);
        assert_eq!(plan.workload.multiblock_bytes, 32 * 8192);
        assert_eq!(plan.workload.classes.len(), 4);
        assert_eq!(plan.loops, Some(1600));
        assert_eq!(plan.time, Some(Duration::from_secs(60)));
    }

    #[test]
    fn options_given_on_the_command_line_win() {
        let mut o = RunOptions {
            update_pct: Some(5),
            time: Some(Duration::from_secs(2)),
            classes: vec![IoClass::SingleBlockRead],
            ..RunOptions::default()
        };
        let given = |opt: &str| matches!(opt, "--update-pct" | "--time" | "--hotspot-mb");
        let rows = o.apply_slob(&conf(), &given).unwrap();
        assert_eq!(o.update_pct, Some(5));
        assert_eq!(o.time, Some(Duration::from_secs(2)));
        assert_eq!(o.hotspot_mb, 0);
        assert_eq!(o.classes, vec![IoClass::SingleBlockRead]);
        assert_eq!(o.scan_pct, Some(10), "not given: from the file");
        let won: Vec<_> = rows.iter().filter_map(|r| r.overridden_by).collect();
        assert_eq!(won, ["--update-pct", "--time", "--hotspot-mb"]);
    }

    #[test]
    fn under_a_replayed_model_the_mix_is_not_taken() {
        let mut o = RunOptions {
            users: 2,
            block_size: 4096,
            ..RunOptions::default()
        };
        let (rows, not_taken) = o.apply_slob_to_replay(&conf(), &|_| false).unwrap();
        assert_eq!(
            not_taken,
            [
                "UPDATE_PCT=40",
                "SCAN_PCT=10",
                "WORK_LOOP=100 WORK_UNIT=16",
                "SCAN_TABLE_SZ=32",
                "WORK_UNIT=16",
                "REDO_STRESS=HEAVY"
            ]
        );
        assert!(rows.iter().all(|r| !not_taken.contains(&r.slob)));
        assert_eq!(
            (o.update_pct, o.scan_pct, o.redo_stress),
            (None, None, None)
        );
        assert_eq!((o.loops, o.multiblock_bytes), (None, None));
        assert!(o.classes.is_empty(), "the model names the classes");
        // Sessions, run time, hot spot and SCALE (in the model's blocks) apply.
        assert_eq!(o.users, 6);
        assert_eq!(o.time, Some(Duration::from_secs(60)));
        assert_eq!(o.hotspot_mb, 4);
        assert_eq!(o.size, Some(2 * 2048 * 4096));
    }

    #[test]
    fn too_many_sessions_are_refused_naming_the_file() {
        let mut o = RunOptions {
            users: 2000,
            ..RunOptions::default()
        };
        let e = o.apply_slob(&conf(), &|_| false).unwrap_err().to_string();
        assert!(
            e.starts_with("slob.conf: line 9: THREADS_PER_SCHEMA=3: 2000 schemas"),
            "{e}"
        );
    }
}
