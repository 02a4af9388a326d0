//! README's examples parse: every `dbio` command line in README.md's code
//! blocks goes through the same parser as the binary's command line, so the
//! README and the binary cannot disagree on a command, an option or a value.

use clap::Parser;

use crate::Cli;

/// The `dbio` command lines of `readme`'s code blocks, each with its line
/// number: continuation lines (ending in `\`) joined, comments (` # ...`) cut.
pub fn commands(readme: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_block = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in readme.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            pending = None;
            continue;
        }
        if !in_block {
            continue;
        }
        let (n, text) = match pending.take() {
            Some((n, head)) => (n, format!("{head} {}", line.trim())),
            None => {
                let t = line.trim().trim_start_matches("$ ");
                if !t.starts_with("dbio ") {
                    continue;
                }
                (i + 1, t.to_string())
            }
        };
        match text.strip_suffix('\\') {
            Some(head) => pending = Some((n, head.trim_end().to_string())),
            None => out.push((n, cut_comment(&text))),
        }
    }
    out
}

/// The line without a shell comment (a `#` after blank space, outside quotes).
fn cut_comment(line: &str) -> String {
    let mut quote = None;
    let mut prev_blank = false;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if prev_blank => return line[..i].trim_end().to_string(),
            _ => {}
        }
        prev_blank = c.is_whitespace();
    }
    line.trim_end().to_string()
}

/// Splits a command line as a POSIX shell does its words: blanks separate,
/// single quotes keep everything, double quotes and backslashes as usual.
/// Globs and variables stay as written (the parser sees them as values).
pub fn words(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if let Some(w) = word.take() {
                    out.push(w);
                }
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err("unclosed single quote".into()),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => w.extend(chars.next()),
                        Some(c) => w.push(c),
                        None => return Err("unclosed double quote".into()),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    out.extend(word);
    Ok(out)
}

/// Every command of `readme` that the binary's parser refuses: its line
/// number, the command and the parser's first line.
pub fn refused(readme: &str) -> Vec<String> {
    commands(readme)
        .into_iter()
        .filter_map(|(n, line)| {
            let args = match words(&line) {
                Ok(w) => crate::with_set_breaks(w.into_iter().map(Into::into).collect()),
                Err(e) => return Some(format!("README.md:{n}: {e}: {line}")),
            };
            Cli::try_parse_from(args).err().map(|e| {
                let why = e.to_string();
                let why = why.lines().next().unwrap_or("").to_string();
                format!("README.md:{n}: {why}\n    {line}")
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readme() -> String {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
        std::fs::read_to_string(path).expect("README.md at the workspace root")
    }

    #[test]
    fn every_dbio_command_in_readme_parses() {
        let text = readme();
        let all = commands(&text);
        // The Examples block alone holds more than thirty.
        assert!(
            all.len() > 30,
            "only {} commands found in README",
            all.len()
        );
        let refused = refused(&text);
        assert!(
            refused.is_empty(),
            "README.md holds commands dbio refuses:\n{}",
            refused.join("\n")
        );
    }

    #[test]
    fn a_readme_with_a_wrong_option_or_value_is_caught_with_its_line() {
        let text = readme()
            .replacen("--profile oltp", "--profil oltp", 1)
            .replacen("--repeats 5", "--repeats five", 1);
        let refused = refused(&text);
        assert_eq!(refused.len(), 2, "{refused:#?}");
        assert!(refused[0].contains("--profil"), "{}", refused[0]);
        assert!(refused[1].contains("five"), "{}", refused[1]);
        let line: usize = refused[0]["README.md:".len()..]
            .split(':')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(text
            .lines()
            .nth(line - 1)
            .unwrap()
            .contains("--profil oltp"));
    }

    #[test]
    fn words_and_comments_as_the_shell_reads_them() {
        assert_eq!(
            words(r#"dbio run --target 'nfs://h/e?version=3&x=1' --label "a b" c\ d"#).unwrap(),
            [
                "dbio",
                "run",
                "--target",
                "nfs://h/e?version=3&x=1",
                "--label",
                "a b",
                "c d"
            ]
        );
        assert!(words("dbio 'open").is_err());
        assert_eq!(cut_comment("dbio frag x   # fragments"), "dbio frag x");
        assert_eq!(
            cut_comment("dbio run --label 'a # b'"),
            "dbio run --label 'a # b'"
        );
        let block = "```\ndbio sweep --users 1 \\\n  --repeats 2   # joined\n```\n";
        assert_eq!(
            commands(block),
            [(2, "dbio sweep --users 1 --repeats 2".into())]
        );
    }
}
