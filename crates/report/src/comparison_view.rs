//! How a comparison reads: one convention for every metric ("14.7x better", "worse by
//! 12%", oriented by whether more of the metric is better), one colour per verdict, and
//! tables fitted to the width of the terminal.

use dbio_compare::comparison::Pair;
use dbio_compare::{Comparison, Direction, Effect, Verdict};

use crate::fmt::{Align, Table};

/// Verdict colours, the same in tables and charts.
pub const BETTER: &str = "#2e7d32";
pub const WORSE: &str = "#c62828";
pub const NOISE: &str = "#8a939b";
/// A difference no test could judge (a single run on a side).
pub const UNTESTED: &str = "#c9ced3";

pub fn color(v: Verdict) -> &'static str {
    match v {
        Verdict::Better => BETTER,
        Verdict::Worse => WORSE,
        Verdict::WithinNoise => NOISE,
        Verdict::TooFewRepeats => UNTESTED,
    }
}

/// The CSS class of a verdict's table cell.
pub fn css(v: Verdict) -> &'static str {
    match v {
        Verdict::Better => "better",
        Verdict::Worse => "worse",
        Verdict::WithinNoise => "noise",
        Verdict::TooFewRepeats => "untested",
    }
}

/// ANSI colour of a verdict in a terminal.
fn ansi(v: Verdict) -> &'static str {
    match v {
        Verdict::Better => "\x1b[32m",
        Verdict::Worse => "\x1b[31m",
        Verdict::WithinNoise | Verdict::TooFewRepeats => "\x1b[90m",
    }
}

/// How much better the other configuration is: "14.7x better" from twice on, else
/// "better by 12%" (the metric's own change against the baseline); worse alike.
pub fn size_text(factor: f64, change_pct: f64) -> String {
    if factor.is_nan() {
        return "-".into();
    }
    if factor >= 2.0 {
        return if factor.is_finite() {
            format!("{factor:.1}x better")
        } else {
            "better without bound".into()
        };
    }
    if factor <= 0.5 {
        return if factor > 0.0 {
            format!("{:.1}x worse", 1.0 / factor)
        } else {
            "worse without bound".into()
        };
    }
    let pct = change_pct.abs();
    if pct < 0.05 {
        return "the same".into();
    }
    let pct = if pct < 10.0 {
        format!("{pct:.1}")
    } else {
        format!("{pct:.0}")
    };
    let word = if factor > 1.0 { "better" } else { "worse" };
    format!("{word} by {pct}%")
}

/// An effect in words.
pub fn effect_text(e: &Effect) -> String {
    size_text(e.factor, e.change_pct)
}

/// The ends of the effect's 95% interval as (factor, change %), worse end first; an end
/// beyond what a factor can say (the interval reaches zero) is 0 or infinity.
fn interval_ends(p: &Pair) -> Option<[(f64, f64); 2]> {
    let e = p.effect.as_ref()?;
    let [lo, hi] = e.change_ci95?;
    let end = |pct: f64| {
        let r = 1.0 + pct / 100.0;
        let f = match (p.direction, r > 0.0) {
            (Direction::HigherIsBetter, _) => r.max(0.0),
            (Direction::LowerIsBetter, true) => 1.0 / r,
            (Direction::LowerIsBetter, false) => f64::INFINITY,
        };
        (f, pct)
    };
    let (a, b) = (end(lo), end(hi));
    Some(if a.0 <= b.0 { [a, b] } else { [b, a] })
}

/// The factors (better above 1) at the ends of the effect's 95% interval, worse end first.
pub fn factor_interval(p: &Pair) -> Option<(f64, f64)> {
    interval_ends(p).map(|[a, b]| (a.0, b.0))
}

/// The 95% interval in words: "13.2x to 16.1x better", "worse by 3% to better by 10%".
pub fn interval_text(p: &Pair) -> String {
    let Some([a, b]) = interval_ends(p) else {
        return "-".into();
    };
    let (a, b) = (size_text(a.0, a.1), size_text(b.0, b.1));
    if let (Some(x), true) = (a.strip_suffix(" better"), b.ends_with("x better")) {
        if x.ends_with('x') {
            return format!("{x} to {b}");
        }
    }
    if let (true, Some(y)) = (a.ends_with("x worse"), b.strip_suffix(" worse")) {
        if y.ends_with('x') {
            return format!("{y} to {a}");
        }
    }
    format!("{a} to {b}")
}

pub fn p_text(p: Option<f64>) -> String {
    match p {
        Some(p) if p < 0.001 => "<0.001".into(),
        Some(p) => format!("{p:.3}"),
        None => "-".into(),
    }
}

/// The test by name, marked where it rests on an assumption stated in the notes.
pub fn test_text(p: &Pair) -> String {
    let name = match (p.test.as_str(), p.log_scale) {
        ("welch", _) => "Welch",
        ("mann-whitney", _) => "Mann-Whitney",
        ("wilcoxon-signed-rank", _) => "Wilcoxon signed-rank, paired",
        ("paired-t", true) => "paired t on logs",
        ("paired-t", false) => "paired t",
        _ => "none",
    };
    match &p.test_note {
        Some(n) if n.starts_with("assumes") => format!("{name}*"),
        _ => name.to_string(),
    }
}

/// A pair in a few words: "14.7x better (p <0.001, Welch*)", "within noise (worse by
/// 2.1%, p 0.41, Welch)", "2.0x better, untested: one run".
pub fn pair_text(p: &Pair) -> String {
    let size = p.effect.as_ref().map_or("-".into(), effect_text);
    let p_value = p_text(p.p_value);
    match p.verdict {
        Verdict::Better | Verdict::Worse => format!("{size} (p {p_value}, {})", test_text(p)),
        Verdict::WithinNoise => {
            format!("within noise ({size}, p {p_value}, {})", test_text(p))
        }
        Verdict::TooFewRepeats => format!("{size}, untested: one run"),
    }
}

/// A pair's verdict cell in a table: the size for a decided difference, else what it is.
pub fn short_text(p: &Pair) -> String {
    let size = p.effect.as_ref().map_or("-".into(), effect_text);
    match p.verdict {
        Verdict::Better | Verdict::Worse => size,
        Verdict::WithinNoise => "within noise".into(),
        Verdict::TooFewRepeats => format!("{size}?"),
    }
}

/// The metrics of the headline: throughput, then the mean latency of every I/O class
/// (the charted class first), then CPU per I/O.
pub fn headline_metrics(c: &Comparison) -> Vec<&str> {
    let mut out: Vec<&str> = ["iops", "mbps", "max_iops", "max_mbps", "latency_us"]
        .into_iter()
        .filter(|m| c.metrics.iter().any(|x| x == m))
        .collect();
    let chart = c.class.as_ref().map(|k| format!("{k} mean_us"));
    if let Some(m) = c.metrics.iter().find(|m| Some(*m) == chart.as_ref()) {
        out.push(m);
    }
    for m in &c.metrics {
        if m.ends_with(" mean_us") && Some(m) != chart.as_ref() {
            out.push(m);
        }
    }
    if c.metrics.iter().any(|m| m == "cpu_us_per_io") {
        out.push("cpu_us_per_io");
    }
    out
}

/// A metric as the headline names it: "IOPS", "single-block-read latency".
pub fn metric_name(metric: &str) -> String {
    match metric {
        "iops" => "IOPS".into(),
        "mbps" => "MB/s".into(),
        "cpu_us_per_io" => "CPU per I/O".into(),
        "max_iops" => "max IOPS".into(),
        "max_mbps" => "max MB/s".into(),
        "latency_us" => "latency".into(),
        "latency_p99_us" => "p99 latency".into(),
        m => match m.rsplit_once(' ') {
            Some((class, "mean_us")) => format!("{class} latency"),
            Some((class, "iops")) => format!("{class} IOPS"),
            Some((class, "mbps")) => format!("{class} MB/s"),
            Some((class, f)) => format!("{class} {}", f.trim_end_matches("_us")),
            None => m.to_string(),
        },
    }
}

/// Text output settings: the width to fit and whether to colour verdicts.
#[derive(Debug, Clone, Copy)]
pub struct TextStyle {
    pub width: usize,
    pub color: bool,
}

impl Default for TextStyle {
    fn default() -> Self {
        TextStyle {
            width: 100,
            color: false,
        }
    }
}

/// A table as text no wider than `style.width`: where the columns do not fit, they are
/// split into several tables, each repeating the first `keep` columns. `verdict_of`
/// gives a cell's verdict for colour.
pub fn fitted_text(
    t: &Table,
    keep: usize,
    style: TextStyle,
    verdict_of: &dyn Fn(usize, usize) -> Option<Verdict>,
) -> String {
    let indent = 2;
    let mut w: Vec<usize> = t.headers.iter().map(|h| h.chars().count()).collect();
    for r in &t.rows {
        for (i, c) in r.iter().enumerate() {
            if let Some(x) = w.get_mut(i) {
                *x = (*x).max(c.chars().count());
            }
        }
    }
    // Fewer repeated columns where the widest other column would not fit beside them.
    let mut keep = keep.min(w.len());
    let widest = |keep: usize| w[keep..].iter().map(|x| x + 2).max().unwrap_or(0);
    while keep > 1
        && w[..keep].iter().map(|x| x + 2).sum::<usize>() + indent + widest(keep) > style.width
    {
        keep -= 1;
    }
    let fixed: usize = w[..keep].iter().map(|x| x + 2).sum::<usize>() + indent;
    // Column groups after the kept ones, each as wide as fits (at least one column).
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut used = fixed;
    for (i, width) in w.iter().enumerate().skip(keep) {
        match groups.last_mut() {
            Some(g) if used + width + 2 <= style.width => g.push(i),
            _ => {
                groups.push(vec![i]);
                used = fixed;
            }
        }
        used += width + 2;
    }
    if groups.is_empty() {
        groups.push(Vec::new());
    }
    let mut out = String::new();
    for (n, g) in groups.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let cols: Vec<usize> = (0..keep).chain(g.iter().copied()).collect();
        let line = |cells: &dyn Fn(usize) -> String, row: Option<usize>| {
            let mut s = " ".repeat(indent);
            for (k, &i) in cols.iter().enumerate() {
                let c = cells(i);
                let pad = " ".repeat(w[i].saturating_sub(c.chars().count()));
                let painted = match row.and_then(|r| verdict_of(r, i)) {
                    Some(v) if style.color => format!("{}{c}\x1b[0m", ansi(v)),
                    _ => c,
                };
                if k > 0 {
                    s.push_str("  ");
                }
                match t.align.get(i) {
                    Some(Align::Right) => {
                        s.push_str(&pad);
                        s.push_str(&painted);
                    }
                    _ => {
                        s.push_str(&painted);
                        s.push_str(&pad);
                    }
                }
            }
            s.truncate(s.trim_end().len());
            s.push('\n');
            s
        };
        out.push_str(&line(&|i| t.headers[i].clone(), None));
        out.push_str(&line(&|i| "-".repeat(w[i]), None));
        for (r, row) in t.rows.iter().enumerate() {
            out.push_str(&line(&|i| row.get(i).cloned().unwrap_or_default(), Some(r)));
        }
    }
    out
}

/// Text wrapped at word boundaries to `width`, continuation lines indented by `hang`.
pub fn wrap(text: &str, width: usize, hang: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(line.trim_end());
            out.push('\n');
            line = " ".repeat(hang);
        } else if !line.is_empty() && !line.ends_with(' ') {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}
