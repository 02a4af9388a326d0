//! The flags `dbio run` and `dbio replay` share: where the data set is, how each user
//! keeps its I/Os, what to leave out of the measurement, the objectives and the labels.
//! One definition, flattened into both, so that a flag means the same in each; the
//! flags whose default differs (--engine, --users, --time, --size, --page-cache) stay
//! with their command.

use std::path::PathBuf;
use std::time::Duration;

use dbio_engine::EngineKind;
use dbio_stats::slo::Slo;
use dbio_workload::IoClass;

use crate::common::{duration_arg, LabelArgs};

#[derive(clap::Args)]
pub struct RunFlags {
    /// Directory of the data set; created if its parent exists [default: /var/tmp/dbio-<uid>].
    /// An nfs://server/export/dir?version=3&mountport=M&nfsport=N URL drives the server
    /// through dbio's own NFS client (engine "nfs"), the data set being created through NFS;
    /// `version=4.1` speaks NFSv4.1 (sessions, port 2049), `version=pnfs` sends each
    /// file's I/O to the data server its layout names (`layout_refresh=SECONDS`, default
    /// 10: how often layouts are fetched again, so that I/O follows data that moved);
    /// `sec=krb5|krb5i|krb5p` reaches a Kerberos export with the ticket of `kinit` (or
    /// of the client keytab named by KRB5_CLIENT_KTNAME)
    #[arg(long, value_name = "PATH")]
    pub target: Option<PathBuf>,
    #[command(flatten)]
    pub nfs: crate::nfs_target::NfsArgs,
    /// Take the workload from a SLOB 2.5 slob.conf, read as it is: UPDATE_PCT, SCAN_PCT,
    /// RUN_TIME, WORK_LOOP, SCALE, SCAN_TABLE_SZ, WORK_UNIT, REDO_STRESS, THREADS_PER_SCHEMA,
    /// DO_HOTSPOT and HOTSPOT_*, THINK_TM_*. A table shows what each became before the run.
    /// Options given on the command line win over the file. --users then counts SLOB
    /// schemas (runit.sh's argument), each running THREADS_PER_SCHEMA sessions on SCALE of
    /// data; WORK_LOOP and THINK_TM_FREQUENCY count statements of WORK_UNIT blocks (I/Os).
    /// Variables about connectivity or statistics are named as ignored, unknown ones in a
    /// warning. A replay takes the sessions, RUN_TIME, SCALE and hot spot only: its model
    /// decides the mix (UPDATE_PCT, SCAN_PCT and the like are named and not taken)
    #[arg(long, value_name = "FILE")]
    pub slob_conf: Option<PathBuf>,
    /// I/Os each user keeps in flight (1 = a session waiting on each I/O, like a foreground
    /// process; more = asynchronous I/O like DBWR or parallel query). In an open loop
    /// (--rate, or a replay), the most each user may have in flight: arrivals beyond it
    /// wait, and the wait counts [default: 1; 32 with --rate; a replay: the model's (1 for
    /// PostgreSQL), else 32]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub outstanding: Option<u32>,
    /// Run this long first without recording (caches, connections and queues settle), e.g.
    /// 5s; --time counts from its end (a replay: before each step)
    #[arg(long, value_name = "DURATION", value_parser = duration_arg, default_value = "0s")]
    pub warmup: Duration,
    /// Go through the page cache instead of O_DIRECT (figures then show memory, not storage)
    #[arg(long)]
    pub buffered: bool,
    /// Let dbio overwrite files in --target that it did not create
    #[arg(long)]
    pub force_overwrite: bool,
    /// Seed of the I/O generators and arrivals (the same seed replays the same offsets)
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Service-level objective, repeatable or comma-separated: CLASS=LATENCY[@pXX], e.g.
    /// single-block-read=1ms@p99 or redo-write=500us (the mean without @). Each is judged
    /// pass or fail in the output and the JSON; exit code 3 when any fails. A replay's
    /// are over its default: production's own mean per class
    #[arg(long, value_name = "CLASS=LATENCY[@pXX]", value_delimiter = ',', value_parser = slo_arg)]
    pub slo: Vec<Slo>,
    #[command(flatten)]
    pub label: LabelArgs,
}

/// Where and how a plan runs: what `measure` takes of the command line
/// (`dbio run`'s or `dbio replay`'s).
#[derive(Clone)]
pub struct Setup {
    pub nfs: dbio_storage::NfsOptions,
    pub engine: EngineKind,
    pub labels: dbio_stats::Labels,
    pub force_overwrite: bool,
    pub views: bool,
    /// Buffered I/O through a page cache of this many bytes (`--page-cache`).
    pub page_cache: Option<u64>,
}

pub fn slo_arg(s: &str) -> Result<Slo, String> {
    let names: Vec<&str> = IoClass::ALL.iter().map(|c| c.name()).collect();
    Slo::parse(s, &names).map_err(|e| e.to_string())
}

impl RunFlags {
    /// Where and how a plan runs, with what the command decided of the rest.
    pub fn setup(&self, engine: EngineKind, views: bool, page_cache: Option<u64>) -> Setup {
        Setup {
            nfs: self.nfs.options(),
            engine,
            labels: self.label.labels(),
            force_overwrite: self.force_overwrite,
            views,
            page_cache,
        }
    }

    /// The data set's directory or URL: --target, else dbio's default.
    pub fn target_or_default(&self) -> PathBuf {
        self.target
            .clone()
            .unwrap_or_else(crate::common::default_target)
    }
}
