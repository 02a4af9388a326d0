//! A report read as tables, whichever layout printed it, and the error of reading one:
//! what every section's reader takes, below `mod.rs`, which calls those readers.

use super::html;
use super::table::Table;
use super::text::{self, Lines};

/// Why a report could not be read: the line (from 1) and what was expected there.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}{}: {what}", if *.html { " (HTML)" } else { "" })]
pub struct AwrError {
    /// Line in the file, from 1.
    pub line: usize,
    /// What was expected there.
    pub what: String,
    /// Whether the file is an HTML report.
    pub html: bool,
}

/// A report as tables, whichever layout printed it.
pub(crate) struct Doc<'a> {
    pub tables: Vec<Table>,
    /// A text report's lines (None for HTML).
    pub lines: Option<Lines<'a>>,
    /// The last line of the file: where a section that is missing was looked for last
    /// (a report cut short ends there).
    pub end: usize,
}

impl Doc<'_> {
    pub fn err(&self, line: usize, what: impl Into<String>) -> AwrError {
        AwrError {
            line: line.max(1),
            what: what.into(),
            html: self.lines.is_none(),
        }
    }
}

pub(super) fn doc(text: &str) -> Doc<'_> {
    let end = text.lines().count();
    if html::is_html(text) {
        Doc {
            tables: html::tables(text),
            lines: None,
            end,
        }
    } else {
        let lines = Lines::new(text);
        Doc {
            tables: text::tables(&lines),
            lines: Some(lines),
            end,
        }
    }
}
