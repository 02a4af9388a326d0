//! SLOB 2.5's `slob.conf`, read as it is written, as a dbio workload: the source of a
//! run's knobs rather than of a workload model, kept with the other sources.
//!
//! runit.sh sources slob.conf with bash, so the file is read as bash would
//! ([`shell`]): assignments, `export`, quotes, comments and
//! `${VAR:-default}` values. Each variable then falls in one of three groups:
//!
//! - **shapes I/O**: becomes a [`Knob`] in dbio's terms ([`SlobConf::settings`]);
//! - **not about the run's I/O** (SQL*Net, passwords, AWR or Statspack,
//!   the external script, the loader's concurrency): named in
//!   [`SlobConf::not_io`], for one notice line;
//! - **unsupported or unknown**: named with the reason in
//!   [`SlobConf::unsupported`], for a warning. Nothing is dropped silently.
//!
//! A value that cannot be read or is out of range is a [`SlobError`] naming
//! the file, the line and the variable.
//!
//! How SLOB's loop maps onto dbio's (slob.sql): a SLOB session runs SQL
//! statements that each touch WORK_UNIT blocks; UPDATE_PCT of them are
//! updates, SCAN_PCT of the rest scan the SCAN_TABLE_SZ table. In dbio a user
//! draws single block operations with the same percentages, so the mix is
//! the same, and counts that SLOB gives in statements are multiplied by
//! WORK_UNIT to become I/Os: WORK_LOOP statements are WORK_LOOP x WORK_UNIT
//! I/Os per user (`--loops`), a think time every THINK_TM_FREQUENCY
//! statements is one every THINK_TM_FREQUENCY x WORK_UNIT I/Os. SCALE is
//! per schema; runit.sh's schema count is dbio's `--users`, each running
//! THREADS_PER_SCHEMA sessions, so the data set is SCALE x schemas and the
//! sessions schemas x THREADS_PER_SCHEMA. A variable the file leaves out or
//! empty keeps dbio's setting (runit.sh would use its own default).
//! UPDATE_PCT and SCAN_PCT from 51 to 99, which runit.sh refuses as not
//! repeatable, are taken: dbio draws its mix from a seeded generator. A hot
//! spot is one region of the whole data set (SLOB has one per schema).
//!
//! **Use from a command** (`dbio run --slob-conf`, and `dbio replay`):
//! [`SlobConf::parse`] reads the file; `RunOptions::apply_slob` (in
//! dbio-experiment) sets a run's options from it, leaving alone the options
//! the command line gave, and returns the rows of the table to show
//! ([`Knob::describe`] words each); print [`SlobConf::not_io_notice`] and
//! [`SlobConf::unsupported_warning`] beside it. In the CLI,
//! `slob_conf::apply::<Args>(path, &mut options, show)` does all of that for
//! any command whose `Args` name options as `dbio run` does (it finds which
//! ones the command line gave).

pub mod shell;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use dbio_workload::generator::{RedoStress, Think};
use dbio_workload::units::format_size;
use dbio_workload::IoClass;

use shell::{assignments, Value};

/// Variables SLOB 2.5 reads that shape the run's I/O.
const IO_VARS: [&str; 18] = [
    "UPDATE_PCT",
    "SCAN_PCT",
    "RUN_TIME",
    "WORK_LOOP",
    "SCALE",
    "SCAN_TABLE_SZ",
    "WORK_UNIT",
    "REDO_STRESS",
    "THREADS_PER_SCHEMA",
    "BLOCK_SZ",
    "DO_HOTSPOT",
    "HOTSPOT_MB",
    "HOTSPOT_OFFSET_MB",
    "HOTSPOT_FREQUENCY",
    "HOT_SCHEMA_FREQUENCY",
    "THINK_TM_FREQUENCY",
    "THINK_TM_MIN",
    "THINK_TM_MAX",
];

/// Variables SLOB 2.5 reads that concern connectivity, statistics, data
/// loading or its own housekeeping, not the run's I/O.
const NOT_IO_VARS: [&str; 13] = [
    "LOAD_PARALLEL_DEGREE",
    "DATABASE_STATISTICS_TYPE",
    "ADMIN_SQLNET_SERVICE",
    "SQLNET_SERVICE_BASE",
    "SQLNET_SERVICE_MAX",
    "DBA_PRIV_USER",
    "SYSDBA_PASSWD",
    "EXTERNAL_SCRIPT",
    "OBFUSCATE_COLUMNS",
    "SLOB_DEBUG",
    "NO_OS_PERF_DATA",
    "OS_TEMP",
    "SLOB_TEMPDIR",
];

/// SLOB 2.2's variables, which SLOB 2.5 no longer reads.
const SLOB22_VARS: [&str; 3] = ["DO_UPDATE_HOTSPOT", "HOTSPOT_PCT", "THINK_TM_MODULUS"];

/// SLOB's WORK_UNIT when the file has none (runit.sh's default).
pub const SLOB_WORK_UNIT: u32 = 256;
/// The largest multiblock read (db_file_multiblock_read_count x block size,
/// as Oracle caps it).
const MAX_MULTIBLOCK: u64 = 1 << 20;
/// SLOB's most sessions (runit.sh refuses more).
pub const MAX_SESSIONS: u32 = 4096;

/// A slob.conf that cannot be used: one line naming the file, the line and
/// the variable.
#[derive(Debug, thiserror::Error)]
pub enum SlobError {
    #[error("{path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: line {line}: {msg}")]
    Syntax {
        path: String,
        line: usize,
        msg: String,
    },
    #[error("{path}: line {line}: {var}={value:?}: {msg}")]
    Value {
        path: String,
        line: usize,
        var: String,
        value: String,
        msg: String,
    },
}

/// A size as SLOB gives it: blocks, or bytes with an M, G or T suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Blocks(u64),
    Bytes(u64),
}

impl Scale {
    pub fn bytes(self, block_size: u64) -> u64 {
        match self {
            Scale::Blocks(n) => n.saturating_mul(block_size),
            Scale::Bytes(b) => b,
        }
    }
}

/// A SLOB hot spot (DO_HOTSPOT=TRUE): every `frequency`-th statement goes to
/// `mb` MiB starting `offset_mb` MiB into the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlobHotspot {
    pub mb: u64,
    pub offset_mb: u64,
    pub frequency: u32,
}

/// What a SLOB setting becomes in dbio.
#[derive(Clone, Debug, PartialEq)]
pub enum Knob {
    /// `--update-pct`.
    UpdatePct(u32),
    /// `--scan-pct`.
    ScanPct(u32),
    /// `--redo-stress`.
    RedoStress(RedoStress),
    /// `--time`.
    Time(Duration),
    /// `--loops`: I/Os per user (WORK_LOOP x WORK_UNIT); None for a timed run.
    Loops(Option<u64>),
    /// Data per schema (SCALE): `--size` of SCALE x schemas.
    Scale(Scale),
    /// Sessions per schema (THREADS_PER_SCHEMA): `--users` of schemas x this.
    SessionsPerSchema(u32),
    /// Blocks per SLOB statement: only scales the counts above.
    WorkUnit(u32),
    /// `--hotspot-*`; None: no hot spot.
    Hotspot(Option<SlobHotspot>),
    /// `--think-*`, the frequency in I/Os; None: no think time.
    Think(Option<Think>),
    /// The size of a multiblock read (SCAN_TABLE_SZ, at most 1 MiB).
    Multiblock(Scale),
    /// `--block-size` (SLOB's BLOCK_SZ).
    BlockSize(u32),
    /// Set to what dbio does anyway (e.g. HOT_SCHEMA_FREQUENCY=0).
    Off(&'static str),
}

impl Knob {
    /// The `dbio run` options that, given on the command line, win over it.
    pub fn options(&self) -> &'static [&'static str] {
        match self {
            Knob::UpdatePct(_) => &["--update-pct"],
            Knob::ScanPct(_) => &["--scan-pct"],
            Knob::RedoStress(_) => &["--redo-stress"],
            Knob::Time(_) => &["--time"],
            Knob::Loops(_) => &["--loops"],
            Knob::Scale(_) => &["--size", "--scale"],
            Knob::Hotspot(_) => &["--hotspot-mb", "--hotspot-offset-mb", "--hotspot-frequency"],
            Knob::Think(_) => &["--think-frequency", "--think-min", "--think-max"],
            Knob::BlockSize(_) => &["--block-size"],
            Knob::SessionsPerSchema(_) | Knob::WorkUnit(_) | Knob::Multiblock(_) | Knob::Off(_) => {
                &[]
            }
        }
    }

    /// What this becomes, in dbio's words, for `schemas` schemas of blocks
    /// of `block_size` bytes.
    pub fn describe(&self, block_size: u64, schemas: u32) -> String {
        let ms = |d: Duration| format!("{}ms", d.as_millis());
        match self {
            Knob::UpdatePct(p) => format!("--update-pct {p}"),
            Knob::ScanPct(p) => format!("--scan-pct {p}"),
            Knob::RedoStress(r) => format!("--redo-stress {}", r.name()),
            Knob::Time(d) => format!("--time {}s", d.as_secs()),
            Knob::Loops(Some(n)) => format!("--loops {n} (I/Os per user)"),
            Knob::Loops(None) => "timed run (no --loops)".into(),
            Knob::Scale(s) => {
                let per = s.bytes(block_size);
                format!(
                    "--size {} ({} per schema x {schemas})",
                    format_size(per.saturating_mul(u64::from(schemas))),
                    format_size(per)
                )
            }
            Knob::SessionsPerSchema(t) => format!(
                "--users {} ({schemas} schema{} x {t})",
                u64::from(*t) * u64::from(schemas),
                if schemas == 1 { "" } else { "s" }
            ),
            Knob::WorkUnit(_) => "blocks per statement: scales WORK_LOOP and think times".into(),
            Knob::Hotspot(Some(h)) => format!(
                "--hotspot-mb {} --hotspot-offset-mb {} --hotspot-frequency {}",
                h.mb, h.offset_mb, h.frequency
            ),
            Knob::Hotspot(None) => "no hot spot".into(),
            Knob::Think(Some(t)) => format!(
                "--think-frequency {} --think-min {} --think-max {}",
                t.frequency,
                ms(t.min),
                ms(t.max)
            ),
            Knob::Think(None) => "no think time".into(),
            Knob::Multiblock(s) => format!(
                "multiblock reads of {}",
                format_size(multiblock_bytes(*s, block_size))
            ),
            Knob::BlockSize(b) => format!("--block-size {b}"),
            Knob::Off(what) => (*what).into(),
        }
    }
}

/// The size of one multiblock read for a SCAN_TABLE_SZ of `scan`: the table,
/// up to 1 MiB, in whole blocks.
pub fn multiblock_bytes(scan: Scale, block_size: u64) -> u64 {
    let bs = block_size.max(1);
    (scan.bytes(bs).min(MAX_MULTIBLOCK) / bs).max(1) * bs
}

/// The classes SLOB's mix needs: single-block reads, and DBWR and redo
/// writes with updates, multiblock reads with scans. (SLOB's scan table is
/// small, so Oracle reads it into the cache: db file scattered read.)
pub fn classes(update_pct: u32, scan_pct: u32) -> Vec<IoClass> {
    let mut c = vec![IoClass::SingleBlockRead];
    if scan_pct > 0 {
        c.push(IoClass::MultiblockRead);
    }
    if update_pct > 0 {
        c.extend([IoClass::DbwrWrite, IoClass::RedoWrite]);
    }
    c.sort();
    c
}

/// One SLOB setting and what it became.
#[derive(Clone, Debug, PartialEq)]
pub struct SlobSetting {
    /// As in the file, e.g. `UPDATE_PCT=20` or `WORK_LOOP=10 WORK_UNIT=64`.
    pub slob: String,
    /// Line of its (main) variable.
    pub line: usize,
    pub knob: Knob,
}

/// A variable dbio does not use although it may shape I/O, or does not know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    pub name: String,
    pub line: usize,
    pub why: &'static str,
}

/// A slob.conf, read and checked.
#[derive(Clone, Debug, PartialEq)]
pub struct SlobConf {
    pub path: PathBuf,
    /// The settings that shape I/O, in slob.conf's usual order.
    pub settings: Vec<SlobSetting>,
    /// Variables not about the run's I/O, in file order.
    pub not_io: Vec<String>,
    /// Variables dbio does not use or does not know, in file order.
    pub unsupported: Vec<Unsupported>,
}

impl SlobConf {
    /// Reads and checks the slob.conf at `path`.
    pub fn parse(path: &Path) -> Result<SlobConf, SlobError> {
        let text = std::fs::read(path).map_err(|source| SlobError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse_str(path, &String::from_utf8_lossy(&text))
    }

    /// [`SlobConf::parse`] of `text`, named `path` in messages.
    pub fn parse_str(path: &Path, text: &str) -> Result<SlobConf, SlobError> {
        let name = path.display().to_string();
        let list = assignments(text).map_err(|(line, e)| SlobError::Syntax {
            path: name.clone(),
            line,
            msg: e.to_string(),
        })?;
        let mut vars: HashMap<String, (Value, usize)> = HashMap::new();
        let mut order: Vec<String> = Vec::new();
        for a in list {
            if !vars.contains_key(&a.name) {
                order.push(a.name.clone());
            }
            vars.insert(a.name, (a.value, a.line));
        }
        let mut conf = SlobConf {
            path: path.to_path_buf(),
            settings: Vec::new(),
            not_io: Vec::new(),
            unsupported: Vec::new(),
        };
        for n in &order {
            let line = vars[n].1;
            let mut unsupported = |why| {
                conf.unsupported.push(Unsupported {
                    name: n.clone(),
                    line,
                    why,
                })
            };
            if NOT_IO_VARS.contains(&n.as_str()) {
                conf.not_io.push(n.clone());
            } else if SLOB22_VARS.contains(&n.as_str()) {
                unsupported("a SLOB 2.2 variable that SLOB 2.5 does not read");
            } else if !IO_VARS.contains(&n.as_str()) {
                unsupported("not a SLOB 2.5 variable");
            }
        }
        let r = Reader { path: name, vars };
        conf.settings = r.settings(&mut conf.unsupported)?;
        conf.unsupported.sort_by_key(|u| u.line);
        Ok(conf)
    }

    /// The notice naming the variables that are not about I/O; None if none.
    pub fn not_io_notice(&self) -> Option<String> {
        (!self.not_io.is_empty()).then(|| {
            format!(
                "{}: not about I/O, ignored: {}",
                self.path.display(),
                self.not_io.join(", ")
            )
        })
    }

    /// The warning naming the variables dbio does not use; None if none.
    pub fn unsupported_warning(&self) -> Option<String> {
        (!self.unsupported.is_empty()).then(|| {
            let named: Vec<String> = self
                .unsupported
                .iter()
                .map(|u| format!("{} (line {}: {})", u.name, u.line, u.why))
                .collect();
            format!(
                "{}: not used by dbio: {}",
                self.path.display(),
                named.join(", ")
            )
        })
    }
}

/// Reads the variables' values.
struct Reader {
    path: String,
    vars: HashMap<String, (Value, usize)>,
}

impl Reader {
    /// The value of `var` and its line; None when the file leaves it out or
    /// empty (runit.sh's `${VAR:=default}` treats both alike).
    fn get(&self, var: &str) -> Result<Option<(String, usize)>, SlobError> {
        match self.vars.get(var) {
            None => Ok(None),
            Some((Value::Text(t), line)) => {
                let t = t.trim();
                Ok((!t.is_empty()).then(|| (t.to_string(), *line)))
            }
            Some((Value::Unknown(what), line)) => Err(SlobError::Value {
                path: self.path.clone(),
                line: *line,
                var: var.into(),
                value: format!("({what})"),
                msg: format!("dbio does not run the shell: a {what} has no value here"),
            }),
        }
    }

    fn bad(&self, var: &str, (value, line): &(String, usize), msg: impl Into<String>) -> SlobError {
        SlobError::Value {
            path: self.path.clone(),
            line: *line,
            var: var.into(),
            value: value.clone(),
            msg: msg.into(),
        }
    }

    /// A whole number from `lo` to `hi`, as SLOB's f_is_int accepts it.
    fn int(&self, var: &str, lo: u64, hi: u64) -> Result<Option<(u64, usize)>, SlobError> {
        let Some(v) = self.get(var)? else {
            return Ok(None);
        };
        let n = v
            .0
            .parse::<u64>()
            .ok()
            .filter(|_| v.0.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| self.bad(var, &v, format!("not a whole number from {lo} to {hi}")))?;
        if !(lo..=hi).contains(&n) {
            return Err(self.bad(var, &v, format!("out of range: from {lo} to {hi}")));
        }
        Ok(Some((n, v.1)))
    }

    /// TRUE or FALSE.
    fn flag(&self, var: &str) -> Result<Option<(bool, usize)>, SlobError> {
        let Some(v) = self.get(var)? else {
            return Ok(None);
        };
        match v.0.to_ascii_uppercase().as_str() {
            "TRUE" => Ok(Some((true, v.1))),
            "FALSE" => Ok(Some((false, v.1))),
            _ => Err(self.bad(var, &v, "TRUE or FALSE")),
        }
    }

    /// A size as SLOB's f_fix_scale reads it: blocks, or a number with M,
    /// G or T (MiB, GiB, TiB).
    fn scale(&self, var: &str) -> Result<Option<(Scale, usize)>, SlobError> {
        let Some(v) = self.get(var)? else {
            return Ok(None);
        };
        let s: String = v.0.chars().filter(|c| *c != ' ').collect();
        let (digits, shift) = match s.char_indices().last() {
            Some((i, 'M')) => (&s[..i], Some(20)),
            Some((i, 'G')) => (&s[..i], Some(30)),
            Some((i, 'T')) => (&s[..i], Some(40)),
            _ => (s.as_str(), None),
        };
        let n = digits
            .parse::<u64>()
            .ok()
            .filter(|n| *n > 0 && digits.bytes().all(|b| b.is_ascii_digit()));
        let scale = match (n, shift) {
            (Some(n), None) => Some(Scale::Blocks(n)),
            (Some(n), Some(sh)) => n.checked_mul(1 << sh).map(Scale::Bytes),
            (None, _) => None,
        };
        scale.map(|s| Some((s, v.1))).ok_or_else(|| {
            self.bad(
                var,
                &v,
                "a number of blocks, or of MiB, GiB, TiB with M, G, T (e.g. 10000, 80M)",
            )
        })
    }

    /// Seconds, with decimals (`.1`), up to a day.
    fn seconds(&self, var: &str) -> Result<Option<(Duration, usize)>, SlobError> {
        let Some(v) = self.get(var)? else {
            return Ok(None);
        };
        let ok = v.0.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && v.0.bytes().any(|b| b.is_ascii_digit());
        match v.0.parse::<f64>() {
            Ok(s) if ok && s <= 86_400.0 => Ok(Some((Duration::from_secs_f64(s), v.1))),
            _ => Err(self.bad(var, &v, "seconds from 0 to 86400, e.g. .1")),
        }
    }

    /// `VAR=value` as in the file, for the table.
    fn shown(&self, vars: &[&str]) -> String {
        let parts: Vec<String> = vars
            .iter()
            .filter_map(|v| match self.vars.get(*v) {
                Some((Value::Text(t), _)) => Some(format!("{v}={}", t.trim())),
                _ => None,
            })
            .collect();
        parts.join(" ")
    }

    fn settings(&self, unsupported: &mut Vec<Unsupported>) -> Result<Vec<SlobSetting>, SlobError> {
        let mut out = Vec::new();
        let mut add = |vars: &[&str], line: usize, knob: Knob| {
            out.push(SlobSetting {
                slob: self.shown(vars),
                line,
                knob,
            })
        };
        if let Some((p, line)) = self.int("UPDATE_PCT", 0, 100)? {
            add(&["UPDATE_PCT"], line, Knob::UpdatePct(p as u32));
        }
        if let Some((p, line)) = self.int("SCAN_PCT", 0, 100)? {
            add(&["SCAN_PCT"], line, Knob::ScanPct(p as u32));
        }
        if let Some((s, line)) = self.int("RUN_TIME", 1, 366 * 86_400)? {
            add(&["RUN_TIME"], line, Knob::Time(Duration::from_secs(s)));
        }
        let unit = self.int("WORK_UNIT", 3, 1024)?;
        let work_unit = unit.map_or(u64::from(SLOB_WORK_UNIT), |u| u.0);
        if let Some((n, line)) = self.int("WORK_LOOP", 0, u64::MAX / 1024)? {
            let loops = (n > 0).then(|| n * work_unit);
            add(&["WORK_LOOP", "WORK_UNIT"], line, Knob::Loops(loops));
        }
        if let Some((s, line)) = self.scale("SCALE")? {
            add(&["SCALE"], line, Knob::Scale(s));
        }
        if let Some((s, line)) = self.scale("SCAN_TABLE_SZ")? {
            add(&["SCAN_TABLE_SZ"], line, Knob::Multiblock(s));
        }
        if let Some((u, line)) = unit {
            add(&["WORK_UNIT"], line, Knob::WorkUnit(u as u32));
        }
        if let Some(v) = self.get("REDO_STRESS")? {
            let r = RedoStress::parse(&v.0)
                .ok_or_else(|| self.bad("REDO_STRESS", &v, "LITE or HEAVY"))?;
            add(&["REDO_STRESS"], v.1, Knob::RedoStress(r));
        }
        if let Some((t, line)) = self.int("THREADS_PER_SCHEMA", 1, u64::from(MAX_SESSIONS))? {
            add(
                &["THREADS_PER_SCHEMA"],
                line,
                Knob::SessionsPerSchema(t as u32),
            );
        }
        if let Some(v) = self.get("BLOCK_SZ")? {
            let b =
                v.0.parse::<u32>()
                    .ok()
                    .filter(|b| b.is_power_of_two() && (2048..=32768).contains(b))
                    .ok_or_else(|| self.bad("BLOCK_SZ", &v, "a power of two from 2048 to 32768"))?;
            add(&["BLOCK_SZ"], v.1, Knob::BlockSize(b));
        }
        if let Some((knob, line)) = self.hotspot()? {
            let vars = [
                "DO_HOTSPOT",
                "HOTSPOT_MB",
                "HOTSPOT_OFFSET_MB",
                "HOTSPOT_FREQUENCY",
            ];
            add(&vars, line, knob);
        }
        if let Some((f, line)) = self.int("HOT_SCHEMA_FREQUENCY", 0, u64::from(u32::MAX))? {
            if f == 0 {
                add(
                    &["HOT_SCHEMA_FREQUENCY"],
                    line,
                    Knob::Off("off, as in dbio"),
                );
            } else {
                unsupported.push(Unsupported {
                    name: "HOT_SCHEMA_FREQUENCY".into(),
                    line,
                    why: "sessions visiting schema user1; dbio's users share one data set",
                });
            }
        }
        if let Some((knob, line)) = self.think(work_unit)? {
            let vars = ["THINK_TM_FREQUENCY", "THINK_TM_MIN", "THINK_TM_MAX"];
            add(&vars, line, knob);
        }
        Ok(out)
    }

    /// DO_HOTSPOT and HOTSPOT_*, with runit.sh's defaults for those left out.
    fn hotspot(&self) -> Result<Option<(Knob, usize)>, SlobError> {
        let on = self.flag("DO_HOTSPOT")?;
        let mb = self.int("HOTSPOT_MB", 0, 1 << 30)?;
        let offset = self.int("HOTSPOT_OFFSET_MB", 0, 1 << 30)?;
        let freq = self.int("HOTSPOT_FREQUENCY", 0, u64::from(u32::MAX))?;
        let line = [on.map(|x| x.1), mb.map(|x| x.1), offset.map(|x| x.1)]
            .into_iter()
            .chain([freq.map(|x| x.1)])
            .flatten()
            .min();
        let Some(line) = line else {
            return Ok(None);
        };
        if !on.is_some_and(|o| o.0) {
            return Ok(Some((Knob::Hotspot(None), line)));
        }
        let h = SlobHotspot {
            mb: mb.map_or(10, |m| m.0),
            offset_mb: offset.map_or(0, |o| o.0),
            frequency: freq.map_or(0, |f| f.0 as u32),
        };
        if h.mb == 0 {
            let v = self.get("HOTSPOT_MB")?.unwrap_or_default();
            return Err(self.bad(
                "HOTSPOT_MB",
                &v,
                "0 with DO_HOTSPOT=TRUE: a hot spot needs 1 MiB or more",
            ));
        }
        if h.frequency == 0 {
            let v = self.get("HOTSPOT_FREQUENCY")?.unwrap_or(("".into(), line));
            return Err(self.bad(
                "HOTSPOT_FREQUENCY",
                &v,
                "0 (or unset) with DO_HOTSPOT=TRUE sends only a session's first statement \
                 to the hot spot; give 1 or more",
            ));
        }
        Ok(Some((Knob::Hotspot(Some(h)), line)))
    }

    /// THINK_TM_*, with runit.sh's defaults (.1 s, .5 s) for those left out;
    /// the frequency counted in I/Os (statements x `work_unit`).
    fn think(&self, work_unit: u64) -> Result<Option<(Knob, usize)>, SlobError> {
        let freq = self.int("THINK_TM_FREQUENCY", 0, u64::from(u32::MAX))?;
        let min = self.seconds("THINK_TM_MIN")?;
        let max = self.seconds("THINK_TM_MAX")?;
        let line = [freq.map(|x| x.1), min.map(|x| x.1), max.map(|x| x.1)]
            .into_iter()
            .flatten()
            .min();
        let Some(line) = line else {
            return Ok(None);
        };
        let Some((f, fline)) = freq.filter(|f| f.0 > 0) else {
            return Ok(Some((Knob::Think(None), line)));
        };
        let min_d = min.map_or(Duration::from_millis(100), |m| m.0);
        let max_d = max.map_or(Duration::from_millis(500), |m| m.0);
        if min_d > max_d {
            // Blame the one the file gives (the other is runit.sh's default).
            let (var, msg) = match min {
                Some(_) => ("THINK_TM_MIN", format!("above THINK_TM_MAX ({max_d:?})")),
                None => ("THINK_TM_MAX", format!("below THINK_TM_MIN ({min_d:?})")),
            };
            let v = self.get(var)?.unwrap_or_default();
            return Err(self.bad(var, &v, msg));
        }
        let frequency = u32::try_from(f * work_unit).map_err(|_| {
            let v = self
                .get("THINK_TM_FREQUENCY")
                .ok()
                .flatten()
                .unwrap_or_default();
            self.bad(
                "THINK_TM_FREQUENCY",
                &v,
                format!("x WORK_UNIT {work_unit} I/Os is above {}", u32::MAX),
            )
        })?;
        let think = Think {
            min: min_d,
            max: max_d,
            frequency,
        };
        Ok(Some((Knob::Think(Some(think)), fline)))
    }
}

#[cfg(test)]
mod tests;
