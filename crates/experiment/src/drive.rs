//! The load driver shared by run and calibrate: one thread per user, each
//! with its own engine, keeping `outstanding` I/Os in flight.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use dbio_engine::{Completion, Engine, EngineConfig, EngineKind, IoDir, IoRequest};
use dbio_stats::{ClassDesc, CpuClock, CpuUsage, Lateness, Live, Recorder, ThreadSched};
use dbio_workload::verify::{GenMap, VerifyCounts};
use dbio_workload::{Dataset, Generator, IoClass, Layout, Op, WorkloadConfig};

use crate::pace::{OpenLoop, Pacer};
use crate::ExperimentError;

/// What the buffers hold: fresh content for writes, verify mode's stamps and checks.
mod content;
mod sleeps;
mod slots;
mod unmap;
use sleeps::Sleeps;
use slots::{claim, unclaim, InFlight, Slots};
use unmap::Unmapper;

/// Longest a user waits in one reap: bounds how late it sees a stop.
const REAP_WAIT: Duration = Duration::from_millis(100);
/// Writes up to this size get fresh PRNG content per block; larger ones
/// (redo) get their sectors stamped, which costs far less CPU.
const FULL_FILL_MAX: u32 = 32 << 10;
/// How long in-flight I/Os may take to finish after a stop.
const DRAIN_LIMIT: Duration = Duration::from_secs(5);

/// One load to drive.
pub(crate) struct Load<'a> {
    pub dataset: &'a Dataset,
    pub engine: EngineKind,
    pub direct: bool,
    pub workload: &'a WorkloadConfig,
    pub users: u32,
    pub outstanding: u32,
    pub duration: Option<Duration>,
    /// Completions of I/Os issued before this much time are not recorded.
    pub warmup: Duration,
    /// I/Os per user.
    pub loops: Option<u64>,
    pub seed: u64,
    /// Verify mode: writes carry verified content tracked in this map, reads
    /// check what they read.
    pub verify: Option<&'a GenMap>,
    /// Verify mode: the map (the journal of in-flight writes) reaches
    /// stable storage before each batch of writes is issued.
    pub verify_sync: bool,
    /// Open loop: I/Os arrive at these rates whatever became of the ones
    /// before (see [`crate::pace`]); `outstanding` is then a cap.
    pub open_loop: Option<&'a OpenLoop>,
    /// Told when the measured window starts and ends.
    pub on_window: Option<&'a crate::hooks::WindowHook>,
    /// Count which calls of a synchronous engine slept (see [`Sleeps`]); each call is
    /// then timed to its return, not to when the loop reaps it.
    pub count_sleeps: bool,
}

impl<'a> Load<'a> {
    /// A timed closed-loop load of `outstanding` I/Os, unverified: one user holding
    /// them all on an asynchronous engine, one user per I/O on a synchronous one
    /// (calibrate's levels and the matrix's points).
    #[allow(clippy::too_many_arguments)]
    pub fn closed(
        dataset: &'a Dataset,
        engine: EngineKind,
        direct: bool,
        workload: &'a WorkloadConfig,
        outstanding: u32,
        duration: Duration,
        warmup: Duration,
        seed: u64,
    ) -> Self {
        let (users, per_user) = if matches!(engine, EngineKind::Psync) {
            (outstanding, 1)
        } else {
            (1, outstanding)
        };
        Load {
            dataset,
            engine,
            direct,
            workload,
            users,
            outstanding: per_user,
            duration: Some(duration),
            warmup,
            loops: None,
            seed,
            verify: None,
            verify_sync: false,
            open_loop: None,
            on_window: None,
            count_sleeps: false,
        }
    }
}

/// Draws before a verify-mode user gives up finding a write whose blocks
/// have no write in flight, and tries again after the next completion.
const CLAIM_TRIES: u32 = 32;

/// What a load measured.
pub(crate) struct Outcome {
    pub recorder: Recorder,
    /// From the end of the warm-up to the last completion.
    pub measured: Duration,
    /// CPU of the process over `measured`.
    pub cpu: CpuUsage,
    /// Outstanding I/Os per user actually used (1 for synchronous engines).
    pub outstanding: u32,
    /// The first I/O error, which stopped the load.
    pub error: Option<ExperimentError>,
    /// What the reads of verify mode found.
    pub verify: Option<VerifyCounts>,
    /// Open loop: how late the I/Os were issued.
    pub lateness: Option<Lateness>,
    /// The user threads' wait for a CPU over the measured window.
    pub sched: Option<ThreadSched>,
}

/// The recorder's classes: every [`IoClass`], in order.
pub(crate) fn class_descs() -> Vec<ClassDesc> {
    IoClass::ALL
        .iter()
        .map(|c| ClassDesc::new(c.name(), c.wait_event()))
        .collect()
}

/// Drives `load` until its time or loops are done or `stop` is set.
/// `tick` is called from this thread about ten times a second.
pub(crate) fn drive(
    load: &Load,
    stop: &AtomicBool,
    live: &Live,
    tick: &mut dyn FnMut(Instant),
) -> Result<Outcome, ExperimentError> {
    let layout = Layout::of(load.dataset);
    let users = load.users.max(1);
    // Classes with a user of their own (a database's page writer) run on one more.
    let threads = users + u32::from(load.open_loop.is_some_and(|o| o.rates.own_user()));
    // Engines are opened here, before any thread starts, so that a refusal
    // (no O_DIRECT, a missing file) fails the whole load at once.
    let mut engines: Vec<Box<dyn Engine>> = Vec::with_capacity(threads as usize);
    let mut outstanding = load.outstanding.max(1);
    for _ in 0..threads {
        let mut cfg = EngineConfig {
            files: load.dataset.run_files(load.workload),
            depth: outstanding,
            max_io: load.workload.max_io(),
            direct: load.direct,
            write: load.workload.writes(),
            shared_buffers: load.workload.unmapped_read_permille > 0,
            io_workers: load.workload.io_workers,
            // A single block the backend reads itself; larger reads (its read
            // streams') go to the workers.
            io_workers_from: load.workload.block_size.saturating_mul(2),
            no_read_ahead: load.workload.no_read_ahead,
            submitted: load.workload.submitted,
        };
        let mut e = load.dataset.open_engine(load.engine, &cfg)?;
        if !e.capabilities().async_io && outstanding > 1 {
            // A synchronous engine finishes each I/O inside submit: more
            // than one "outstanding" would only inflate latencies.
            outstanding = 1;
            cfg.depth = 1;
            e = load.dataset.open_engine(load.engine, &cfg)?;
        }
        engines.push(e);
    }
    let mut gens = load.generators(&layout)?;
    if threads > users {
        gens.push(
            Generator::new(load.workload, &layout, users, threads, load.seed)
                .map_err(ExperimentError::from)?,
        );
    }
    // Reads through the page cache behind a simulated buffer pool: the cache as a
    // server that has run a while has it.
    if !load.direct {
        if let Some(pool) = load
            .workload
            .read_skew
            .as_ref()
            .and_then(|s| s.pool.as_ref())
        {
            let files = load.dataset.run_files(load.workload);
            crate::warm::page_cache(&files, &layout, &pool.warm_blocks(), stop)
                .map_err(|e| ExperimentError::Config(format!("warming the page cache: {e}")))?;
        }
    }
    let halt = AtomicBool::new(false);
    let start = Instant::now();
    let record_from = start + load.warmup;
    let deadline = load.duration.map(|d| record_from + d);
    let classes = class_descs();
    let files = load.dataset.files.len();
    let mut cpu_from = CpuClock::now();
    let mut warm = load.warmup.is_zero();
    let edge = |e: crate::hooks::WindowEdge| {
        if let Some(h) = load.on_window {
            (h.0)(e);
        }
    };
    if warm {
        edge(crate::hooks::WindowEdge::Start);
    }
    let results = std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(threads as usize);
        for (u, (engine, gen)) in engines.into_iter().zip(gens).enumerate() {
            let sleeps = (load.count_sleeps && !engine.capabilities().async_io).then(Sleeps::new);
            let pacer = load.open_loop.map(|o| {
                let who = (u as u32, users, load.seed);
                Pacer::new(o, who, start, record_from, deadline)
            });
            let user = User {
                engine,
                gen,
                recorder: Recorder::new(&classes, files, start),
                outstanding,
                loops: load.loops,
                deadline,
                record_from,
                dataset_id: load.dataset.id,
                block_size: load.dataset.block_size as usize,
                generation: (u as u64) << 40,
                dataset: load.dataset,
                verify: load.verify,
                verify_sync: load.verify_sync,
                counts: VerifyCounts::default(),
                stop,
                halt: &halt,
                live,
                issued: 0,
                pending: None,
                think_until: None,
                error: None,
                pacer,
                unmap: Unmapper::new(load.workload.unmapped_read_permille, load.seed, u as u64),
                sleeps,
            };
            let h = std::thread::Builder::new()
                .name(format!("dbio-user-{u}"))
                .spawn_scoped(s, move || user.work());
            match h {
                Ok(h) => handles.push(h),
                Err(e) => {
                    halt.store(true, Ordering::Relaxed);
                    return Err(ExperimentError::Thread(e));
                }
            }
        }
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(20));
            let now = Instant::now();
            if !warm && now >= record_from {
                cpu_from = CpuClock::now();
                warm = true;
                edge(crate::hooks::WindowEdge::Start);
            }
            tick(now);
        }
        Ok(handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(ExperimentError::Config("a user thread panicked".into()))
                })
            })
            .collect::<Vec<_>>())
    })?;
    if warm {
        edge(crate::hooks::WindowEdge::End);
    }
    // The last user's end, not when this thread saw it (it looks every 20 ms).
    let mut end = start;
    let cpu = CpuClock::now().since(&cpu_from);
    let mut merged = Recorder::new(&classes, files, start);
    let mut error = None;
    let mut verify = load.verify.map(|_| VerifyCounts::default());
    let mut lateness = load.open_loop.map(|_| Lateness::new(classes.len()));
    let mut sched = None;
    for r in results {
        match r {
            Ok(Worked {
                recorder: rec,
                error: err,
                counts,
                lateness: late,
                ended,
                sched: window,
                sleeps,
            }) => {
                end = end.max(ended);
                if let Some((from, to)) = window {
                    sched.get_or_insert_with(ThreadSched::default).add(from, to);
                }
                if let Some(s) = sleeps {
                    s.add_to(sched.get_or_insert_with(ThreadSched::default));
                }
                merged.merge(&rec);
                if let (Some(all), Some(l)) = (&mut lateness, late) {
                    all.merge(&l);
                }
                if let Some(v) = &mut verify {
                    v.merge(&counts);
                }
                if error.is_none() {
                    error = err;
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(Outcome {
        recorder: merged,
        measured: end.saturating_duration_since(record_from.min(end)),
        cpu,
        outstanding,
        error,
        verify,
        lateness,
        sched,
    })
}

/// What one user's loop gives back.
struct Worked {
    recorder: Recorder,
    error: Option<ExperimentError>,
    counts: VerifyCounts,
    lateness: Option<Lateness>,
    /// When the loop ended (its last completion or its stop).
    ended: Instant,
    /// The thread's schedstat (run_delay, timeslices) at the measured window's start
    /// and at its end.
    sched: Option<((u64, u64), (u64, u64))>,
    /// Which calls slept, where counted.
    sleeps: Option<Sleeps>,
}

struct User<'a> {
    engine: Box<dyn Engine>,
    gen: Generator,
    recorder: Recorder,
    outstanding: u32,
    loops: Option<u64>,
    deadline: Option<Instant>,
    record_from: Instant,
    dataset_id: u64,
    block_size: usize,
    generation: u64,
    dataset: &'a Dataset,
    verify: Option<&'a GenMap>,
    verify_sync: bool,
    counts: VerifyCounts,
    /// Set by the caller to stop every user.
    stop: &'a AtomicBool,
    /// Set by any user whose I/O failed, to stop the others.
    halt: &'a AtomicBool,
    live: &'a Live,
    /// I/Os submitted so far.
    issued: u64,
    /// An operation drawn but not issued yet (a think time or an
    /// unclaimable write came first).
    pending: Option<Op>,
    /// No I/O is issued before this time.
    think_until: Option<Instant>,
    /// The first error, which halts the load.
    error: Option<ExperimentError>,
    /// Open loop: the arrivals to issue.
    pacer: Option<Pacer>,
    /// Read buffers' pages to take out of the page tables after each read.
    unmap: Unmapper,
    /// Which calls slept, where counted.
    sleeps: Option<Sleeps>,
}

impl User<'_> {
    /// The user's loop: issue into every free slot, commit the batch, reap
    /// at least one completion and complete what came back (record it,
    /// verify it); until told to stop, then drain what is in flight.
    fn work(mut self) -> Result<Worked, ExperimentError> {
        let depth = self.outstanding.min(self.engine.depth()).max(1);
        let caps = self.engine.capabilities();
        // An asynchronous engine issues at commit: one journal flush per
        // batch; a synchronous one issues inside submit: one per write.
        let sync_batch = caps.async_io;
        let mut slots = Slots::new(depth, self.verify.is_some());
        let mut done: Vec<Completion> = Vec::with_capacity(depth as usize);
        let mut now = Instant::now();
        let mut drain_by: Option<Instant> = None;
        // This thread's schedstat when the measured window began.
        let mut sched_from = None;
        if self.pacer.is_some() {
            Pacer::tighten_timer();
        }
        loop {
            if sched_from.is_none() && now >= self.record_from {
                sched_from = ThreadSched::this_thread();
            }
            let over = self.over(now);
            if over && drain_by.is_none() {
                drain_by = Some(now + DRAIN_LIMIT);
            }
            if self.think_until.is_some_and(|t| now >= t) {
                self.think_until = None;
            }
            if !over && self.think_until.is_none() {
                let journal = if self.pacer.is_some() {
                    self.issue_due(&mut slots, caps.no_data, sync_batch, now)
                } else {
                    self.issue(&mut slots, caps.no_data, sync_batch)
                };
                self.commit(journal);
            }
            if self.engine.in_flight() == 0 {
                if over {
                    break;
                }
                if let Some(p) = &mut self.pacer {
                    // Work for the next I/O done while waiting, out of its latency.
                    self.gen.prepare();
                    p.sleep(REAP_WAIT);
                    now = Instant::now();
                    continue;
                }
                if let Some(t) = self.think_until {
                    std::thread::sleep(t.saturating_duration_since(Instant::now()).min(REAP_WAIT));
                }
                now = Instant::now();
                continue;
            }
            if drain_by.is_some_and(|d| now >= d) {
                break;
            }
            let free = !slots.free.is_empty();
            if !self.reap(&mut done, free) {
                break;
            }
            now = Instant::now();
            if let Some(p) = &mut self.pacer {
                p.woke(now);
            }
            self.complete(&mut slots, &mut done, now);
        }
        let mut ended = now;
        if let (Some(p), Some(d)) = (&mut self.pacer, self.deadline) {
            // Its arrivals ran out with the time: the rate is over the whole
            // time, even when the last I/O finished before it.
            if p.exhausted() {
                ended = ended.max(d);
            }
        }
        let lateness = self.pacer.take().map(|mut p| {
            // Arrivals after the last of --loops were never meant to run.
            if self.loops.is_none_or(|l| self.issued < l) {
                let gen = &mut self.gen;
                p.finish(now, &mut |c| c.unwrap_or_else(|| gen.next_op().class));
            }
            p.lateness
        });
        Ok(Worked {
            recorder: self.recorder,
            error: self.error,
            counts: self.counts,
            lateness,
            ended,
            sched: sched_from.zip(ThreadSched::this_thread()),
            sleeps: self.sleeps,
        })
    }

    /// Time, loops, a stop or another user's failure end the load. An
    /// open loop issues every arrival due before the time is up, late ones
    /// too, for at most [`DRAIN_LIMIT`] after it.
    fn over(&mut self, now: Instant) -> bool {
        let time_up = match &mut self.pacer {
            Some(p) => p.exhausted() || self.deadline.is_some_and(|d| now >= d + DRAIN_LIMIT),
            None => self.deadline.is_some_and(|d| now >= d),
        };
        time_up
            || self.stop.load(Ordering::Relaxed)
            || self.halt.load(Ordering::Relaxed)
            || self.loops.is_some_and(|l| self.issued >= l)
    }

    /// Keeps the first error and halts the load.
    fn fail(&mut self, e: ExperimentError) {
        self.halt.store(true, Ordering::Relaxed);
        self.error.get_or_insert(e);
    }

    /// Issue step: draws an operation for each free slot and submits it,
    /// until the slots, the loops or the operations that may go now run
    /// out. True when writes of this batch wait for the journal
    /// (`verify_sync` on an engine that starts I/O at commit).
    fn issue(&mut self, slots: &mut Slots, no_data: bool, sync_batch: bool) -> bool {
        let mut journal = false;
        while let Some(slot) = slots.free.pop() {
            if self.loops.is_some_and(|l| self.issued >= l) {
                slots.free.push(slot);
                break;
            }
            let Some(op) = self.draw(slots, slot, None) else {
                slots.free.push(slot);
                break;
            };
            if op.dir == IoDir::Write && self.verify_sync && sync_batch {
                journal = true;
            }
            if !self.submit(slots, slot, op, (no_data, sync_batch), Instant::now()) {
                break;
            }
            self.issued += 1;
        }
        journal
    }

    /// Issue step of an open loop: the arrivals due by `now`, each with its
    /// intended start, while slots are free; what stays due waits in the
    /// backlog. True as for [`User::issue`].
    fn issue_due(
        &mut self,
        slots: &mut Slots,
        no_data: bool,
        sync_batch: bool,
        now: Instant,
    ) -> bool {
        let Some(mut pacer) = self.pacer.take() else {
            return false;
        };
        let now_ns = pacer.ns(now);
        let mut journal = false;
        while let Some(slot) = slots.free.pop() {
            let due = pacer.due(now_ns);
            if self.loops.is_some_and(|l| self.issued >= l) || due.is_none() {
                slots.free.push(slot);
                break;
            }
            let Some(arrival) = due else { break };
            let Some(op) = self.draw(slots, slot, Some(arrival.class)) else {
                slots.free.push(slot);
                break;
            };
            if op.dir == IoDir::Write && self.verify_sync && sync_batch {
                journal = true;
            }
            if !self.submit(slots, slot, op, (no_data, sync_batch), pacer.at(arrival)) {
                break;
            }
            pacer.issued(op.class, now_ns);
            self.issued += 1;
        }
        if slots.free.is_empty() {
            pacer.blocked(now_ns);
        }
        self.pacer = Some(pacer);
        journal
    }

    /// The next operation for `slot` (verify mode: with its blocks
    /// claimed), or None when none may go now: a think time begins, or no
    /// write whose blocks are free was found. The operation drawn is then
    /// kept for later. `arrival`: an open loop's arrival, of one class or
    /// (None) of the mix; it never thinks.
    fn draw(
        &mut self,
        slots: &mut Slots,
        slot: u32,
        arrival: Option<Option<IoClass>>,
    ) -> Option<Op> {
        let fresh = |gen: &mut Generator| match arrival {
            Some(Some(class)) => gen.next_of(class),
            Some(None) => Op {
                think_ns: 0,
                ..gen.next_op()
            },
            None => gen.next_op(),
        };
        let mut op = self.pending.take().unwrap_or_else(|| fresh(&mut self.gen));
        if let Some(map) = self.verify {
            let g = &mut slots.gens[slot as usize];
            let mut tries = 0;
            while !claim(map, &op, g) {
                tries += 1;
                if tries == CLAIM_TRIES {
                    break;
                }
                op = fresh(&mut self.gen);
            }
            if tries == CLAIM_TRIES {
                self.pending = Some(op);
                return None;
            }
        }
        if op.think_ns > 0 {
            if let Some(map) = self.verify {
                unclaim(map, &op, &slots.gens[slot as usize]);
            }
            self.think_until = Some(Instant::now() + Duration::from_nanos(op.think_ns));
            op.think_ns = 0;
            self.pending = Some(op);
            return None;
        }
        Some(op)
    }

    /// Fills a write's buffer (verify mode: stamps its blocks), notes the
    /// I/O in its slot and submits it. False when it failed (the error is
    /// kept and the load halted).
    /// `start`: when the I/O's latency counts from (now, or an open
    /// loop's intended start).
    fn submit(
        &mut self,
        slots: &mut Slots,
        slot: u32,
        op: Op,
        (no_data, sync_batch): (bool, bool),
        start: Instant,
    ) -> bool {
        let i = slot as usize;
        if op.dir == IoDir::Write && !no_data {
            self.fill(slot, &op, &mut slots.filled[i]);
            if self.verify.is_some() {
                self.stamp(slot, &op, &slots.gens[i]);
            }
        }
        slots.inflight[i] = InFlight {
            start,
            class: op.class.index() as u8,
            write: op.dir == IoDir::Write,
            file: op.file,
            offset: op.offset,
            len: op.len,
            end: None,
        };
        let req = IoRequest {
            file: op.file,
            offset: op.offset,
            len: op.len,
            dir: op.dir,
            slot,
            durability: op.durability,
            tag: u64::from(slot),
        };
        if req.dir == IoDir::Write && self.verify_sync && !sync_batch {
            if let Err(e) = self.sync_journal() {
                self.fail(e);
                return false;
            }
        }
        let mark = self.sleeps.as_ref().and_then(|_| Sleeps::mark());
        let submitted = self.engine.submit(req);
        if let Some(s) = &mut self.sleeps {
            // The call's end before the count, which stays out of its latency.
            slots.inflight[i].end = Some(Instant::now());
            if submitted.is_ok() && start >= self.record_from {
                s.count(op.class.index(), mark);
            }
        }
        if let Err(e) = submitted {
            if let Some(map) = self.verify {
                unclaim(map, &op, &slots.gens[i]);
            }
            slots.free.push(slot);
            self.fail(e.into());
            return false;
        }
        true
    }

    /// Commit step: the journal of this batch's writes reaches stable
    /// storage first (when `journal`), then the engine starts the batch.
    fn commit(&mut self, journal: bool) {
        if journal {
            if let Err(e) = self.sync_journal() {
                self.fail(e);
            }
        }
        if let Err(e) = self.engine.commit() {
            self.fail(e.into());
        }
    }

    /// Reap step: waits for at least one completion, at most
    /// [`REAP_WAIT`] or until the think time ends or, with a slot `free`,
    /// the open loop's next arrival (never spins). False when the engine
    /// failed (the error is kept).
    fn reap(&mut self, done: &mut Vec<Completion>, free: bool) -> bool {
        done.clear();
        let wait = match (&mut self.pacer, self.think_until) {
            (Some(p), _) if free && self.pending.is_none() => {
                p.wait(Instant::now(), REAP_WAIT).unwrap_or(REAP_WAIT)
            }
            (_, Some(t)) => t.saturating_duration_since(Instant::now()).min(REAP_WAIT),
            _ => REAP_WAIT,
        };
        if let Err(e) = self.engine.reap(1, wait, done) {
            self.fail(e.into());
            return false;
        }
        true
    }

    /// Complete step: each completion is checked (verify mode), recorded
    /// (unless issued during the warm-up) and its slot freed; the live
    /// counters get the batch at once.
    fn complete(&mut self, slots: &mut Slots, done: &mut Vec<Completion>, now: Instant) {
        let (mut n, mut bytes, mut lat_sum) = (0u64, 0u64, 0u64);
        for c in done.drain(..) {
            let Some(&f) = slots.inflight.get(c.slot as usize) else {
                // An engine bug, not an I/O result: stop rather than guess.
                let e = ExperimentError::Config(format!(
                    "engine {} completed unknown slot {}",
                    self.engine.name(),
                    c.slot
                ));
                self.fail(e);
                continue;
            };
            slots.free.push(c.slot);
            match c.result {
                Ok(len) => {
                    if let Some(map) = self.verify {
                        self.check(map, c.slot, &f, &slots.gens[c.slot as usize]);
                    }
                    let end = f.end.unwrap_or(now);
                    let lat = end.saturating_duration_since(f.start).as_nanos() as u64;
                    if f.start >= self.record_from {
                        self.recorder.record(
                            f.class as usize,
                            f.file as usize,
                            f.write,
                            len,
                            lat,
                            end,
                        );
                    }
                    if !f.write {
                        // After the latency is taken: the next read into this slot
                        // takes the faults, inside its call.
                        let pages = self.unmap.pages(f.len);
                        if pages > 0 {
                            self.engine.unmap_buffer(c.slot, pages);
                        }
                    }
                    n += 1;
                    bytes += u64::from(len);
                    lat_sum += lat;
                }
                Err(e) => {
                    self.recorder.record_failure();
                    self.fail(e.into());
                }
            }
        }
        if n > 0 {
            self.live.add(n, bytes, lat_sum);
        }
    }
}
