//! The replay's one answer: will this storage serve production's load at production's
//! latency? Rate and latency in one line: "No: at 1.0x production's load, db file
//! sequential read is 5.0x slower than production (254 µs against 47 µs)". An event
//! with too few I/Os to give a mean is named as such and decides nothing.

use dbio_stats::slo::{Slo, SloOutcome};

use super::report::{Answer, EventComparison, ReplayStep};
use dbio_sources::model::{ModelClass, WorkloadModel};

/// I/Os an event must count in production's window and in the replay's step before
/// its mean is judged: below that, one slow I/O moves the mean by more than the
/// differences a storage is chosen on (30 I/Os put a mean within about a fifth).
pub const MIN_IOS_JUDGED: u64 = 30;

/// A latency for a sentence: "585 µs", "1.2 ms", "2.3 s".
pub fn latency_words(us: f64) -> String {
    if !us.is_finite() {
        "-".into()
    } else if us < 10.0 {
        format!("{us:.1} µs")
    } else if us < 1000.0 {
        format!("{us:.0} µs")
    } else if us < 1e6 {
        format!("{:.1} ms", us / 1e3)
    } else {
        format!("{:.1} s", us / 1e6)
    }
}

/// What one I/O of class `m` is called: a WAL flush is a flush, not a write.
fn noun(m: &ModelClass, n: u64) -> &'static str {
    let one = n == 1;
    match m.class.as_str() {
        c if c.ends_with("-read") => {
            if one {
                "read"
            } else {
                "reads"
            }
        }
        "redo-write" if m.flush.as_deref() == Some("fdatasync") => {
            if one {
                "flush"
            } else {
                "flushes"
            }
        }
        _ => {
            if one {
                "write"
            } else {
                "writes"
            }
        }
    }
}

/// A window's length: "30 s", "60 min", "2.0 h".
fn window(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// Production's count of class `m`'s I/Os in its window, where the model has it.
fn production_count(m: &ModelClass) -> Option<u64> {
    m.production_ios
        .filter(|n| n.is_finite() && *n >= 0.0)
        .map(|n| n.round() as u64)
}

/// Whether class `m` counted enough I/Os, `ios` of them in a step of the replay, to be
/// judged; a class without production's count is judged on the replay's alone.
pub(super) fn enough(m: &ModelClass, ios: u64) -> bool {
    ios >= MIN_IOS_JUDGED && production_count(m).map_or(true, |n| n >= MIN_IOS_JUDGED)
}

/// Why class `m` is too rare to judge, with `ios` I/Os in `elapsed_s` of the replay:
/// "1 flush in 30 s" (production's window first: a longer replay cannot fix it), or
/// "12 reads in the replay's 10 s"; none when it is not.
pub(super) fn too_few(m: &ModelClass, ios: u64, elapsed_s: f64) -> Option<String> {
    if let Some(n) = production_count(m).filter(|n| *n < MIN_IOS_JUDGED) {
        let span = m
            .production_ios
            .filter(|_| m.rate > 0.0)
            .map(|p| p / m.rate);
        return Some(match span {
            Some(s) => format!("{n} {} in {}", noun(m, n), window(s)),
            None => format!("{n} {} in production's window", noun(m, n)),
        });
    }
    (ios < MIN_IOS_JUDGED).then(|| {
        format!(
            "{ios} {} in the replay's {} (a longer --time gives more)",
            noun(m, ios),
            window(elapsed_s)
        )
    })
}

/// One missed objective in words, and how many times over it is (to put the worst
/// first): production's own mean "DataFileRead is 5.0x slower than production (254 µs
/// against 47 µs)", an objective of `--slo` "single-block-read p99 1.2 ms, over its
/// objective of 1.0 ms".
fn miss(model: &WorkloadModel, o: &SloOutcome, set: &[Slo]) -> (f64, String) {
    let Some(m) = o.measured_us else {
        return (f64::INFINITY, format!("{}: no I/O completed", o.slo.class));
    };
    let over = m / o.slo.limit_us;
    let own = set.iter().any(|s| s.class == o.slo.class);
    let text = match model.class(&o.slo.class).filter(|_| !own) {
        Some(c) => format!(
            "{} is {} slower than production ({} against {})",
            c.event,
            if over >= 2.0 {
                format!("{over:.1}x")
            } else if over >= 1.1 {
                format!("{:.0}%", (over - 1.0) * 100.0)
            } else {
                format!("{:.1}%", (over - 1.0) * 100.0)
            },
            latency_words(m),
            latency_words(o.slo.limit_us)
        ),
        None => format!(
            "{} {} {}, over its objective of {}",
            o.slo.class,
            o.slo.stat.name(),
            latency_words(m),
            latency_words(o.slo.limit_us)
        ),
    };
    (over, text)
}

/// The objectives a step missed, in words, the worst first.
pub(super) fn misses(model: &WorkloadModel, outcomes: &[SloOutcome], set: &[Slo]) -> Vec<String> {
    let mut out: Vec<(f64, String)> = outcomes
        .iter()
        .filter(|o| !o.pass)
        .map(|o| miss(model, o, set))
        .collect();
    out.sort_by(|a, b| b.0.total_cmp(&a.0));
    out.into_iter().map(|(_, t)| t).collect()
}

/// Reasons in one clause: the first three, and how many more there are.
fn some(reasons: &[String]) -> String {
    match reasons.len() {
        0..=3 => reasons.join("; "),
        n => format!("{}; and {} more", reasons[..3].join("; "), n - 3),
    }
}

/// A step's reasons for not serving: its missed objectives, then its rates.
fn reasons(s: &ReplayStep) -> Vec<String> {
    let mut r = s.missed.clone();
    r.extend(
        s.why
            .as_deref()
            .into_iter()
            .flat_map(|w| w.split("; "))
            .map(str::to_string),
    );
    r
}

/// A step served when it kept its rates and met its objectives.
fn served(s: &ReplayStep) -> bool {
    s.kept && s.missed.is_empty()
}

/// The answer, its line, and the largest scale served (from the reference scale up,
/// every step on the way served).
pub(super) fn answer(
    steps: &[ReplayStep],
    reference_scale: f64,
    events: &[EventComparison],
    slo: &[SloOutcome],
    set: &[Slo],
) -> (Answer, String, Option<f64>) {
    let at = format!("at {reference_scale:.1}x production's load");
    let Some(first) = steps
        .iter()
        .find(|s| (s.scale - reference_scale).abs() < 1e-9)
    else {
        return (Answer::CannotSay, "Cannot say: no step ran".into(), None);
    };
    if !served(first) {
        return (
            Answer::No,
            format!("No: {at}, {}", some(&reasons(first))),
            None,
        );
    }
    let rare: Vec<String> = events
        .iter()
        .filter_map(|e| e.too_few.as_ref().map(|t| format!("{}, {t}", e.event)))
        .collect();
    if slo.is_empty() {
        let mut unjudged = rare.clone();
        unjudged.extend(
            events
                .iter()
                .filter(|e| e.too_few.is_none() && e.production_mean_us.is_none())
                .map(|e| format!("{}, no production latency", e.event)),
        );
        return (
            Answer::CannotSay,
            format!(
                "Cannot say: {at} the rates held, but no event can be judged against \
                 production's latency ({})",
                some(&unjudged)
            ),
            None,
        );
    }
    let mut up: Vec<&ReplayStep> = steps
        .iter()
        .filter(|s| s.scale >= reference_scale - 1e-9)
        .collect();
    up.sort_by(|a, b| a.scale.total_cmp(&b.scale));
    let last = up.iter().take_while(|s| served(s)).last().map(|s| s.scale);
    let within = if set.is_empty() {
        "every event within production's latency"
    } else {
        "every event within its objective"
    };
    let reach = match (last, up.iter().find(|s| !served(s))) {
        (Some(l), None) if up.len() > 1 => {
            format!("serves production's load up to {l:.1}x, the largest tried, with {within}")
        }
        (Some(l), Some(f)) => format!(
            "serves production's load up to {l:.1}x with {within} ({:.1}x did not: {})",
            f.scale,
            reasons(f).first().map_or("", String::as_str)
        ),
        _ => format!("serves production's load at {reference_scale:.1}x with {within}"),
    };
    let mut line = format!("Yes: {reach}");
    if !rare.is_empty() {
        line += &format!("; too few I/Os to judge: {}", some(&rare));
    }
    (Answer::Yes, line, last)
}

#[cfg(test)]
#[path = "answer_tests.rs"]
mod tests;
