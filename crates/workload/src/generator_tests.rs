use super::*;
use crate::dataset::{Dataset, DatasetSpec};
use std::path::Path;

fn layout(mib: u64) -> Layout {
    Layout::of(&Dataset::planned(
        Path::new("/x"),
        &DatasetSpec::new(mib << 20, 8192).unwrap(),
    ))
}

fn counts(cfg: &WorkloadConfig, n: usize) -> [usize; COUNT] {
    let l = layout(64);
    let mut g = Generator::new(cfg, &l, 0, 1, 7).unwrap();
    let mut c = [0; COUNT];
    for _ in 0..n {
        c[g.next_op().class.index()] += 1;
    }
    c
}

#[test]
fn layout_skips_headers() {
    let l = layout(64);
    assert_eq!(l.data_files, vec![0, 1]);
    assert_eq!(l.first_block, 1);
    assert_eq!(l.blocks_per_file, (32 << 20) / 8192 - 1);
    assert_eq!(l.redo, Some((2, 8192, 8 << 20)));
}

#[test]
fn single_block_reads_stay_in_data_blocks() {
    let l = layout(64);
    let mut g = Generator::new(&WorkloadConfig::new(8192), &l, 0, 1, 1).unwrap();
    for _ in 0..10_000 {
        let op = g.next_op();
        assert_eq!(op.class, IoClass::SingleBlockRead);
        assert_eq!(op.len, 8192);
        assert_eq!(op.dir, IoDir::Read);
        assert!(op.file < 2);
        assert!(
            op.offset >= 8192 && op.offset.is_multiple_of(8192) && op.offset + 8192 <= 32 << 20
        );
    }
}

#[test]
fn oltp_mix_follows_update_pct() {
    let c = counts(&Profile::Oltp.config(8192), 40_000);
    let sbr = c[IoClass::SingleBlockRead.index()] as f64;
    let redo = c[IoClass::RedoWrite.index()] as f64;
    let dbwr = c[IoClass::DbwrWrite.index()] as f64;
    // 25% updates: each one a redo write and a DBWR write (in batches).
    assert!((redo / (sbr + redo) - 0.25).abs() < 0.02, "{c:?}");
    assert!((dbwr / redo - 1.0).abs() < 0.1, "{c:?}");
    assert_eq!(
        c[IoClass::MultiblockRead.index()] + c[IoClass::DirectRead.index()],
        0
    );
}

#[test]
fn dbwr_writes_come_in_batches() {
    let mut cfg = WorkloadConfig::new(8192);
    cfg.classes = vec![IoClass::SingleBlockRead, IoClass::DbwrWrite];
    cfg.update_pct = 50;
    let l = layout(64);
    let mut g = Generator::new(&cfg, &l, 0, 1, 3).unwrap();
    let ops: Vec<IoClass> = (0..5000).map(|_| g.next_op().class).collect();
    let mut run = 0;
    for c in ops {
        if c == IoClass::DbwrWrite {
            run += 1;
        } else {
            assert!(run == 0 || run % 8 == 0, "batch of {run}");
            run = 0;
        }
    }
}

#[test]
fn redo_is_sequential_sync_and_sized_by_stress() {
    let l = layout(64);
    for (stress, lo, hi) in [
        (RedoStress::Lite, 512, 16384),
        (RedoStress::Heavy, 65536, 1 << 20),
        (RedoStress::Sized(24), 12288, 12288),
    ] {
        let mut cfg = Profile::Redo.config(8192);
        cfg.redo_stress = stress;
        let mut g = Generator::new(&cfg, &l, 0, 1, 5).unwrap();
        let mut next = None;
        for _ in 0..2000 {
            let op = g.next_op();
            assert_eq!(op.durability, Durability::Dsync);
            assert!(op.dir == IoDir::Write && op.file == 2);
            assert!((lo..=hi).contains(&op.len) && op.len.is_multiple_of(512));
            assert!(op.offset >= 8192 && op.offset + u64::from(op.len) <= 8 << 20);
            if let Some(n) = next {
                assert!(op.offset == n || op.offset == 8192, "not sequential");
            }
            next = Some(op.offset + u64::from(op.len));
        }
    }
}

/// Writes of whole 4 KiB blocks (a PostgreSQL WAL's 8 KiB) stay on 4 KiB
/// boundaries for every user, as O_DIRECT on a disk of 4 KiB sectors needs.
#[test]
fn whole_block_redo_writes_stay_on_4k_boundaries_for_every_user() {
    let l = layout(64);
    let mut cfg = Profile::Redo.config(8192);
    cfg.redo_stress = RedoStress::Sized(32);
    for user in 0..7 {
        let mut g = Generator::new(&cfg, &l, user, 7, 5).unwrap();
        for _ in 0..1000 {
            let op = g.next_op();
            assert_eq!(op.offset % 4096, 0, "user {user}: offset {}", op.offset);
        }
    }
}

/// On a log device of 4 KiB logical blocks (ext4 on zram) each redo write is
/// whole 4 KiB units at 4 KiB offsets: a 512-byte O_DIRECT write fails there.
#[test]
fn redo_writes_keep_the_logs_unit() {
    let l = layout(64);
    let mut cfg = Profile::Redo.config(8192);
    cfg.redo_stress = RedoStress::Sized(1);
    cfg.redo_unit = 4096;
    for user in 0..3 {
        let mut g = Generator::new(&cfg, &l, user, 3, 5).unwrap();
        for _ in 0..1000 {
            let op = g.next_op();
            assert_eq!((op.len, op.offset % 4096), (4096, 0), "user {user}");
        }
    }
}

/// With redo_flush=Fdatasync every redo write asks for a flush after it,
/// and nothing else does; the names are PostgreSQL's wal_sync_method's.
#[test]
fn redo_flush_reaches_redo_writes_only() {
    let l = layout(64);
    let mut cfg = Profile::Mixed.config(8192);
    cfg.redo_flush = RedoFlush::Fdatasync;
    let mut g = Generator::new(&cfg, &l, 0, 1, 11).unwrap();
    let mut redo = 0;
    for _ in 0..5000 {
        let op = g.next_op();
        let want = if op.class == IoClass::RedoWrite {
            redo += 1;
            Durability::Fdatasync
        } else {
            Durability::None
        };
        assert_eq!(op.durability, want, "{:?}", op.class);
    }
    assert!(redo > 100, "{redo} redo writes");
    assert_eq!(
        g.next_of(IoClass::RedoWrite).durability,
        Durability::Fdatasync
    );
    assert_eq!(RedoFlush::default(), RedoFlush::Dsync);
    assert_eq!(RedoFlush::parse("open_datasync"), Some(RedoFlush::Dsync));
    assert_eq!(RedoFlush::parse("FDATASYNC"), Some(RedoFlush::Fdatasync));
    assert_eq!(RedoFlush::parse("fsync"), None);
}

#[test]
fn scans_are_sequential_and_never_cross_a_file() {
    let l = layout(64);
    let mut g = Generator::new(&Profile::Olap.config(8192), &l, 0, 1, 9).unwrap();
    let mut total = 0u64;
    for _ in 0..1000 {
        let op = g.next_op();
        assert!(matches!(
            op.class,
            IoClass::MultiblockRead | IoClass::DirectRead
        ));
        assert!(op.len <= 1 << 20 && op.len.is_multiple_of(8192));
        assert!(op.offset + u64::from(op.len) <= 32 << 20);
        total += u64::from(op.len);
    }
    assert!(total > 500 << 20);
}

/// Direct-path writes: direct-read's shape written, sequential from their own
/// place, never across a file end; in a mix, a share of SCAN_PCT.
#[test]
fn direct_writes_are_large_sequential_writes() {
    let l = layout(64);
    let mut cfg = WorkloadConfig::new(8192);
    cfg.classes = vec![IoClass::DirectWrite];
    cfg.direct_write_bytes = 256 << 10;
    assert_eq!(cfg.max_io(), 256 << 10);
    let mut g = Generator::new(&cfg, &l, 0, 1, 3).unwrap();
    let mut next: Option<(u32, u64)> = None;
    for _ in 0..1000 {
        let op = g.next_op();
        assert_eq!(
            (op.class, op.dir, op.durability),
            (IoClass::DirectWrite, IoDir::Write, Durability::None)
        );
        assert!(op.file < 2 && op.len <= 256 << 10 && op.len.is_multiple_of(8192));
        assert!(op.offset >= 8192 && op.offset + u64::from(op.len) <= 32 << 20);
        if let Some((f, o)) = next {
            // Sequential, or on to the next file's first data block.
            assert!(
                (op.file, op.offset) == (f, o) || op.offset == 8192,
                "{op:?}"
            );
        }
        next = Some((op.file, op.offset + u64::from(op.len)));
    }
    let mut mix = Profile::Olap.config(8192);
    mix.classes.push(IoClass::DirectWrite);
    let c = counts(&mix, 30_000);
    for class in [
        IoClass::MultiblockRead,
        IoClass::DirectRead,
        IoClass::DirectWrite,
    ] {
        let share = c[class.index()] as f64 / 30_000.0;
        assert!((share - 1.0 / 3.0).abs() < 0.02, "{c:?}");
    }
    assert!(!Profile::Mixed
        .config(8192)
        .classes
        .contains(&IoClass::DirectWrite));
}

#[test]
fn hotspot_gets_its_share() {
    let mut cfg = WorkloadConfig::new(8192);
    cfg.hotspot = Some(Hotspot {
        offset: 8 << 20,
        size: 1 << 20,
        frequency: 4,
    });
    let l = layout(64);
    let mut g = Generator::new(&cfg, &l, 0, 1, 11).unwrap();
    let hot = (0..40_000)
        .filter(|_| {
            let op = g.next_op();
            op.file == 0 && (8 << 20) + 8192 <= op.offset && op.offset < (9 << 20) + 8192
        })
        .count();
    // A quarter by the hot spot, plus its fair share of the uniform rest.
    assert!((9_500..11_000).contains(&hot), "{hot}");
    cfg.hotspot = Some(Hotspot {
        offset: 63 << 20,
        size: 4 << 20,
        frequency: 4,
    });
    assert!(Generator::new(&cfg, &l, 0, 1, 11).is_err());
}

#[test]
fn think_time_every_nth() {
    let mut cfg = WorkloadConfig::new(8192);
    cfg.think = Some(Think {
        min: Duration::from_micros(10),
        max: Duration::from_micros(20),
        frequency: 5,
    });
    let l = layout(64);
    let mut g = Generator::new(&cfg, &l, 0, 1, 1).unwrap();
    for i in 1..=100 {
        let t = g.next_op().think_ns;
        if i % 5 == 0 {
            assert!((10_000..=20_000).contains(&t));
        } else {
            assert_eq!(t, 0);
        }
    }
}

#[test]
fn single_class_ignores_percentages() {
    let mut cfg = WorkloadConfig::new(8192);
    cfg.classes = vec![IoClass::SingleBlockRead];
    cfg.update_pct = 100;
    assert_eq!(counts(&cfg, 100)[0], 100);
    cfg.classes = vec![IoClass::DbwrWrite];
    cfg.update_pct = 0;
    assert_eq!(counts(&cfg, 100)[IoClass::DbwrWrite.index()], 100);
}

#[test]
fn max_io_follows_classes() {
    assert_eq!(WorkloadConfig::new(8192).max_io(), 8192);
    assert_eq!(Profile::Olap.config(8192).max_io(), 1 << 20);
    assert_eq!(Profile::Oltp.config(8192).max_io(), 16384);
    assert!(Profile::Oltp.config(8192).writes());
}
