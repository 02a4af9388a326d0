//! Test data kept beside the project, in `../shared`: real AWR reports, which are other
//! people's files and so stay out of it. A clone alone has no `../shared`; there each
//! test that reads it says so in one line and stops, counted as skipped, instead of
//! failing or passing unseen. The crates whose tests need it include this file by path.

use std::io::Write;
use std::path::PathBuf;

/// `../shared/awr-real`, the real AWR reports, when it is there. When it is not: one
/// line on stderr naming the test and `what` it checks, the same line appended to the
/// file named by `DBIO_SKIP_LOG` (where `scripts/test` counts them), and `None`. Under
/// `CI=true` a missing directory fails the test instead, so that CI never skips it.
pub fn awr_real(what: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/awr-real"
    ));
    if dir.is_dir() {
        return Some(dir);
    }
    let test = test_name();
    if on_ci() {
        panic!(
            "{test}: {what}: ../shared/awr-real is missing, and with CI={} no test may skip",
            ci()
        );
    }
    let line = format!("skipped (no ../shared/awr-real): {test}: {what}");
    // Straight to the process's stderr: the test harness keeps what eprintln! prints
    // for itself unless the test fails, and a skip must show.
    let _ = writeln!(std::io::stderr(), "{line}");
    if let Some(log) = std::env::var_os("DBIO_SKIP_LOG").filter(|l| !l.is_empty()) {
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut f| writeln!(f, "{line}"));
        if let Err(e) = appended {
            panic!("{line}; DBIO_SKIP_LOG {}: {e}", log.to_string_lossy());
        }
    }
    None
}

/// The running test, as the test harness names its thread, after its crate.
fn test_name() -> String {
    let crate_name = env!("CARGO_CRATE_NAME");
    match std::thread::current().name() {
        Some(name) if name != "main" => format!("{crate_name}::{name}"),
        _ => format!("a test of {crate_name}"),
    }
}

fn ci() -> String {
    std::env::var("CI").unwrap_or_default()
}

/// CI services set `CI=true` (some `1`); unset, empty, `0` or `false` is not CI.
fn on_ci() -> bool {
    !matches!(ci().to_ascii_lowercase().as_str(), "" | "0" | "false")
}
