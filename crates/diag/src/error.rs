//! The error of the probes and samplers, in a module of its own: they all fail with
//! it, and lib.rs, which re-exports them, is not where they should import it from.

/// What a probe could not do.
#[derive(Debug, thiserror::Error)]
pub enum DiagError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Other(String),
}

impl DiagError {
    pub(crate) fn io(path: impl AsRef<std::path::Path>, source: std::io::Error) -> Self {
        DiagError::Io {
            path: path.as_ref().display().to_string(),
            source,
        }
    }
}
