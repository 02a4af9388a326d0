//! What a run really got, recorded in its result: the build, the engine, the kernel mount
//! of a local target, and what dbio's NFS client negotiated.

use dbio_stats::{MountProvenance, Provenance, RunResult};
use dbio_storage::Target;

/// The git commit of this build (see build.rs), "unknown" when the build did not know it.
pub const GIT_COMMIT: &str = env!("DBIO_GIT_COMMIT");

/// Adds the provenance of a finished run to its result.
pub fn record(result: &mut RunResult, target: &Target) {
    let mount = target
        .device_dir()
        .and_then(dbio_diag::blockdev::mount_of)
        .map(|m| MountProvenance {
            mount_point: m.mount_point.display().to_string(),
            fs_type: m.fs_type,
            source: m.source,
            options: m.options,
        });
    result.provenance = Some(Box::new(Provenance {
        dbio_version: env!("CARGO_PKG_VERSION").into(),
        git_commit: GIT_COMMIT.into(),
        engine: result.config.engine.clone(),
        args: std::env::args().skip(1).collect(),
        mount,
        nfs: result
            .nfs
            .as_deref()
            .map(Provenance::nfs_of)
            .unwrap_or_default(),
    }));
}
