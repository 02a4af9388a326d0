//! `dbio calibrate`: max IOPS, max MB/s and the latency at max IOPS.

use std::sync::atomic::Ordering;
use std::time::Duration;

use dbio_experiment::{calibrate, CalibrateSpec};
use dbio_report::AnyResult;
use dbio_workload::DatasetError;

use crate::common::{self, duration_arg, LabelArgs, OutputArgs, StorageArgs, EXIT_INTERRUPTED};

#[derive(clap::Args)]
#[command(
    about = "Find max IOPS, max MB/s and the latency at max IOPS, in about half a minute",
    long_about = "Find max IOPS (8 KiB random reads), max MB/s (1 MiB random reads) and the mean \
        latency at max IOPS, like Oracle's DBMS_RESOURCE_MANAGER.CALIBRATE_IO but without its \
        flaws: the load grows as outstanding asynchronous I/Os from one thread (1, 2, 4, ... up \
        to --max-outstanding), never as more processes than the cores can drive; every level is \
        measured after a short warm-up and kept as a point of the curve, and is the same I/O as \
        `dbio run --workload single-block-read --outstanding N --seed S` (the MB/s ramp: 1 MiB \
        random reads); the IOPS ramp goes up to --max-outstanding unless the mean latency passes \
        --max-latency first, the MB/s ramp up to 64 or --max-outstanding (a device may give its \
        most only there, after levels without gain); latency is in microseconds, and the answer \
        says at which load it was found. MB/s has no latency cap (as CALIBRATE_IO).\n\nWith no options, a 1 GiB data set \
        is created (or reused) in /var/tmp/dbio-<uid> and kept for the next command; it says so \
        at the end, and `rm -r /var/tmp/dbio-<uid>` removes it.\n\nExample: dbio calibrate --target \
        /data/dbio --size 1GiB --max-latency 2ms --json cal.json --html cal.html\n\nSeveral hosts: \
        under mpirun each rank calibrates its own part of the data set (TARGET/rank-R); every \
        level starts on all ranks together, and the curve, the knee and the answers are those of \
        the total load (outstanding counts summed over the ranks, latencies from the merged \
        histograms). Rank 0 writes the result. Example: mpirun -n 2 dbio calibrate --target \
        /data/dbio --json cal.json"
)]
pub struct Args {
    #[command(flatten)]
    pub storage: StorageArgs,
    /// Mean latency cap for max IOPS (CALIBRATE_IO max_latency): 500us, 2ms, 0.5ms; a bare
    /// number is milliseconds, as in CALIBRATE_IO. Outputs give latencies in microseconds
    #[arg(long = "max-latency", value_name = "LATENCY", default_value = "20ms", value_parser = latency_arg)]
    max_latency_us: f64,
    /// Highest number of outstanding I/Os to try
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=4096))]
    max_outstanding: u32,
    /// Bound on the whole calibration (data-set creation not included); 70% for the IOPS ramp.
    /// Each level gets its share of it (at most 5 s): a longer time gives steadier points
    #[arg(long, value_name = "DURATION", default_value = "22s", value_parser = duration_arg)]
    time: Duration,
    /// Seed of the I/O generators: a level at N outstanding reads what `dbio run
    /// --workload single-block-read --outstanding N --seed S` reads
    #[arg(long, value_name = "S", default_value_t = 0x5eed)]
    seed: u64,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub label: LabelArgs,
}

/// A latency in microseconds from `500us`, `2ms`, `0.5ms`, `1s`, or a bare
/// number of milliseconds (CALIBRATE_IO's unit).
fn latency_arg(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (number, us_per_unit) = [("us", 1.0), ("µs", 1.0), ("ms", 1e3), ("s", 1e6)]
        .into_iter()
        .find_map(|(unit, f)| t.strip_suffix(unit).map(|n| (n, f)))
        .unwrap_or((t, 1e3));
    match number.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v * us_per_unit),
        _ => Err(format!(
            "bad latency {s:?}: expected a time above 0 with a unit (500us, 2ms, 0.5ms) or \
             a bare number of milliseconds"
        )),
    }
}

pub fn main(args: Args) -> anyhow::Result<i32> {
    // Under mpirun: one rank of a calibration over several hosts.
    if let Some(world) = dbio_mpi::World::from_env()? {
        if world.size() > 1 {
            return crate::mpi_calibrate::main(&args, world);
        }
        world.finalize()?;
    }
    args.output.check()?;
    anyhow::ensure!(!args.time.is_zero(), "--time must be longer than zero");
    let stop = common::stop_flag();
    let Some(storage) = args.storage.open("calibrate", stop)? else {
        eprintln!("dbio: {}", DatasetError::Interrupted);
        return Ok(EXIT_INTERRUPTED);
    };
    if stop.load(Ordering::Relaxed) {
        anyhow::bail!("interrupted before calibration started");
    }
    let spec = args.spec(&storage);
    // The curve is the point of calibrate: its lines go to stderr always.
    let print = |line: &str| eprintln!("{line}");
    let sampler = storage
        ._target
        .device_dir()
        .and_then(crate::cmd_run::device_sampler);
    let mut result = calibrate(&spec, stop, Some(&print))?;
    if let Some(s) = sampler {
        let section = s.finish();
        if !section.devices.is_empty() || !section.cpu.is_empty() {
            result.devices = Some(Box::new(section));
        }
    }
    result.labels = args.label.labels();
    result.cache = common::cache_check(
        &storage._target,
        storage.engine,
        storage.direct,
        &storage.dataset,
        None,
    );
    let interrupted = result.interrupted;
    let result = AnyResult::Calibrate(result);
    print!("{}", dbio_report::terminal(&result));
    common::wrote(dbio_report::write_outputs(&result, &args.output.outputs())?);
    args.storage.say_where_the_default_data_set_stays(&storage);
    Ok(if interrupted { EXIT_INTERRUPTED } else { 0 })
}

impl Args {
    /// What to calibrate on `storage`.
    pub fn spec(&self, storage: &common::Storage) -> CalibrateSpec {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        CalibrateSpec {
            target: storage.name.clone(),
            dataset: storage.dataset.clone(),
            engine: storage.engine,
            direct: storage.direct,
            max_latency_us: self.max_latency_us,
            max_outstanding: self.max_outstanding,
            time: self.time,
            cores,
            seed: self.seed,
            machine: Some(std::sync::Arc::new(HostIdle::default())),
        }
    }

    /// The calibration time (checked above zero).
    pub fn time(&self) -> Duration {
        self.time
    }
}

/// This host's idle CPU over a calibration level, from /proc/stat.
#[derive(Default)]
struct HostIdle(dbio_diag::hostcpu::WindowTicks);

impl dbio_experiment::MachineIdle for HostIdle {
    fn edge(&self, start: bool) {
        self.0.edge(start);
    }

    fn idle_pct(&self) -> Option<f64> {
        let m = self.0.section(0)?;
        let all = m.busy_s() + m.idle_s;
        (all > 0.0).then(|| m.idle_s * 100.0 / all)
    }
}

#[cfg(test)]
mod tests {
    use super::latency_arg;

    #[test]
    fn latency_takes_units_and_a_bare_number_is_milliseconds() {
        assert_eq!(latency_arg("500us"), Ok(500.0));
        assert_eq!(latency_arg("2ms"), Ok(2000.0));
        assert_eq!(latency_arg("0.5ms"), Ok(500.0));
        assert_eq!(latency_arg("20"), Ok(20_000.0));
        assert_eq!(latency_arg("1s"), Ok(1_000_000.0));
        for bad in ["0", "-1ms", "fast", "ms", "2 min"] {
            assert!(latency_arg(bad).is_err(), "{bad}");
        }
    }
}
