//! Records the git commit dbio is built from, for the provenance of every result.
//! `DBIO_GIT_COMMIT` in the environment wins (a packager's reproducible build); outside a
//! git checkout, or without git, the commit is "unknown".

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=DBIO_GIT_COMMIT");
    let commit = std::env::var("DBIO_GIT_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=DBIO_GIT_COMMIT={commit}");
}

/// HEAD's commit when built; rebuilt when HEAD moves. (Uncommitted changes are not
/// tracked: a build script cannot see every edit without running on every build.)
fn git_commit() -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git").args(args).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let head = git(&["rev-parse", "HEAD"]).filter(|h| h.len() == 40)?;
    // Where HEAD and the branch it names live (a worktree keeps its own HEAD).
    for path in ["HEAD", "logs/HEAD"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    Some(head)
}
