//! The aging experiment without root: directories of a scratch dir stand in
//! for the loop file systems (the real ones are tested by `dbio age` in
//! the CLI's tests), so that the series loop, the rounds, the failures and
//! the events can be checked anywhere.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use dbio_engine::EngineKind;
use dbio_experiment::age::{
    age, AgeEvent, AgeOn, AgePlan, FileSystems, Fill, HostError, LoopImage, Mounted, BLOCK,
};
use dbio_workload::DatasetSpec;

/// Directories standing in for loop file systems: each "file system" is a
/// new directory, 32 MiB large and empty as far as `fill` says.
struct DirFileSystems {
    root: PathBuf,
    /// Every file system made, by name, and whether it was taken down.
    made: Rc<RefCell<Vec<(String, bool)>>>,
    /// `make` refuses this file system.
    refuse: &'static str,
    /// `fragments` fails with ENOSPC.
    full: bool,
}

struct DirMount {
    mnt: PathBuf,
    made: Rc<RefCell<Vec<(String, bool)>>>,
}

impl Mounted for DirMount {
    fn mnt(&self) -> &Path {
        &self.mnt
    }
    fn direct_io(&self) -> bool {
        true
    }
    fn take_down(&mut self) -> Result<(), HostError> {
        let name = self.mnt.file_name().unwrap().to_string_lossy().into_owned();
        let mut made = self.made.borrow_mut();
        made.iter_mut().find(|(n, _)| *n == name).unwrap().1 = true;
        Ok(())
    }
}

impl FileSystems for DirFileSystems {
    fn make(
        &mut self,
        fs: &str,
        name: &str,
        _bytes: u64,
        _direct_io: bool,
    ) -> Result<Box<dyn Mounted>, HostError> {
        if fs == self.refuse {
            return Err(format!("mkfs.{fs}: refused").into());
        }
        let mnt = self.root.join(name);
        std::fs::create_dir(&mnt)?;
        self.made.borrow_mut().push((name.to_string(), false));
        Ok(Box::new(DirMount {
            mnt,
            made: self.made.clone(),
        }))
    }
    fn fill(&self, _path: &Path) -> Result<Fill, HostError> {
        Ok(Fill {
            used: 0,
            available: 32 << 20,
            pct: 40.0,
        })
    }
    fn fragments(&self, _file: &Path) -> Result<u64, HostError> {
        if self.full {
            return Err(Box::new(std::io::Error::from_raw_os_error(libc::ENOSPC)));
        }
        Ok(3)
    }
    fn copies_on_write(&self, fs: &str) -> bool {
        fs == "btrfs"
    }
}

fn plan(images: &[&str]) -> AgePlan {
    AgePlan {
        on: AgeOn::Loops {
            images: images
                .iter()
                .map(|fs| LoopImage {
                    fs: fs.to_string(),
                    bytes: 16 << 20,
                })
                .collect(),
            fills: vec![50],
            size: 16 << 20,
        },
        spec: DatasetSpec::new(4 << 20, BLOCK).unwrap(),
        engine: EngineKind::Psync,
        direct: false,
        rounds: 1,
        updates: 200,
        measure: Duration::from_millis(50),
        dir: "scratch".into(),
        notes: vec![],
        labels: Default::default(),
    }
}

fn fss(refuse: &'static str, full: bool) -> (tempfile::TempDir, DirFileSystems) {
    let dir = tempfile::tempdir().unwrap();
    let fss = DirFileSystems {
        root: dir.path().to_path_buf(),
        made: Rc::default(),
        refuse,
        full,
    };
    (dir, fss)
}

/// Events as short strings, in order.
fn seen(ev: AgeEvent) -> Option<String> {
    match ev {
        AgeEvent::Making { fs, fill, .. } => Some(format!("making {fs} {fill}")),
        AgeEvent::Filling { bytes } => Some(format!("filling {bytes}")),
        AgeEvent::Creating { .. } => None,
        AgeEvent::Created => Some("created".into()),
        AgeEvent::Round { label, point, .. } => Some(format!("{label} round {}", point.round)),
        AgeEvent::SeriesFailed { fs, error, .. } => Some(format!("{fs} failed: {error}")),
    }
}

#[test]
fn every_series_runs_its_rounds_and_a_refused_mkfs_fails_only_its_own() {
    let (dir, mut hooks) = fss("xfs", false);
    let mut events = Vec::new();
    let plan = plan(&["ext4", "xfs"]);
    let out = age(&plan, &mut hooks, &AtomicBool::new(false), &mut |ev| {
        events.extend(seen(ev))
    });
    let r = &out.result;
    assert!(out.failed && out.error.is_none() && !r.interrupted);
    assert_eq!(r.series.len(), 2);
    let ext4 = &r.series[0];
    assert_eq!(
        ext4.points.iter().map(|p| p.round).collect::<Vec<_>>(),
        [0, 1]
    );
    assert_eq!(ext4.points[1].updates, 200);
    assert_eq!(ext4.points[1].extents_per_file, 3.0);
    assert!(ext4.points[1].read_mean_us > 0.0 && ext4.points[1].scan_mbps > 0.0);
    assert!(ext4.loop_direct_io && ext4.error.is_none());
    assert_eq!(r.series[1].error.as_deref(), Some("mkfs.xfs: refused"));
    assert_eq!(*hooks.made.borrow(), [("ext4-50".to_string(), true)]);
    // Half of 32 MiB less the data set and its redo log, in filler files.
    let total: u64 = plan.spec.files().iter().map(|f| f.size).sum();
    let filler = (16 << 20) - total;
    let written: u64 = std::fs::read_dir(dir.path().join("ext4-50/filler"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert_eq!(written, filler.div_ceil(1 << 20) << 20);
    assert_eq!(
        events,
        [
            "making ext4 50".to_string(),
            format!("filling {filler}"),
            "created".into(),
            "ext4 50% round 0".into(),
            "ext4 50% round 1".into(),
            "making xfs 50".into(),
            "xfs failed: mkfs.xfs: refused".into(),
        ]
    );
}

#[test]
fn a_full_copy_on_write_file_system_is_explained_and_still_taken_down() {
    let (_dir, mut hooks) = fss("", true);
    let out = age(
        &plan(&["btrfs"]),
        &mut hooks,
        &AtomicBool::new(false),
        &mut |_| {},
    );
    let e = out.result.series[0].error.as_deref().unwrap();
    assert!(e.starts_with("No space left"), "{e}");
    assert!(e.contains("copy on write allocates anew"), "{e}");
    assert_eq!(*hooks.made.borrow(), [("btrfs-50".to_string(), true)]);
}

#[test]
fn a_stop_before_the_first_series_makes_nothing_and_says_so() {
    let (_dir, mut hooks) = fss("", false);
    let out = age(
        &plan(&["ext4"]),
        &mut hooks,
        &AtomicBool::new(true),
        &mut |_| {},
    );
    assert!(out.result.series.is_empty() && hooks.made.borrow().is_empty());
    assert!(out.result.interrupted);
    assert_eq!(
        out.result.stop_reason.as_deref(),
        Some("interrupted by signal")
    );
}
