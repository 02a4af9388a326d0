//! The tables of a report, whichever layout printed them: a text report's fixed-width
//! tables (`text.rs`) and an HTML report's `<table>`s (`html.rs`) both become [`Table`]s,
//! so that each section is read once, by its column titles.

/// The most columns a table of a report has (IOStat, histograms: a dozen); a "ruler"
/// of more is not a table, and would make placing the titles slow.
pub(crate) const MAX_COLUMNS: usize = 64;
/// The most rows kept of one table (Instance Activity Stats, the longest, has about a
/// thousand), so that no input makes the reader slow.
pub(crate) const MAX_ROWS: usize = 50_000;

/// One table of a report.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Table {
    /// The section title above it ("Foreground Wait Events", "Load Profile"), without
    /// the "DB/Inst: ..." tail of a text report's title line.
    pub title: String,
    /// An HTML table's `summary` attribute (empty in text reports).
    pub summary: String,
    /// Line (from 1) where the table starts.
    pub line: usize,
    /// Column titles, the words of every title line above the table joined.
    pub headers: Vec<String>,
    pub rows: Vec<Row>,
}

/// One row of a table.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Row {
    /// Line (from 1) in the report.
    pub line: usize,
    pub cells: Vec<String>,
    /// The line as printed (text reports only), for rows that do not keep to the
    /// columns (a file name in the File IO Stats).
    pub raw: String,
}

impl Row {
    /// The text of column `i`, empty where the row has none.
    pub fn cell(&self, i: usize) -> &str {
        self.cells.get(i).map_or("", |c| c.trim())
    }
}

impl Table {
    /// The first column whose title, with spaces squeezed out and in lower case,
    /// satisfies `pred`.
    pub fn column(&self, pred: impl Fn(&str) -> bool) -> Option<usize> {
        self.headers
            .iter()
            .position(|h| pred(&squeeze(h).to_lowercase()))
    }
}

/// A title with every whitespace run removed ("Total Wait Time (s)" -> "TotalWaitTime(s)").
pub(crate) fn squeeze(s: &str) -> String {
    s.split_whitespace().collect()
}

/// A figure as a report prints it, with the step of its last printed digit:
/// "2,940,000" (1), "40.7" (0.1), ".0" (0.1), "12.5K" (100). `None` for anything else.
/// The step tells how precise a figure is: the true value is within half a step.
pub(crate) fn figure(s: &str) -> Option<(f64, f64)> {
    let s = s.trim().replace(',', "");
    let (num, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1e3),
        'M' => (&s[..s.len() - 1], 1e6),
        'G' => (&s[..s.len() - 1], 1e9),
        'T' => (&s[..s.len() - 1], 1e12),
        _ => (s.as_str(), 1.0),
    };
    if num.is_empty()
        || !num
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-')
    {
        return None;
    }
    let v = num.parse::<f64>().ok().filter(|v| v.is_finite())?;
    let decimals = num.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    Some((v * mult, 10f64.powi(-decimals) * mult))
}

/// A number as the report prints it; a note a reader appended after it ("82.1 @jls")
/// is left out.
pub(crate) fn number(s: &str) -> Option<f64> {
    figure(s)
        .or_else(|| figure(s.split_whitespace().next()?))
        .map(|(v, _)| v)
}

/// A duration in microseconds with its step: "391.26us", "8.33ms", "52.86 s", ".00ns",
/// or a bare number taken in `default_unit_us` (the unit of the column's title).
pub(crate) fn duration_us(s: &str, default_unit_us: f64) -> Option<(f64, f64)> {
    let s = s.trim();
    for (suffix, us) in [("ns", 1e-3), ("us", 1.0), ("ms", 1e3), ("s", 1e6)] {
        if let Some(n) = s.strip_suffix(suffix) {
            return figure(n).map(|(v, step)| (v * us, step * us));
        }
    }
    let (v, step) = figure(s).or_else(|| figure(s.split_whitespace().next()?))?;
    Some((v * default_unit_us, step * default_unit_us))
}

/// A data size in MiB as the IOStat tables print it: "370M", "1.9T", "0M"; a bare
/// number is MiB already (their "Data per sec" columns).
pub(crate) fn mebibytes(s: &str) -> Option<f64> {
    let s = s.trim();
    let unit = |suffix: char, mib: f64| s.strip_suffix(suffix).map(|n| (n, mib));
    let (n, mib) = unit('K', 1.0 / 1024.0)
        .or_else(|| unit('M', 1.0))
        .or_else(|| unit('G', 1024.0))
        .or_else(|| unit('T', 1024.0 * 1024.0))
        .or_else(|| unit('P', 1024.0 * 1024.0 * 1024.0))
        .unwrap_or((s, 1.0));
    figure(n).map(|(v, _)| v * mib)
}

/// The known wait classes; 19c's text report cuts them to 8 characters ("System I").
const WAIT_CLASSES: [&str; 13] = [
    "User I/O",
    "System I/O",
    "Commit",
    "Concurrency",
    "Application",
    "Configuration",
    "Administrative",
    "Cluster",
    "Network",
    "Other",
    "Scheduler",
    "Queueing",
    "Idle",
];

/// A wait class as printed, made whole where the report cut it.
pub(crate) fn wait_class(printed: &str) -> String {
    let p = printed.trim();
    if p.len() >= 3 {
        if let Some(c) = WAIT_CLASSES.iter().find(|c| c.starts_with(p)) {
            return c.to_string();
        }
    }
    p.to_string()
}

/// The I/O wait events and their classes, for the tables without a Wait Class column
/// (the Foreground and Background Wait Events tables) and for making whole the names a
/// text report's Wait Events tables cut to 26 characters.
const IO_EVENTS: [(&str, &str); 24] = [
    ("db file sequential read", "User I/O"),
    ("db file scattered read", "User I/O"),
    ("db file parallel read", "User I/O"),
    ("db file single write", "User I/O"),
    ("direct path read", "User I/O"),
    ("direct path read temp", "User I/O"),
    ("direct path write", "User I/O"),
    ("direct path write temp", "User I/O"),
    ("direct path sync", "User I/O"),
    ("read by other session", "User I/O"),
    ("Disk file operations I/O", "User I/O"),
    ("cell single block physical read", "User I/O"),
    ("cell multiblock physical read", "User I/O"),
    ("local write wait", "User I/O"),
    ("log file parallel write", "System I/O"),
    ("log file sequential read", "System I/O"),
    ("log file single write", "System I/O"),
    ("control file sequential read", "System I/O"),
    ("control file parallel write", "System I/O"),
    ("control file single write", "System I/O"),
    ("db file parallel write", "System I/O"),
    ("db file async I/O submit", "System I/O"),
    ("Log archive I/O", "System I/O"),
    ("log file sync", "Commit"),
];

/// A known I/O event by its printed name, which may be cut (26 characters and more):
/// its whole name and its class.
pub(crate) fn io_event(printed: &str) -> Option<(&'static str, &'static str)> {
    IO_EVENTS
        .iter()
        .find(|(k, _)| *k == printed || (printed.len() >= 20 && k.starts_with(printed)))
        .copied()
}
