//! A text report's fixed-width tables. Columns are found from the dashed ruler under
//! their titles, so the widths and titles of each version need no list.

use super::table::{Row, Table, MAX_COLUMNS, MAX_ROWS};

/// The lines of a text report, with their numbers (from 1) in the file.
pub(crate) struct Lines<'a> {
    pub lines: Vec<(usize, &'a str)>,
}

impl<'a> Lines<'a> {
    /// Splits `text` into lines, leaving out what SQL*Plus adds at each page break when
    /// it spools `DBMS_WORKLOAD_REPOSITORY.AWR_REPORT_TEXT` (a blank line and an
    /// `OUTPUT` heading, even inside a table), so that a table reads as one.
    pub fn new(text: &'a str) -> Lines<'a> {
        let mut lines: Vec<(usize, &str)> = Vec::new();
        for (i, l) in text.lines().enumerate() {
            if l.trim() == "OUTPUT" {
                if lines.last().is_some_and(|(_, p)| p.trim().is_empty()) {
                    lines.pop();
                }
                continue;
            }
            lines.push((i + 1, l));
        }
        Lines { lines }
    }

    pub fn text(&self, i: usize) -> &'a str {
        self.lines.get(i).map_or("", |l| l.1)
    }

    pub fn number(&self, i: usize) -> usize {
        self.lines.get(i).or(self.lines.last()).map_or(1, |l| l.0)
    }
}

/// Column spans (start, end) of a ruler line of dashes (or a Load Profile's tildes)
/// separated by spaces.
pub(crate) fn ruler(line: &str) -> Option<Vec<(usize, usize)>> {
    let t = line.trim_end();
    let first = t.trim_start().chars().next()?;
    if !matches!(first, '-' | '~') || !t.chars().all(|c| matches!(c, '-' | '~' | ' ')) {
        return None;
    }
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in t.char_indices() {
        match (c, start) {
            ('-' | '~', None) => start = Some(i),
            (' ', Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, t.len()));
    }
    Some(spans)
}

/// The text of a column; the last column runs to the end of the line.
pub(crate) fn column(line: &str, spans: &[(usize, usize)], i: usize) -> String {
    let Some(&(s, e)) = spans.get(i) else {
        return String::new();
    };
    let e = if i + 1 == spans.len() { line.len() } else { e };
    // A cut inside a multi-byte character reads as empty, never as a panic.
    line.get(s.min(line.len())..e.min(line.len()))
        .unwrap_or("")
        .trim()
        .to_string()
}

/// A section's title from its title line: "Foreground Wait Events   DB/Inst: ..." or
/// "Load Profile      Per Second ..." (the words before a wide gap).
fn title_of(line: &str) -> String {
    let t = line.split("DB/Inst:").next().unwrap_or("").trim();
    t.split("   ").next().unwrap_or("").trim().to_string()
}

/// Whether line `i` starts a section: it names its database ("DB/Inst:") or a line of
/// tildes underlines it.
fn is_title(lines: &Lines, i: usize) -> bool {
    let l = lines.text(i);
    !l.trim().is_empty()
        && !l.trim_start().starts_with('~')
        && (l.contains("DB/Inst:") || lines.text(i + 1).trim_start().starts_with('~'))
}

/// Every table of a text report: a ruler with two columns or more, the title lines
/// above it and the rows below it, up to a blank line, a closing ruler or the next
/// section. A ruler of tildes (Load Profile, IO Profile) starts a table of "Name: value
/// value ..." rows.
pub(crate) fn tables(lines: &Lines) -> Vec<Table> {
    let mut out = Vec::new();
    let n = lines.lines.len();
    let mut i = 0;
    while i < n {
        let Some(spans) = ruler(lines.text(i)).filter(|s| (2..=MAX_COLUMNS).contains(&s.len()))
        else {
            i += 1;
            continue;
        };
        let named = lines.text(i).trim_start().starts_with('~');
        // Title lines: up to a blank line, a note ("-> ..."), a one-column ruler or
        // the section's title.
        let mut top = i;
        while top > 0 {
            let l = lines.text(top - 1);
            if l.trim().is_empty()
                || l.trim_start().starts_with("->")
                || ruler(l).is_some()
                || is_title(lines, top - 1)
            {
                break;
            }
            top -= 1;
        }
        let title = (0..=i.min(n - 1))
            .rev()
            .take(60)
            .find(|&k| is_title(lines, k))
            .map(|k| title_of(lines.text(k)))
            .unwrap_or_default();
        let mut headers = vec![String::new(); spans.len()];
        for k in top..i {
            for (c, word) in words(lines.text(k), &spans) {
                if !headers[c].is_empty() {
                    headers[c].push(' ');
                }
                headers[c].push_str(word);
            }
        }
        let mut rows = Vec::new();
        let mut k = i + 1;
        while k < n {
            let l = lines.text(k);
            if l.trim().is_empty()
                || ruler(l).is_some()
                || is_title(lines, k)
                || rows.len() >= MAX_ROWS
            {
                break;
            }
            let cells = if named {
                named_row(l)
            } else {
                (0..spans.len()).map(|c| column(l, &spans, c)).collect()
            };
            rows.push(Row {
                line: lines.number(k),
                cells,
                raw: l.to_string(),
            });
            k += 1;
        }
        out.push(Table {
            title,
            summary: String::new(),
            line: lines.number(i),
            headers,
            rows,
        });
        i = k;
    }
    out
}

/// The words of a title line, each with the column it lies over most (or nearest).
fn words<'a>(line: &'a str, spans: &[(usize, usize)]) -> Vec<(usize, &'a str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices().chain([(line.len(), ' ')]) {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                let mid = (s + i) / 2;
                let col = spans
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, &(a, b))| {
                        if mid < a {
                            a - mid
                        } else {
                            mid.saturating_sub(b.saturating_sub(1))
                        }
                    })
                    .map_or(0, |(c, _)| c);
                out.push((col, &line[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// "   Redo size (bytes):   5,215,426.4   204,892.4": the name with its colon, then
/// each figure.
fn named_row(line: &str) -> Vec<String> {
    let Some((name, rest)) = line.rsplit_once(':') else {
        return vec![line.trim().to_string()];
    };
    let mut cells = vec![format!("{}:", name.trim())];
    cells.extend(rest.split_whitespace().map(str::to_string));
    cells
}
