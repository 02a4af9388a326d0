//! What the commands share: option parsers, outputs, the stop flag set by
//! SIGINT/SIGTERM, and data-set preparation with progress.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

use dbio_engine::EngineKind;
use dbio_storage::{Target, TargetError};
use dbio_workload::units::{format_size, parse_duration, parse_size};
use dbio_workload::{Dataset, DatasetError, DatasetSpec, FileKind};

/// Exit code of a run stopped by SIGINT/SIGTERM (results still written).
pub const EXIT_INTERRUPTED: i32 = 130;

/// Prints a clap error as one `dbio: ...` line (exit 2) that points to the
/// help of `command` (`dbio run`), or help/version as clap renders them (exit 0).
pub fn exit_on_clap_error(e: clap::Error, command: &str) -> ! {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
        || e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    {
        let _ = e.print();
        std::process::exit(
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                2
            } else {
                0
            },
        );
    }
    let args: Vec<String> = std::env::args().collect();
    if let Some(line) = negative_value(&e, &args) {
        eprintln!("dbio: {line}");
        std::process::exit(2);
    }
    let text = e.to_string();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("bad arguments");
    let mut first = first.strip_prefix("error: ").unwrap_or(first).to_string();
    if e.kind() == ErrorKind::MissingRequiredArgument {
        // clap lists the missing arguments on the lines that follow.
        let missing: Vec<&str> = lines.take_while(|l| !l.starts_with("Usage")).collect();
        first = format!("{first} {}", missing.join(" "));
    }
    eprintln!("dbio: {first} (see {command} --help)");
    std::process::exit(2);
}

/// clap takes `--size -1G` for an unknown option `-1`: say instead that
/// the option's value is negative.
fn negative_value(e: &clap::Error, args: &[String]) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(bad)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let digit = bad.strip_prefix('-')?.chars().next()?;
    if !digit.is_ascii_digit() {
        return None;
    }
    let at = args.iter().position(|a| a.starts_with(bad.as_str()))?;
    let option = args[..at].last().filter(|o| o.starts_with("--"))?;
    Some(format!("{option} {}: must not be negative", args[at]))
}

/// clap parser for sizes (`1GiB`, `512M`, `8k`).
pub fn size_arg(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

/// clap parser for durations (`30s`, `2m`, `500ms`).
pub fn duration_arg(s: &str) -> Result<Duration, String> {
    parse_duration(s).map_err(|e| e.to_string())
}

/// clap parser for counts that must be 1 or more.
pub fn count_arg(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(0) => Err("must be 1 or more".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a whole number")),
    }
}

/// [`count_arg`] for 32-bit counts.
pub fn count32_arg(s: &str) -> Result<u32, String> {
    let n = count_arg(s)?;
    u32::try_from(n).map_err(|_| format!("{n} is above {}", u32::MAX))
}

/// clap parser for `--engine`.
pub fn engine_arg(s: &str) -> Result<EngineKind, String> {
    EngineKind::parse(s)
        .ok_or_else(|| format!("unknown engine {s:?} (one of psync, io_uring, null)"))
}

/// The default target: a private folder on the local disk.
pub fn default_target() -> PathBuf {
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    PathBuf::from(format!("/var/tmp/dbio-{uid}"))
}

/// Result files to write.
#[derive(clap::Args, Debug, Default)]
pub struct OutputArgs {
    /// Write the result as JSON (the documented schema) to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the result as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write the result as Markdown to FILE.
    #[arg(long, value_name = "FILE")]
    pub md: Option<PathBuf>,
    /// Write a self-contained HTML report with SVG charts to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// `--label KEY=VALUE`: names the result carries (a sweep sets config, users, repeat).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct LabelArgs {
    /// A label for the result, KEY=VALUE, repeatable (e.g. config=dnfs); `dbio compare`
    /// groups results by their `config`, `users` and `repeat` labels
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = label_arg)]
    pub labels: Vec<(String, String)>,
}

impl LabelArgs {
    pub fn labels(&self) -> dbio_stats::Labels {
        self.labels.iter().cloned().collect()
    }
}

fn label_arg(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!("{s:?}: expected KEY=VALUE, e.g. config=dnfs")),
    }
}

impl OutputArgs {
    pub fn outputs(&self) -> dbio_report::Outputs {
        dbio_report::Outputs {
            json: self.json.clone(),
            csv: self.csv.clone(),
            md: self.md.clone(),
            html: self.html.clone(),
        }
    }

    /// Fails now, not after a long run, when an output cannot be written
    /// because its directory does not exist.
    pub fn check(&self) -> anyhow::Result<()> {
        for p in [&self.json, &self.csv, &self.md, &self.html]
            .into_iter()
            .flatten()
        {
            let dir = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            anyhow::ensure!(
                dir.is_dir(),
                "{}: directory {} does not exist",
                p.display(),
                dir.display()
            );
        }
        Ok(())
    }
}

/// The storage a measuring command (calibrate, matrix) works on: target, data-set size,
/// engine and how to reach the files.
#[derive(clap::Args)]
pub struct StorageArgs {
    /// Directory of the data set; created if its parent exists [default: /var/tmp/dbio-<uid>].
    /// An nfs://server/export/dir?version=3&mountport=M&nfsport=N URL measures the server
    /// through dbio's own NFS client (engine "nfs"); `version=4.1` speaks NFSv4.1,
    /// `version=pnfs` sends each file's I/O to the data server its layout names;
    /// `sec=krb5|krb5i|krb5p` reaches a Kerberos export with the ticket of `kinit` (or
    /// of the client keytab named by KRB5_CLIENT_KTNAME)
    #[arg(long, value_name = "PATH")]
    pub target: Option<PathBuf>,
    #[command(flatten)]
    pub nfs: crate::nfs_target::NfsArgs,
    /// Total size of the data files; larger than the storage's caches gives honest figures
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = size_arg)]
    pub size: u64,
    /// I/O engine: io_uring (one thread, many outstanding I/Os) or psync (one thread per
    /// outstanding I/O, at most one per core)
    #[arg(long, value_name = "ENGINE", default_value = "io_uring", value_parser = engine_arg)]
    pub engine: EngineKind,
    /// Go through the page cache instead of O_DIRECT (figures then show memory, not storage)
    #[arg(long)]
    pub buffered: bool,
    /// Let dbio overwrite files in --target that it did not create
    #[arg(long)]
    pub force_overwrite: bool,
}

/// A measuring command's storage, opened, with its data set ready.
pub struct Storage {
    /// The target as the user named it.
    pub name: String,
    pub engine: EngineKind,
    pub direct: bool,
    pub dataset: Dataset,
    /// Kept open for as long as the data set is used (an NFS pool lives in it).
    pub _target: Target,
}

/// Where the default data set stays and how to remove it, on stderr.
pub fn default_data_set_stays(dir: &Path, bytes: u64) {
    let dir = dir.display();
    eprintln!(
        "the data set ({}) stays in {dir} for the next command to reuse; `rm -r {dir}` removes it",
        format_size(bytes)
    );
}

/// Whether reads of `dataset` on `target` could have come from memory (None
/// for the null engine, which reads nothing).
pub fn cache_check(
    target: &Target,
    engine: EngineKind,
    direct: bool,
    dataset: &Dataset,
    page_cache: Option<u64>,
) -> Option<dbio_stats::CacheCheck> {
    use dbio_diag::cache::{cache_check, is_this_host, mem_total, CachePlace};
    if engine == EngineKind::Null {
        return None;
    }
    let place = match target.nfs() {
        Some(nfs) if is_this_host(&nfs.server) => CachePlace::NfsHere,
        Some(_) => CachePlace::NfsElsewhere,
        None => CachePlace::Local { direct },
    };
    // The data files: the redo log is written, never read.
    let memory = match (&place, page_cache) {
        (CachePlace::Local { .. }, Some(limit)) => Some(limit),
        _ => mem_total(),
    };
    Some(cache_check(dataset.data_bytes(), place, memory))
}

impl StorageArgs {
    /// After a command on the default target: where its data set stays and how
    /// to remove it. It is kept because `run`, `calibrate`, `matrix`, `frag`,
    /// `doctor` and `verify` all default to it, and making it again costs time.
    pub fn say_where_the_default_data_set_stays(&self, storage: &Storage) {
        if self.target.is_none() && storage.engine != EngineKind::Null {
            default_data_set_stays(&storage.dataset.dir, storage.dataset.data_bytes());
        }
    }

    /// Opens the target and reuses or creates the data set; `None` when a signal stopped
    /// the creation. `what` names the command in the refusal of the null engine.
    pub fn open(&self, what: &str, stop: &AtomicBool) -> anyhow::Result<Option<Storage>> {
        let name = self.target.clone().unwrap_or_else(default_target);
        self.open_at(&name, what, stop)
    }

    /// [`StorageArgs::open`] with `name` as the target (a rank's part of it).
    pub fn open_at(
        &self,
        name: &Path,
        what: &str,
        stop: &AtomicBool,
    ) -> anyhow::Result<Option<Storage>> {
        anyhow::ensure!(
            self.engine != EngineKind::Null,
            "--engine null: {what} measures storage; use `dbio run --engine null` for dbio's overhead"
        );
        let spec = DatasetSpec::new(self.size, 8192).map_err(|e| anyhow::anyhow!("--size: {e}"))?;
        let direct = !self.buffered;
        let target = Target::open(name, &self.nfs.options())?;
        let engine = target.engine(self.engine)?;
        let Some(dataset) = prepare(&target, &spec, engine, direct, self.force_overwrite, stop)?
        else {
            return Ok(None);
        };
        Ok(Some(Storage {
            name: name.display().to_string(),
            engine,
            direct,
            dataset,
            _target: target,
        }))
    }
}

static STOP: AtomicBool = AtomicBool::new(false);
/// Write end of the pipe that wakes the stop watchdog (-1: none yet).
static WAKE: AtomicI32 = AtomicI32::new(-1);

/// How long a command may take to end after the first signal: the load's drain limit
/// (5 s) and room to write the results. Past it, the watchdog ends the process.
pub const STOP_GRACE: Duration = Duration::from_secs(6);

extern "C" fn on_signal(_: libc::c_int) {
    // A second signal means "now": leave without writing results.
    if STOP.swap(true, Ordering::SeqCst) {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(EXIT_INTERRUPTED) };
    }
    let fd = WAKE.load(Ordering::SeqCst);
    if fd >= 0 {
        // SAFETY: write(2) is async-signal-safe; a failure only leaves the
        // watchdog asleep, and the command ends on its own.
        unsafe { libc::write(fd, [1u8].as_ptr().cast(), 1) };
    }
}

/// Installs SIGINT and SIGTERM handlers that set the returned flag, and a
/// watchdog that ends the process [`STOP_GRACE`] after the first signal if the
/// command has not ended by then (a step that does not look at the flag, e.g.
/// waiting on a server that never answers).
pub fn stop_flag() -> &'static AtomicBool {
    stop_flag_within(STOP_GRACE)
}

/// [`stop_flag`] with another grace (a command that waits for other dbio
/// processes to end gives them theirs first).
pub fn stop_flag_within(grace: Duration) -> &'static AtomicBool {
    static WATCHDOG: std::sync::Once = std::sync::Once::new();
    WATCHDOG.call_once(|| start_watchdog(grace));
    // Every wait of the NFS client's transport ends soon after a signal.
    dbio_rpc::stop::end_waits_on(&STOP);
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only touches atomics and calls write and _exit.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
    &STOP
}

type Fallback = Box<dyn FnOnce() -> bool + Send>;

/// What the watchdog writes when it ends a command (`Some`: armed); `None` once the
/// command writes its own results ([`finishing`]).
static FALLBACK: std::sync::Mutex<(Option<Fallback>, bool)> = std::sync::Mutex::new((None, false));

/// Arms the watchdog with the command's results for a run ended before it measured:
/// written, marked interrupted, if the watchdog has to end the process. `write`
/// says whether it wrote them.
pub fn results_if_stuck(write: impl FnOnce() -> bool + Send + 'static) {
    let mut f = FALLBACK.lock().unwrap_or_else(|e| e.into_inner());
    *f = (Some(Box::new(write)), false);
}

/// The command writes its own results now: the watchdog leaves it alone from here
/// (waiting, if it is writing the fallback, until the process ends).
pub fn finishing() {
    let mut f = FALLBACK.lock().unwrap_or_else(|e| e.into_inner());
    *f = (None, true);
}

/// A command that failed once a signal had come failed because of it (a wait the
/// signal ended, named in `error`): one line, the results armed by
/// [`results_if_stuck`] written, exit code 130. `None` when no signal came.
pub fn ended_by_signal(error: &str) -> Option<i32> {
    if !STOP.load(Ordering::SeqCst) {
        return None;
    }
    let mut f = FALLBACK.lock().unwrap_or_else(|e| e.into_inner());
    let results = match (f.1, f.0.take().map(|write| write())) {
        (false, Some(true)) => "; results written, marked interrupted",
        (false, Some(false)) => "; no results written",
        _ => "",
    };
    // The watchdog has nothing left to do.
    f.1 = true;
    eprintln!("dbio: interrupted: {error}{results}");
    Some(EXIT_INTERRUPTED)
}

fn start_watchdog(grace: Duration) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two descriptors or fails.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    let [read_fd, write_fd] = fds;
    WAKE.store(write_fd, Ordering::SeqCst);
    let spawned = std::thread::Builder::new()
        .name("stop-watchdog".into())
        .spawn(move || {
            let mut b = [0u8; 1];
            // SAFETY: reads one byte into a local buffer; retried on EINTR.
            while unsafe { libc::read(read_fd, b.as_mut_ptr().cast(), 1) } != 1 {
                if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                    return;
                }
            }
            std::thread::sleep(grace);
            let mut f = FALLBACK.lock().unwrap_or_else(|e| e.into_inner());
            if f.1 {
                return;
            }
            let wrote = f.0.take().is_some_and(|write| write());
            eprintln!(
                "dbio: interrupted: still busy {:.1} s after the signal (a server that does not \
                 answer?); {}",
                grace.as_secs_f64(),
                if wrote {
                    "results written, marked interrupted"
                } else {
                    "no results written"
                }
            );
            std::process::exit(EXIT_INTERRUPTED);
        });
    if spawned.is_err() {
        WAKE.store(-1, Ordering::SeqCst);
    }
}

/// Progress lines go to stderr only when it is a terminal.
pub fn progress_printer() -> Option<impl Fn(&str) + Sync> {
    std::io::stderr().is_terminal().then_some(|line: &str| {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{line}");
    })
}

/// Reuses or creates the data set in `target`, with a progress line on a
/// terminal; `None` when a signal stopped the creation (the caller then
/// writes its partial results or exits).
pub fn prepare(
    target: &Target,
    spec: &DatasetSpec,
    engine: EngineKind,
    direct: bool,
    force_overwrite: bool,
    stop: &AtomicBool,
) -> anyhow::Result<Option<Dataset>> {
    print_notices(target);
    let mut progress = Progress::new();
    progress.what = Some(dataset_parts(spec));
    let prepared = target.prepare(
        spec,
        engine,
        direct,
        force_overwrite,
        stop,
        &mut |p, d, t| progress.creating(&p, d, t),
    );
    let out = match prepared {
        Ok(ds) => {
            progress.ready(&ds);
            Ok(Some(ds))
        }
        Err(TargetError::Dataset(DatasetError::Interrupted)) => {
            progress.end_line();
            Ok(None)
        }
        Err(e) => Err(e.into()),
    };
    print_notices(target);
    out
}

/// Shows what the target has to say and has not said yet (an oranfstab's warnings, an
/// NFS open the server refused).
pub fn print_notices(target: &Target) {
    for n in target.take_notices() {
        eprintln!("note: {n}");
    }
}

/// Tells where each output file went, one `wrote FILE` line each on stderr
/// (stdout keeps the report, which may be piped).
pub fn wrote(files: Vec<PathBuf>) {
    for f in files {
        eprintln!("wrote {}", f.display());
    }
}

/// Writes the result of a run interrupted before it started; its exit code.
pub fn exit_interrupted(
    result: dbio_stats::RunResult,
    outputs: &dbio_report::Outputs,
) -> anyhow::Result<i32> {
    eprintln!(
        "dbio: interrupted while preparing the data set; it will be prepared again next time"
    );
    wrote(dbio_report::write_outputs(
        &dbio_report::AnyResult::Run(result),
        outputs,
    )?);
    Ok(EXIT_INTERRUPTED)
}

/// A progress callback for a pass that rewrites a data set: announced by a
/// line naming `what` and the place, then a percentage on a terminal.
pub fn progress_line(what: &'static str) -> impl FnMut(&Path, u64, u64) {
    let tty = std::io::stderr().is_terminal();
    let mut announced = false;
    let mut last = 0u64;
    move |dir, done, total| {
        if !announced {
            eprintln!("{what} {}", dir.display());
            announced = true;
        }
        let pct = done * 100 / total.max(1);
        if tty && pct != last {
            last = pct;
            eprint!("\r\x1b[K  {pct:>3}%");
            if done == total {
                eprintln!();
            }
        }
    }
}

/// The data files and the redo log of `spec` apart, then their sum: the
/// headline's data set size is the data files' alone.
fn dataset_parts(spec: &DatasetSpec) -> String {
    let files = spec.files();
    let sum = |kind: FileKind| -> u64 {
        files
            .iter()
            .filter(|f| f.kind == kind)
            .map(|f| f.size)
            .sum()
    };
    let (data, redo) = (sum(FileKind::Data), sum(FileKind::Redo));
    format!(
        "{} of data files and a {} redo log, {} in all",
        format_size(data),
        format_size(redo),
        format_size(data + redo)
    )
}

/// Progress of a long pass over `total` bytes: a percentage line on stderr,
/// redrawn in place at most five times a second, on a terminal only.
pub struct Progress {
    /// What is created, said in the announcing line in place of its size.
    pub what: Option<String>,
    tty: bool,
    announced: bool,
    last: Instant,
    started: Instant,
}

impl Progress {
    pub fn new() -> Self {
        let now = Instant::now();
        Self {
            what: None,
            tty: std::io::stderr().is_terminal(),
            announced: false,
            last: now,
            started: now,
        }
    }

    /// Redraws the percentage line when it is due.
    pub fn show(&mut self, done: u64, total: u64) {
        if self.tty && (self.last.elapsed() >= Duration::from_millis(200) || done == total) {
            self.last = Instant::now();
            eprint!(
                "\r\x1b[K  {:>3}%  {} of {}",
                done * 100 / total.max(1),
                format_size(done),
                format_size(total)
            );
        }
    }

    /// [`Progress::show`] for creating a data set in `place`, announced
    /// once by a line even when stderr is not a terminal.
    pub fn creating(&mut self, place: &dyn std::fmt::Display, done: u64, total: u64) {
        if !self.announced {
            let what = self.what.clone().unwrap_or_else(|| format_size(total));
            eprintln!("creating data set in {place} ({what})");
            self.announced = true;
        }
        self.show(done, total);
    }

    /// Ends the percentage line.
    pub fn end_line(&self) {
        if self.tty {
            eprintln!();
        }
    }

    /// Says the data set is ready when this pass created it.
    pub fn ready(&self, ds: &Dataset) {
        if ds.created {
            self.end_line();
            eprintln!(
                "data set {:016x} ready: {} files, {} in {:.1} s",
                ds.id,
                ds.files.len(),
                format_size(ds.total_bytes()),
                self.elapsed().as_secs_f64()
            );
        }
    }

    /// Time since the pass began.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}
