//! Random-read benchmark of one engine on one thread: 8 KiB (or --bs)
//! O_DIRECT reads at uniformly random aligned offsets of a file, with
//! --depth I/Os kept outstanding for --time seconds. Prints IOPS and the
//! process CPU time per I/O (getrusage), on one line of key=value pairs.
//! --kick-below, --submit-batch and --no-defer-taskrun set the io_uring
//! engine's submission policy (`UringOptions`) to compare it with the
//! defaults.
//!
//! cargo run --release -p dbio-engine --example randread -- \
//!     --engine io_uring --file /data/f --depth 32 --time 10

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use dbio_engine::uring::{UringEngine, UringOptions};
use dbio_engine::{Durability, Engine, EngineConfig, EngineKind, FileSpec, IoDir, IoRequest};

struct Args {
    engine: EngineKind,
    file: PathBuf,
    depth: u32,
    seconds: f64,
    bs: u32,
    direct: bool,
    /// Skip commit(): reap() submits what is queued in the same system call.
    commit: bool,
    /// io_uring without registered buffers and files.
    register: bool,
    /// io_uring submission policy (see `UringOptions`); unset: the defaults.
    kick_below: Option<u32>,
    submit_batch: Option<u32>,
    defer_taskrun: bool,
}

const USAGE: &str = "usage: randread --engine psync|io_uring|null --file PATH \
                     [--depth N] [--time SECONDS] [--bs BYTES] [--buffered] [--no-commit] [--no-register]\n\
                     [--kick-below N] [--submit-batch N] [--no-defer-taskrun]";

fn parse_args() -> Result<Args, String> {
    let mut engine = None;
    let mut file = None;
    let (mut depth, mut seconds, mut bs, mut direct, mut commit, mut register) =
        (32u32, 10f64, 8192u32, true, true, true);
    let (mut kick_below, mut submit_batch, mut defer_taskrun) = (None, None, true);
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--engine" => {
                let v = value()?;
                engine = Some(EngineKind::parse(&v).ok_or(format!("unknown engine {v}"))?);
            }
            "--file" => file = Some(PathBuf::from(value()?)),
            "--depth" => depth = value()?.parse().map_err(|e| format!("--depth: {e}"))?,
            "--time" => seconds = value()?.parse().map_err(|e| format!("--time: {e}"))?,
            "--bs" => bs = value()?.parse().map_err(|e| format!("--bs: {e}"))?,
            "--buffered" => direct = false,
            "--no-commit" => commit = false,
            "--no-register" => register = false,
            "--kick-below" => {
                kick_below = Some(value()?.parse().map_err(|e| format!("--kick-below: {e}"))?)
            }
            "--submit-batch" => {
                submit_batch = Some(
                    value()?
                        .parse()
                        .map_err(|e| format!("--submit-batch: {e}"))?,
                )
            }
            "--no-defer-taskrun" => defer_taskrun = false,
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    let (Some(engine), Some(file)) = (engine, file) else {
        return Err("--engine and --file are required".into());
    };
    if depth == 0 || bs == 0 || !(seconds > 0.0 && seconds <= 3600.0) {
        return Err("--depth and --bs must be positive, --time in (0, 3600]".into());
    }
    Ok(Args {
        engine,
        file,
        depth,
        seconds,
        bs,
        direct,
        commit,
        register,
        kick_below,
        submit_batch,
        defer_taskrun,
    })
}

/// User and system CPU time of this process so far.
fn cpu_time() -> (Duration, Duration) {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

/// xorshift64*: cheap, and good enough to spread offsets over the file.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn run(args: &Args) -> Result<(), String> {
    let size = std::fs::metadata(&args.file)
        .map_err(|e| format!("{}: {e}", args.file.display()))?
        .len();
    let blocks = size / u64::from(args.bs);
    if blocks == 0 {
        return Err(format!("{}: smaller than one block", args.file.display()));
    }
    let cfg = EngineConfig {
        files: vec![FileSpec {
            path: args.file.clone(),
            size,
            buffered: false,
            direct: false,
        }],
        depth: args.depth,
        max_io: args.bs,
        direct: args.direct,
        write: false,
        shared_buffers: false,
        io_workers: 0,
        io_workers_from: 0,
        submitted: Default::default(),
        no_read_ahead: false,
    };
    let tuned = !args.register
        || args.kick_below.is_some()
        || args.submit_batch.is_some()
        || !args.defer_taskrun;
    let mut engine: Box<dyn Engine> = if args.engine == EngineKind::IoUring && tuned {
        let defaults = UringOptions::default();
        let opts = UringOptions {
            register_buffers: args.register,
            register_files: args.register,
            kick_below: args.kick_below.unwrap_or(defaults.kick_below),
            submit_batch: args.submit_batch.unwrap_or(defaults.submit_batch),
            defer_taskrun: args.defer_taskrun,
        };
        Box::new(UringEngine::open_with(&cfg, opts).map_err(|e| e.to_string())?)
    } else {
        dbio_engine::open(args.engine, &cfg).map_err(|e| e.to_string())?
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut free: Vec<u32> = (0..args.depth).collect();
    let mut done = Vec::with_capacity(args.depth as usize);
    let mut ios: u64 = 0;
    let mut reaps: u64 = 0;
    let run_for = Duration::from_secs_f64(args.seconds);

    let (usr0, sys0) = cpu_time();
    let start = Instant::now();
    let mut stopping = false;
    loop {
        if !stopping {
            while let Some(slot) = free.pop() {
                let req = IoRequest {
                    file: 0,
                    offset: rng.next() % blocks * u64::from(args.bs),
                    len: args.bs,
                    dir: IoDir::Read,
                    slot,
                    durability: Durability::None,
                    tag: 0,
                };
                engine.submit(req).map_err(|e| e.to_string())?;
            }
            if args.commit {
                engine.commit().map_err(|e| e.to_string())?;
            }
        }
        done.clear();
        engine
            .reap(1, Duration::from_secs(1), &mut done)
            .map_err(|e| e.to_string())?;
        for c in &done {
            c.result.as_ref().map_err(|e| e.to_string())?;
            free.push(c.slot);
        }
        ios += done.len() as u64;
        reaps += 1;
        if !stopping && start.elapsed() >= run_for {
            stopping = true;
        }
        if stopping && engine.in_flight() == 0 {
            break;
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let (usr1, sys1) = cpu_time();
    let per_io = |d: Duration| d.as_secs_f64() * 1e6 / ios.max(1) as f64;
    let (usr, sys) = (per_io(usr1 - usr0), per_io(sys1 - sys0));
    println!(
        "engine={} depth={} bs={} direct={} seconds={elapsed:.3} ios={ios} iops={:.0} \
         usr_us_per_io={usr:.3} sys_us_per_io={sys:.3} cpu_us_per_io={:.3} ios_per_reap={:.2}",
        args.engine.name(),
        args.depth,
        args.bs,
        args.direct,
        ios as f64 / elapsed,
        usr + sys,
        ios as f64 / reaps.max(1) as f64,
    );
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("randread: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("randread: {e}");
            ExitCode::FAILURE
        }
    }
}
