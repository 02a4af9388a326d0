//! The files a command writes: each whole or not at all.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::ReportError;
use crate::result::{json, AnyResult};
use crate::{csv, html, markdown};

/// Which files to write; `None` writes nothing of that format.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outputs {
    pub json: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub md: Option<PathBuf>,
    pub html: Option<PathBuf>,
}

/// Write each output asked for. Each file appears whole or not at all; the
/// first failure stops and names its path. Returns the files written, in
/// order, for the caller to tell the user where they are.
pub fn write_outputs(result: &AnyResult, outputs: &Outputs) -> Result<Vec<PathBuf>, ReportError> {
    let mut written = Written::default();
    if let Some(p) = &outputs.json {
        written.write(p, json(result)?.as_bytes())?;
    }
    if let Some(p) = &outputs.csv {
        written.write(p, csv(result).as_bytes())?;
    }
    if let Some(p) = &outputs.md {
        written.write(p, markdown(result).as_bytes())?;
    }
    if let Some(p) = &outputs.html {
        written.write(p, html(result).as_bytes())?;
    }
    Ok(written.0)
}

/// The files an output step has written so far ([`write_atomic`] each).
#[derive(Default)]
pub(crate) struct Written(pub(crate) Vec<PathBuf>);

impl Written {
    pub(crate) fn write(&mut self, path: &Path, data: &[u8]) -> Result<(), ReportError> {
        write_atomic(path, data)?;
        self.0.push(path.to_path_buf());
        Ok(())
    }
}

/// Write `data` to a temporary file in the same directory, then rename it
/// over `path` (rename within a directory is atomic).
pub fn write_atomic(path: &Path, data: &[u8]) -> Result<(), ReportError> {
    let err = |source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    };
    let name = path.file_name().ok_or_else(|| {
        err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a file name",
        ))
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp{}", std::process::id()));
    let tmp = dir.join(tmp_name);
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(data)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(err(e));
    }
    Ok(())
}
