//! Replay: a workload model's rates and sizes as the plan of an open-loop run, at a
//! scale of production's load. The run is `dbio run --rate`'s, one rate per class.

use dbio_sources::WorkloadModel;
use dbio_workload::{Burst, IoClass, Rates, ReadSkew, RedoFlush, RedoStress, SharedPool};

use crate::{ExperimentError, RunOptions, RunPlan};

/// The plan of `model` at `scale` times its rates, over `base` (users, outstanding,
/// time, target size, arrivals, ...). The model decides the classes, their rates and
/// sizes and the block size; the data-set size is `base.size`, else the model's.
pub fn replay_plan(
    model: &WorkloadModel,
    scale: f64,
    base: &RunOptions,
) -> Result<RunPlan, ExperimentError> {
    let bad = |s: String| ExperimentError::Config(s);
    if !(scale.is_finite() && scale > 0.0) {
        return Err(bad(format!("--scale {scale}: must be above 0")));
    }
    model
        .check()
        .map_err(|(_, what)| bad(format!("model: {what}")))?;
    let mut rates = Vec::new();
    for c in &model.classes {
        let class = IoClass::parse(&c.class)
            .ok_or_else(|| bad(format!("model: unknown class {:?}", c.class)))?;
        rates.push((class, c.rate * scale));
    }
    let mut rates = Rates::per_class(&rates).map_err(|e| bad(format!("--scale {scale}: {e}")))?;
    // Reads in production's bursts: a scale of the load scales how many transactions
    // come, not how a transaction reads.
    for c in &model.classes {
        let burst = c
            .burst_reads
            .zip(c.burst_gap_us)
            .and_then(|(n, g)| Burst::new(n, g * 1e3))
            .and_then(|b| b.with_alone(c.burst_alone.unwrap_or(0.0)));
        if let (Some(b), Some(class)) = (burst, IoClass::parse(&c.class)) {
            rates = rates.with_burst(class, b);
        }
    }
    // InnoDB's page cleaner: the page writes and the doublewrite batches before them
    // come from a thread of their own, which no session waits behind, a batch's pages
    // submitted one after another.
    if model.page_writer() {
        for class in [IoClass::DbwrWrite, IoClass::DirectWrite] {
            rates = rates.with_own_user(class);
        }
        let batch = model
            .class("dbwr-write")
            .zip(model.class("direct-write"))
            .map(|(w, d)| w.rate / d.rate)
            .and_then(|n| Burst::new(n.clamp(1.0, dbio_workload::MAX_BURST), 0.0));
        if let Some(b) = batch {
            rates = rates.with_burst(IoClass::DbwrWrite, b);
        }
    }
    // The log's durability and path as production made them (PostgreSQL: written
    // through the page cache, then fdatasync'd); the run's own otherwise.
    let redo = model.class("redo-write");
    let redo_flush = match redo.and_then(|c| c.flush.as_deref()) {
        Some("fdatasync") => RedoFlush::Fdatasync,
        Some(_) => RedoFlush::Dsync,
        None => base.redo_flush,
    };
    let redo_buffered = redo.and_then(|c| c.buffered).unwrap_or(base.redo_buffered);
    let options = RunOptions {
        redo_flush,
        redo_buffered,
        profile: None,
        classes: Vec::new(),
        block_size: u64::from(model.block_size),
        size: base.size.or(model.dataset_bytes),
        rate: Some(rates),
        ..base.clone()
    };
    let mut plan = RunPlan::new(&options)?;
    plan.profile = "replay".into();
    for c in &model.classes {
        match c.class.as_str() {
            "multiblock-read" => plan.workload.multiblock_bytes = c.size,
            "direct-read" => plan.workload.direct_read_bytes = c.size,
            "direct-write" => plan.workload.direct_write_bytes = c.size,
            "redo-write" => plan.workload.redo_stress = RedoStress::Sized(c.size / 512),
            _ => {}
        }
    }
    // DBWR writes come one by one at their own rate: no batches.
    plan.workload.dbwr_batch = 1;
    // I/Os production submitted and did not wait for (InnoDB's asynchronous ones),
    // through one shared ring and timed to their submission, as production timed them.
    let reads = model
        .class("single-block-read")
        .and_then(|c| c.async_share)
        .unwrap_or(0.0);
    plan.workload.submitted = dbio_engine::Submitted {
        read_permille: (reads.clamp(0.0, 1.0) * 1000.0).round() as u32,
        write_max: if model.page_writer() {
            model.block_size
        } else {
            0
        },
    };
    // Reads fault their buffers in as production's did (one share for all of them).
    let unmapped = model
        .classes
        .iter()
        .filter_map(|c| c.unmapped_pages)
        .fold(0.0_f64, f64::max);
    plan.workload.unmapped_read_permille = (unmapped.clamp(0.0, 1.0) * 1000.0).round() as u32;
    // Reads spread as production's: its relations, and the skew fitted to the share
    // its page cache served.
    plan.workload.read_skew = read_skew(model);
    // Reads through I/O workers, as production's server made them.
    plan.workload.io_workers = model.io_workers.unwrap_or(0);
    // The kernel reads ahead no more than production's device showed: a device read
    // of about a block there means none, and the replay's own layout of hot blocks
    // must not make the kernel take its misses for a sequential stream.
    plan.workload.no_read_ahead = model
        .page_cache
        .as_ref()
        .and_then(|p| p.device_read_bytes)
        .is_some_and(|b| b <= 2 * u64::from(model.block_size));
    // A CPU term applies to the calls that sleep: count them.
    plan.count_sleeps = model.classes.iter().any(|c| c.cpu_wait_us.is_some());
    Ok(plan)
}

/// Production's spread of reads, where the model has one: its relations laid out in
/// proportion to their sizes, a Zipf law of the fitted exponent within each, and its
/// buffer pool simulated in front where the model has one.
fn read_skew(model: &WorkloadModel) -> Option<ReadSkew> {
    let p = model.page_cache.as_ref();
    let exponent = p.and_then(|p| p.skew).unwrap_or(0.0);
    let pooled = p.is_some_and(|p| p.buffer_pool_bytes.is_some());
    if model.relations.len() < 2 && exponent <= 0.0 && !pooled {
        return None;
    }
    let relations = if model.relations.is_empty() {
        vec![(1.0, 1.0)]
    } else {
        model
            .relations
            .iter()
            .map(|r| (r.bytes.max(1) as f64, r.share))
            .collect()
    };
    // The database's buffer pool in front, where the skew was fitted to its hits.
    // Its warm-up's misses then fill the page cache under it, production's size.
    let bs = u64::from(model.block_size);
    let cache_blocks = p
        .and_then(|p| p.bytes)
        .filter(|_| model.data_buffered)
        .unwrap_or(0)
        / bs;
    let pool = p
        .and_then(|p| p.buffer_pool_bytes)
        .map(|b| SharedPool::with_page_cache((b / bs).max(1), cache_blocks));
    let exponents = if model.relations.iter().all(|r| r.skew.is_some()) {
        model.relations.iter().filter_map(|r| r.skew).collect()
    } else {
        Vec::new()
    };
    Some(ReadSkew {
        pool,
        relations,
        exponent,
        exponents,
        span: p.and_then(|p| p.span).unwrap_or(1.0),
        clustered: p.is_some_and(|p| p.clustered),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbio_sources::ModelClass;

    fn class(name: &str, rate: f64, size: u32) -> ModelClass {
        ModelClass {
            class: name.into(),
            event: String::new(),
            rate,
            size,
            source: String::new(),
            production_ios: None,
            production_mean_us: None,
            mean_source: None,
            ..ModelClass::default()
        }
    }

    #[test]
    fn rates_scale_and_sizes_follow_the_model() {
        let model = WorkloadModel {
            source: "m".into(),
            block_size: 8192,
            dataset_bytes: Some(256 << 20),
            dataset_source: None,
            classes: vec![
                class("single-block-read", 500.0, 8192),
                class("multiblock-read", 10.0, 64 * 8192),
                class("redo-write", 30.0, 6144),
            ],
            not_replayed: Vec::new(),
            ..WorkloadModel::default()
        };
        let p = replay_plan(&model, 1.5, &RunOptions::default()).unwrap();
        let ol = p.open_loop.as_ref().unwrap();
        let rates: Vec<(IoClass, f64)> = ol.rates.classes().collect();
        assert_eq!(
            rates,
            vec![
                (IoClass::SingleBlockRead, 750.0),
                (IoClass::MultiblockRead, 15.0),
                (IoClass::RedoWrite, 45.0)
            ]
        );
        assert_eq!(p.workload.multiblock_bytes, 64 * 8192);
        assert_eq!(p.workload.redo_stress, RedoStress::Sized(12));
        assert_eq!(p.dataset.data_bytes, 256 << 20);
        assert_eq!(p.profile, "replay");
        // No flush named: the run's own.
        assert_eq!(p.workload.redo_flush, RedoFlush::Dsync);
        assert!(!p.workload.redo_buffered);
        let mut pg = model.clone();
        pg.classes[2].flush = Some("fdatasync".into());
        pg.classes[2].buffered = Some(true);
        let p = replay_plan(&pg, 1.0, &RunOptions::default()).unwrap();
        assert_eq!(p.workload.redo_flush, RedoFlush::Fdatasync);
        assert!(p.workload.redo_buffered);
        // Through a page cache of its own, the log goes around it, O_DIRECT.
        let around = RunOptions {
            direct: false,
            redo_direct: true,
            ..RunOptions::default()
        };
        let p = replay_plan(&pg, 1.0, &around).unwrap();
        assert!(!p.workload.redo_buffered && p.workload.redo_direct);
        assert_eq!(p.workload.redo_flush, RedoFlush::Fdatasync);
        // Reads fault in the share of their pages production did; none by default.
        assert_eq!(p.workload.unmapped_read_permille, 0);
        pg.classes[0].unmapped_pages = Some(0.8754);
        let p = replay_plan(&pg, 1.0, &RunOptions::default()).unwrap();
        assert_eq!(p.workload.unmapped_read_permille, 875);
        // Reads through I/O workers only where production's server had them.
        assert_eq!(p.workload.io_workers, 0);
        let mut workers = pg.clone();
        workers.io_workers = Some(3);
        let w = replay_plan(&workers, 1.0, &RunOptions::default()).unwrap();
        assert_eq!(w.workload.io_workers, 3);
        // The kernel reads ahead only where production's device read more than asked.
        assert!(!w.workload.no_read_ahead);
        let mut one_block = workers.clone();
        one_block.page_cache = Some(dbio_sources::model::PageCacheShape {
            device_read_bytes: Some(7_300),
            ..Default::default()
        });
        assert!(
            replay_plan(&one_block, 1.0, &RunOptions::default())
                .unwrap()
                .workload
                .no_read_ahead
        );
        one_block.page_cache.as_mut().unwrap().device_read_bytes = Some(141_824);
        assert!(
            !replay_plan(&one_block, 1.0, &RunOptions::default())
                .unwrap()
                .workload
                .no_read_ahead
        );
        // Calls that slept are counted only where a CPU term will use them.
        assert!(!p.count_sleeps);
        pg.classes[0].cpu_wait_us = Some(12.0);
        assert!(
            replay_plan(&pg, 1.0, &RunOptions::default())
                .unwrap()
                .count_sleeps
        );
        // Reads in production's bursts, at any scale; none unless the model has them.
        assert_eq!(
            p.open_loop
                .as_ref()
                .unwrap()
                .rates
                .burst(IoClass::SingleBlockRead),
            None
        );
        let mut bursty = model.clone();
        bursty.classes[0].burst_reads = Some(4.2);
        bursty.classes[0].burst_gap_us = Some(350.0);
        bursty.classes[0].burst_alone = Some(0.2);
        let b = replay_plan(&bursty, 2.0, &RunOptions::default()).unwrap();
        assert_eq!(
            b.open_loop
                .as_ref()
                .unwrap()
                .rates
                .burst(IoClass::SingleBlockRead),
            dbio_workload::Burst::new(4.2, 350_000.0).and_then(|b| b.with_alone(0.2))
        );
        pg.classes[2].unmapped_pages = Some(0.5);
        let e = replay_plan(&pg, 1.0, &RunOptions::default()).unwrap_err();
        assert!(e.to_string().contains("reads only"), "{e}");
        let e = replay_plan(&model, 0.0, &RunOptions::default()).unwrap_err();
        assert_eq!(e.to_string(), "--scale 0: must be above 0");
    }

    #[test]
    fn innodbs_submitted_io_goes_to_the_ring_and_its_page_writer() {
        let mut model = WorkloadModel {
            source: "m".into(),
            block_size: 16384,
            dataset_bytes: Some(256 << 20),
            classes: vec![
                class("single-block-read", 200.0, 16384),
                class("dbwr-write", 100.0, 16384),
                class("direct-write", 1.0, 100 * 16384),
            ],
            ..WorkloadModel::default()
        };
        let p = replay_plan(&model, 1.0, &RunOptions::default()).unwrap();
        assert_eq!(p.workload.submitted, dbio_engine::Submitted::default());
        assert!(!p.open_loop.as_ref().unwrap().rates.own_user());
        model.classes[0].async_share = Some(0.206);
        model.classes[1].async_share = Some(1.0);
        let p = replay_plan(&model, 1.0, &RunOptions::default()).unwrap();
        assert_eq!(p.workload.submitted.read_permille, 206);
        assert_eq!(p.workload.submitted.write_max, 16384);
        let rates = &p.open_loop.as_ref().unwrap().rates;
        assert!(rates.own_user());
        // A batch: the page writes per doublewrite write.
        assert_eq!(
            rates.burst(IoClass::DbwrWrite),
            dbio_workload::Burst::new(100.0, 0.0)
        );
    }
}
