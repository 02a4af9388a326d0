//! Number formatting, escaping and a small table type shared by the renderers.

/// Integer with thousands separators: 1234567 -> "1,234,567".
pub fn int(v: u64) -> String {
    let digits = v.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A count with its noun, plural unless one: "1 user", "4 users".
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", int(n))
    }
}

/// A non-negative figure rounded to whole units, with separators.
pub fn whole(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let r = v.round();
    if r < 0.0 {
        format!("-{}", int((-r) as u64))
    } else {
        int(r as u64)
    }
}

/// A latency in microseconds with a precision that suits its size:
/// "0.85", "12.3", "1,234".
pub fn us(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v < 10.0 {
        format!("{v:.2}")
    } else if v < 1000.0 {
        format!("{v:.1}")
    } else {
        whole(v)
    }
}

/// Megabytes per second, one decimal with separators: "1,234.5".
pub fn mbps(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let tenths = (v * 10.0).round();
    let whole_part = whole((tenths / 10.0).trunc());
    format!("{whole_part}.{}", (tenths.abs() % 10.0) as u64)
}

/// Seconds with one decimal.
pub fn secs(v: f64) -> String {
    format!("{v:.1}")
}

/// Bytes in binary units: "8 KiB", "1.5 GiB".
pub fn bytes(v: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut x = v as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 || x.fract() == 0.0 {
        format!("{x:.0} {}", UNITS[u])
    } else {
        format!("{x:.1} {}", UNITS[u])
    }
}

/// A short latency label for a bucket bound: "512us", "1ms", "2s".
pub fn us_short(v: u64) -> String {
    if v < 1000 {
        format!("{v}us")
    } else if v < 1_000_000 {
        format!("{}ms", (v as f64 / 1e3).round())
    } else {
        format!("{}s", (v as f64 / 1e6).round())
    }
}

/// The bucket range as text: "[0, 1) us", "[512, 1024) us".
pub fn bucket(lower: u64, upper: u64) -> String {
    format!("[{}, {}) us", int(lower), int(upper))
}

/// Unix seconds as "YYYY-MM-DD HH:MM:SS UTC".
pub fn utc(unix_s: f64) -> String {
    if !unix_s.is_finite() || unix_s <= 0.0 {
        return "-".into();
    }
    let t = UtcTime::from_unix(unix_s as i64);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

/// A moment broken into UTC calendar fields, so every caller formats dates
/// without a date crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UtcTime {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
}

impl UtcTime {
    pub fn from_unix(t: i64) -> Self {
        let (days, rem) = (t.div_euclid(86_400), t.rem_euclid(86_400));
        // Civil date from days since 1970-01-01 (proleptic Gregorian).
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        Self {
            year: yoe + era * 400 + i64::from(month <= 2),
            month,
            day,
            hour: rem / 3600,
            minute: rem % 3600 / 60,
            second: rem % 60,
        }
    }
}

/// Escape text for HTML element content and attribute values.
/// Labels as "name=value, name=value" in name order.
pub fn labels(labels: &dbio_stats::Labels) -> String {
    let pairs: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    pairs.join(", ")
}

pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(ch),
        }
    }
    out
}

/// Escape text for a Markdown table cell.
pub fn md_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

/// One CSV field (RFC 4180): quoted when it holds a comma, quote or newline.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Column alignment.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A table of already formatted cells, rendered as aligned text, Markdown
/// or HTML.
pub struct Table {
    pub headers: Vec<String>,
    pub align: Vec<Align>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Headers given with a leading '<' are left-aligned, others right.
    pub fn new(headers: &[&str]) -> Table {
        let align = headers
            .iter()
            .map(|h| {
                if h.starts_with('<') {
                    Align::Left
                } else {
                    Align::Right
                }
            })
            .collect();
        Table {
            headers: headers
                .iter()
                .map(|h| h.trim_start_matches('<').to_string())
                .collect(),
            align,
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn widths(&self) -> Vec<usize> {
        let mut w: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                if let Some(x) = w.get_mut(i) {
                    *x = (*x).max(c.chars().count());
                }
            }
        }
        w
    }

    /// Plain text, columns padded and separated by two spaces, each line
    /// prefixed with `indent`.
    pub fn text(&self, indent: &str) -> String {
        let w = self.widths();
        let line = |cells: &[String]| {
            let mut s = String::from(indent);
            for (i, c) in cells.iter().enumerate() {
                let width = w.get(i).copied().unwrap_or(0);
                let pad = width.saturating_sub(c.chars().count());
                if i > 0 {
                    s.push_str("  ");
                }
                match self.align.get(i).copied().unwrap_or(Align::Left) {
                    Align::Left => {
                        s.push_str(c);
                        s.push_str(&" ".repeat(pad));
                    }
                    Align::Right => {
                        s.push_str(&" ".repeat(pad));
                        s.push_str(c);
                    }
                }
            }
            s.truncate(s.trim_end().len());
            s.push('\n');
            s
        };
        let mut out = line(&self.headers);
        let rule: Vec<String> = w.iter().map(|n| "-".repeat(*n)).collect();
        out.push_str(&line(&rule));
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }

    /// A GitHub-style Markdown table.
    pub fn markdown(&self) -> String {
        let esc: Vec<String> = self.headers.iter().map(|h| md_escape(h)).collect();
        let mut out = format!("| {} |\n|", esc.join(" | "));
        for a in &self.align {
            out.push_str(match a {
                Align::Left => " :--- |",
                Align::Right => " ---: |",
            });
        }
        out.push('\n');
        for r in &self.rows {
            let cells: Vec<String> = r.iter().map(|c| md_escape(c)).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out
    }

    /// An HTML table; every cell is escaped.
    pub fn html(&self) -> String {
        let class = |i: usize| match self.align.get(i) {
            Some(Align::Right) => " class=\"num\"",
            _ => "",
        };
        let mut out = String::from("<table>\n<thead><tr>");
        for (i, h) in self.headers.iter().enumerate() {
            out.push_str(&format!("<th{}>{}</th>", class(i), html_escape(h)));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for r in &self.rows {
            out.push_str("<tr>");
            for (i, c) in r.iter().enumerate() {
                out.push_str(&format!("<td{}>{}</td>", class(i), html_escape(c)));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(int(0), "0");
        assert_eq!(int(999), "999");
        assert_eq!(int(1000), "1,000");
        assert_eq!(int(1234567), "1,234,567");
        assert_eq!(whole(48211.6), "48,212");
        assert_eq!(us(0.854), "0.85");
        assert_eq!(us(82.94), "82.9");
        assert_eq!(us(12345.6), "12,346");
        assert_eq!(mbps(1234.56), "1,234.6");
        assert_eq!(mbps(0.04), "0.0");
        assert_eq!(bytes(8192), "8 KiB");
        assert_eq!(bytes(1536 << 20), "1.5 GiB");
        assert_eq!(us_short(512), "512us");
        assert_eq!(us_short(1024), "1ms");
        assert_eq!(us_short(4_194_304), "4s");
        assert_eq!(whole(f64::NAN), "-");
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0.0), "-");
        assert_eq!(utc(951_782_400.0), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_700_000_000.5), "2023-11-14 22:13:20 UTC");
    }

    #[test]
    fn escaping() {
        assert_eq!(
            html_escape("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(md_escape("a|b\nc"), "a\\|b c");
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,\"b\""), "\"a,\"\"b\"\"\"");
    }

    #[test]
    fn text_table_aligns() {
        let mut t = Table::new(&["<name", "ios"]);
        t.row(vec!["a".into(), "1".into()]);
        t.row(vec!["longer".into(), "12,345".into()]);
        let s = t.text("");
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "name       ios");
        assert_eq!(lines[2], "a            1");
        assert_eq!(lines[3], "longer  12,345");
    }
}
