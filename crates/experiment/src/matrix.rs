//! `matrix`: Orion's grid. Small random reads (one block) and large random reads (1 MiB)
//! run at the same time, each from a thread of its own with its own outstanding count,
//! and every point of the chosen shape is measured after a warm-up.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use dbio_engine::EngineKind;
use dbio_stats::{Live, MatrixPoint, MatrixResult, FORMAT_VERSION, MATRIX_KIND};
use dbio_workload::{Dataset, IoClass, WorkloadConfig};

use crate::calibrate::levels;
use crate::drive::{drive, Load};
use crate::{ExperimentError, ProgressFn};

/// Large I/O size, as Orion's default and calibrate's MB/s ramp.
const LARGE_BYTES: u32 = 1 << 20;

/// Orion's `-matrix` shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Small alone at each level, then large alone at each level.
    Basic,
    /// Every combination of small and large levels (none included).
    Detailed,
    /// Large fixed, small varied.
    Row,
    /// Small fixed, large varied.
    Col,
    /// Small varied with large at its maximum, and large varied with small at its maximum.
    Max,
}

impl Shape {
    pub fn parse(s: &str) -> Option<Shape> {
        Some(match s {
            "basic" => Shape::Basic,
            "detailed" => Shape::Detailed,
            "row" => Shape::Row,
            "col" => Shape::Col,
            "max" => Shape::Max,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Shape::Basic => "basic",
            Shape::Detailed => "detailed",
            Shape::Row => "row",
            Shape::Col => "col",
            Shape::Max => "max",
        }
    }
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct MatrixSpec {
    pub target: String,
    pub dataset: Dataset,
    pub engine: EngineKind,
    pub direct: bool,
    pub shape: Shape,
    /// Highest outstanding small and large I/Os (levels are 1, 2, 4, ... up to these).
    pub max_small: u32,
    pub max_large: u32,
    /// The fixed large load of `Row` and the fixed small load of `Col`.
    pub row_large: u32,
    pub col_small: u32,
    /// Measured time of each point; a warm-up of a fifth (at most 1 s) comes first.
    pub point: Duration,
    pub seed: u64,
}

impl MatrixSpec {
    /// The points of the shape, (small, large), in the order they are measured.
    pub fn points(&self) -> Vec<(u32, u32)> {
        let small = levels(self.max_small);
        let large = levels(self.max_large);
        let with_none = |l: &[u32]| {
            std::iter::once(0)
                .chain(l.iter().copied())
                .collect::<Vec<_>>()
        };
        let mut pts: Vec<(u32, u32)> = match self.shape {
            Shape::Basic => small
                .iter()
                .map(|&s| (s, 0))
                .chain(large.iter().map(|&l| (0, l)))
                .collect(),
            Shape::Detailed => with_none(&large)
                .iter()
                .flat_map(|&l| with_none(&small).into_iter().map(move |s| (s, l)))
                .filter(|&p| p != (0, 0))
                .collect(),
            Shape::Row => with_none(&small)
                .into_iter()
                .map(|s| (s, self.row_large))
                .collect(),
            Shape::Col => with_none(&large)
                .into_iter()
                .map(|l| (self.col_small, l))
                .collect(),
            Shape::Max => {
                let (ms, ml) = (self.max_small.max(1), self.max_large.max(1));
                with_none(&small)
                    .into_iter()
                    .map(|s| (s, ml))
                    .chain(with_none(&large).into_iter().map(|l| (ms, l)))
                    .collect()
            }
        };
        let mut seen = Vec::new();
        pts.retain(|p| {
            *p != (0, 0) && !seen.contains(p) && {
                seen.push(*p);
                true
            }
        });
        pts
    }
}

/// Measures every point of the shape; a stop keeps the points measured so far.
pub fn matrix(
    spec: &MatrixSpec,
    stop: &AtomicBool,
    progress: Option<ProgressFn>,
) -> Result<MatrixResult, ExperimentError> {
    if spec.max_small == 0 || spec.max_large == 0 || spec.point.is_zero() {
        return Err(ExperimentError::Config(
            "a matrix needs at least 1 small and 1 large I/O outstanding and a time per point"
                .into(),
        ));
    }
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let t0 = Instant::now();
    let mut small_w = WorkloadConfig::new(spec.dataset.block_size);
    small_w.classes = vec![IoClass::SingleBlockRead];
    let mut large_w = WorkloadConfig::new(spec.dataset.block_size);
    large_w.classes = vec![IoClass::MultiblockRead];
    large_w.multiblock_random = true;
    large_w.multiblock_bytes = LARGE_BYTES;
    let warmup = (spec.point / 5).min(Duration::from_secs(1));
    let load = |workload, outstanding, seed| stream(spec, workload, outstanding, seed, warmup);
    let points = spec.points();
    let mut result = MatrixResult {
        kind: MATRIX_KIND.into(),
        format_version: FORMAT_VERSION,
        dbio_version: env!("CARGO_PKG_VERSION").into(),
        started_unix,
        target: spec.target.clone(),
        engine: spec.engine.name().into(),
        dataset_bytes: spec.dataset.data_bytes(),
        shape: spec.shape.name().into(),
        small_bytes: spec.dataset.block_size,
        large_bytes: LARGE_BYTES,
        point_s: spec.point.as_secs_f64(),
        small_levels: sorted(points.iter().map(|p| p.0)),
        large_levels: sorted(points.iter().map(|p| p.1)),
        ..Default::default()
    };
    for (i, &(small, large)) in points.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let seed = spec.seed ^ (u64::from(small) << 32 | u64::from(large));
        let (live_s, live_l) = (Live::new(), Live::new());
        let (s_load, l_load) = (load(&small_w, small, seed), load(&large_w, large, seed ^ 1));
        let (s_out, l_out) = std::thread::scope(|sc| {
            let s = (small > 0).then(|| sc.spawn(|| drive(&s_load, stop, &live_s, &mut |_| {})));
            let l = (large > 0).then(|| sc.spawn(|| drive(&l_load, stop, &live_l, &mut |_| {})));
            let join =
                |h: Option<std::thread::ScopedJoinHandle<'_, Result<_, ExperimentError>>>| {
                    h.map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(ExperimentError::Config("a matrix thread panicked".into()))
                        })
                    })
                    .transpose()
                };
            (join(s), join(l))
        });
        let (s_out, l_out) = (s_out?, l_out?);
        let mut p = MatrixPoint {
            small,
            large,
            ..Default::default()
        };
        for (out, is_small) in [(s_out, true), (l_out, false)] {
            let Some(out) = out else { continue };
            if let Some(e) = out.error {
                return Err(e);
            }
            let c = out
                .recorder
                .curve_point(0, out.measured, &out.cpu, f64::INFINITY);
            if is_small {
                (p.small_iops, p.small_mean_us, p.small_p99_us) = (c.iops, c.mean_us, c.p99_us);
            } else {
                (p.large_mbps, p.large_mean_us) = (c.mbps, c.mean_us);
            }
        }
        if let Some(pr) = progress {
            pr(&format!(
                "point {}/{}: small {:>3} large {:>3}: {:>9.0} IOPS  mean {:>8.1} us  {:>8.1} MB/s",
                i + 1,
                points.len(),
                small,
                large,
                p.small_iops,
                p.small_mean_us,
                p.large_mbps
            ));
        }
        result.points.push(p);
    }
    result.interrupted = stop.load(Ordering::Relaxed) && result.points.len() < points.len();
    result.elapsed_s = t0.elapsed().as_secs_f64();
    Ok(result)
}

/// One of a point's two loads. A synchronous engine gets one user per outstanding I/O.
fn stream<'a>(
    spec: &'a MatrixSpec,
    workload: &'a WorkloadConfig,
    outstanding: u32,
    seed: u64,
    warmup: Duration,
) -> Load<'a> {
    Load::closed(
        &spec.dataset,
        spec.engine,
        spec.direct,
        workload,
        outstanding,
        spec.point,
        warmup,
        seed,
    )
}

fn sorted(it: impl Iterator<Item = u32>) -> Vec<u32> {
    let mut v: Vec<u32> = it.collect();
    v.sort_unstable();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(shape: Shape) -> Vec<(u32, u32)> {
        let spec = dbio_workload::DatasetSpec::new(1 << 24, 8192).unwrap();
        let ds = Dataset::planned(std::path::Path::new("/nonexistent"), &spec);
        MatrixSpec {
            target: String::new(),
            dataset: ds,
            engine: EngineKind::Null,
            direct: false,
            shape,
            max_small: 4,
            max_large: 2,
            row_large: 2,
            col_small: 4,
            point: Duration::from_millis(10),
            seed: 1,
        }
        .points()
    }

    #[test]
    fn shapes_as_orion_draws_them() {
        assert_eq!(spec(Shape::Basic), [(1, 0), (2, 0), (4, 0), (0, 1), (0, 2)]);
        assert_eq!(spec(Shape::Detailed).len(), 4 * 3 - 1);
        assert_eq!(spec(Shape::Row), [(0, 2), (1, 2), (2, 2), (4, 2)]);
        assert_eq!(spec(Shape::Col), [(4, 0), (4, 1), (4, 2)]);
        assert_eq!(
            spec(Shape::Max),
            [(0, 2), (1, 2), (2, 2), (4, 2), (4, 0), (4, 1)]
        );
    }
}
