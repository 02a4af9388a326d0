//! An HTML report's tables (`awrrpt_*.html`): a small reader of `<table>`, `<tr>`,
//! `<th>` and `<td>`, and of the text before each table that titles it. AWR writes
//! flat, regular HTML; nothing else of HTML is needed.

use super::table::{Row, Table, MAX_ROWS};

/// Whether `text` looks like HTML rather than a text report.
pub(crate) fn is_html(text: &str) -> bool {
    let head: String = text
        .chars()
        .take(4096)
        .collect::<String>()
        .to_ascii_lowercase();
    head.trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('<')
        && (head.contains("<html") || head.contains("<table"))
}

/// `&lt;`, `&#160;` and the like, as text; a non-breaking space becomes a space.
fn decode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let Some(end) = rest.bytes().take(12).position(|b| b == b';') else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..end];
        let c = match entity {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some(' '),
            _ => entity
                .strip_prefix('#')
                .and_then(|n| match n.strip_prefix(['x', 'X']) {
                    Some(hex) => u32::from_str_radix(hex, 16).ok(),
                    None => n.parse().ok(),
                })
                .and_then(char::from_u32)
                .map(|c| if c == '\u{a0}' { ' ' } else { c }),
        };
        match c {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The value of attribute `name` in a start tag's text (`table border="0" summary="..."`).
fn attribute(tag: &str, name: &str) -> Option<String> {
    let lower = tag.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find(name) {
        let start = from + at;
        from = start + name.len();
        let before_ok = start == 0 || lower.as_bytes()[start - 1].is_ascii_whitespace();
        let rest = tag[from..].trim_start();
        if !before_ok || !rest.starts_with('=') {
            continue;
        }
        let rest = rest[1..].trim_start();
        let quote = rest.chars().next()?;
        if quote == '"' || quote == '\'' {
            let body = &rest[1..];
            return Some(decode(&body[..body.find(quote).unwrap_or(body.len())]));
        }
        let end = rest
            .find(|c: char| c.is_whitespace() || c == '>')
            .unwrap_or(rest.len());
        return Some(decode(&rest[..end]));
    }
    None
}

/// Every table of an HTML report. Its title is the last text outside a list item
/// between the previous table and this one (an `<h3>` heading, or the line AWR writes
/// above its summary tables); its column titles are its last row of `<th>` cells.
pub(crate) fn tables(text: &str) -> Vec<Table> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut pos = 0;
    // State between tags.
    let mut title = String::new();
    let mut in_li = 0usize;
    let mut table: Option<Table> = None;
    let mut row: Option<(Row, bool)> = None; // the row, and whether it has a <th>
    let mut cell: Option<String> = None;
    let bytes = text.as_bytes();
    while pos < text.len() {
        let Some(lt) = text[pos..].find('<').map(|i| pos + i) else {
            break;
        };
        let between = &text[pos..lt];
        line += between.bytes().filter(|&b| b == b'\n').count();
        if let Some(c) = cell.as_mut() {
            c.push_str(between);
        } else if in_li == 0 && !between.trim().is_empty() {
            title = between.split_whitespace().collect::<Vec<_>>().join(" ");
        }
        // Comments and the like are skipped whole.
        if text[lt..].starts_with("<!--") {
            let end = text[lt..].find("-->").map_or(text.len(), |i| lt + i + 3);
            line += bytes[lt..end].iter().filter(|&&b| b == b'\n').count();
            pos = end;
            continue;
        }
        let Some(gt) = text[lt..].find('>').map(|i| lt + i) else {
            break;
        };
        let tag = &text[lt + 1..gt];
        line += tag.bytes().filter(|&b| b == b'\n').count();
        pos = gt + 1;
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        match (name.as_str(), closing) {
            ("li", false) => in_li += 1,
            ("li", true) => in_li = in_li.saturating_sub(1),
            // A list item left open ends with its list, or at the next heading.
            ("ul" | "ol", true) | ("h1" | "h2" | "h3" | "h4", false) => in_li = 0,
            ("table", false) => {
                // A table left open (AWR writes flat tables) ends where the next starts.
                finish_row(&mut table, &mut row, &mut cell);
                out.extend(table.take());
                table = Some(Table {
                    title: decode(&title),
                    summary: attribute(tag, "summary").unwrap_or_default(),
                    line,
                    ..Table::default()
                });
            }
            ("table", true) => {
                finish_row(&mut table, &mut row, &mut cell);
                if let Some(t) = table.take() {
                    out.push(t);
                }
                title.clear();
            }
            ("tr", false) if table.is_some() => {
                finish_row(&mut table, &mut row, &mut cell);
                row = Some((
                    Row {
                        line,
                        ..Row::default()
                    },
                    false,
                ));
            }
            ("tr", true) => finish_row(&mut table, &mut row, &mut cell),
            ("td" | "th", false) if table.is_some() => {
                finish_cell(&mut row, &mut cell);
                if row.is_none() {
                    row = Some((
                        Row {
                            line,
                            ..Row::default()
                        },
                        false,
                    ));
                }
                if let Some(r) = row.as_mut() {
                    r.1 |= name == "th";
                }
                cell = Some(String::new());
            }
            ("td" | "th", true) => finish_cell(&mut row, &mut cell),
            ("br", _) => {
                if let Some(c) = cell.as_mut() {
                    c.push(' ');
                }
            }
            _ => {}
        }
    }
    finish_row(&mut table, &mut row, &mut cell);
    if let Some(t) = table.take() {
        out.push(t);
    }
    out
}

fn finish_cell(row: &mut Option<(Row, bool)>, cell: &mut Option<String>) {
    if let (Some(c), Some((r, _))) = (cell.take(), row.as_mut()) {
        let text = decode(&c);
        r.cells
            .push(text.split_whitespace().collect::<Vec<_>>().join(" "));
    }
}

fn finish_row(table: &mut Option<Table>, row: &mut Option<(Row, bool)>, cell: &mut Option<String>) {
    finish_cell(row, cell);
    if let (Some((r, header)), Some(t)) = (row.take(), table.as_mut()) {
        if header {
            t.headers = r.cells;
        } else if !r.cells.is_empty() && t.rows.len() < MAX_ROWS {
            t.rows.push(r);
        }
    }
}
