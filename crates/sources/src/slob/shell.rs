//! The part of bash a slob.conf uses: `VAR=value` assignments (several on a
//! line, separated by blanks or `;`), `export` with or without assignments,
//! comments, single and double quotes, backslash escapes, and `$VAR`,
//! `${VAR}`, `${VAR:-default}`, `${VAR:=default}` (and their forms without the
//! colon). runit.sh sources the file, so this is how it reads.
//!
//! Anything else on a line (a command, `if`, a function) is refused: dbio
//! cannot run it, and skipping it would change what the file means. Values
//! dbio cannot compute (command substitution, arithmetic) are kept as
//! [`Value::Unknown`]: an error only where such a value is needed.
//! The environment is not read: a variable the file does not set is empty,
//! as in a clean shell.

use std::collections::HashMap;

/// A variable's value after expansion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Text(String),
    /// Needs a shell to compute; says what (e.g. "command substitution").
    Unknown(&'static str),
}

impl Value {
    fn push_str(&mut self, s: &str) {
        if let Value::Text(t) = self {
            t.push_str(s);
        }
    }
    fn push(&mut self, c: char) {
        if let Value::Text(t) = self {
            t.push(c);
        }
    }
    fn append(&mut self, v: Value) {
        match v {
            Value::Text(s) => self.push_str(&s),
            u @ Value::Unknown(_) => *self = u,
        }
    }
}

/// Why a line cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShellError {
    #[error("`{0}` is not an assignment: dbio reads VAR=value lines (and export) only")]
    NotAssignment(String),
    #[error("`{0}`: pipes, redirections and subshells are not read by dbio")]
    Unsupported(String),
    /// A quote, `$(` or `${` that the line does not close.
    #[error("a {0} is not closed on its line")]
    Unclosed(&'static str),
    #[error("a line continued with \\ is not read by dbio")]
    Continued,
}

/// One assignment: the variable, its value, the 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    pub name: String,
    pub value: Value,
    pub line: usize,
}

/// Reads `text` as bash would source it; the assignments in order (a
/// variable assigned twice appears twice, the later one counting), or the
/// line that cannot be read and why.
pub fn assignments(text: &str) -> Result<Vec<Assignment>, (usize, ShellError)> {
    let mut vars: HashMap<String, Value> = HashMap::new();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let mut lx = Lexer {
            s: line.as_bytes(),
            at: 0,
            vars: &mut vars,
        };
        let words = lx.words().map_err(|e| (n, e))?;
        let mut words = words.into_iter().peekable();
        while let Some(first) = words.next() {
            // A simple command: `export` then its words, or assignments alone.
            let mut cmd = vec![first];
            while let Some(w) = words.next_if(|w| !matches!(w, Word::Separator)) {
                cmd.push(w);
            }
            words.next_if(|w| matches!(w, Word::Separator));
            command(cmd, n, line, &mut out)?;
        }
    }
    Ok(out)
}

fn command(
    cmd: Vec<Word>,
    n: usize,
    line: &str,
    out: &mut Vec<Assignment>,
) -> Result<(), (usize, ShellError)> {
    let not_assignment = || (n, ShellError::NotAssignment(line.trim().to_string()));
    let mut cmd = cmd.into_iter().peekable();
    let export = cmd.next_if(|w| matches!(w, Word::Plain(Value::Text(t)) if t == "export"));
    for w in cmd {
        match w {
            Word::Assign(name, value) => {
                out.push(Assignment {
                    name,
                    value,
                    line: n,
                });
            }
            // `export NAME` marks a variable for child processes: nothing to read.
            Word::Plain(Value::Text(t)) if export.is_some() && is_name(&t) => {}
            Word::Separator => {}
            _ => return Err(not_assignment()),
        }
    }
    Ok(())
}

fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[derive(Debug)]
enum Word {
    Assign(String, Value),
    Plain(Value),
    /// `;` between commands.
    Separator,
}

struct Lexer<'a> {
    s: &'a [u8],
    at: usize,
    vars: &'a mut HashMap<String, Value>,
}

impl Lexer<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn words(&mut self) -> Result<Vec<Word>, ShellError> {
        let mut words = Vec::new();
        loop {
            while self.peek().is_some_and(|c| c == b' ' || c == b'\t') {
                self.at += 1;
            }
            match self.peek() {
                None | Some(b'#') => return Ok(words),
                Some(b';') => {
                    self.at += 1;
                    words.push(Word::Separator);
                }
                Some(b'|' | b'&' | b'<' | b'>' | b'(' | b')') => {
                    return Err(ShellError::Unsupported(
                        String::from_utf8_lossy(self.s).trim().to_string(),
                    ))
                }
                Some(_) => words.push(self.word()?),
            }
        }
    }

    /// One word; `NAME=` at its start makes it an assignment.
    fn word(&mut self) -> Result<Word, ShellError> {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            self.at += 1;
        }
        let name = String::from_utf8_lossy(&self.s[start..self.at]).into_owned();
        if self.peek() == Some(b'=') && is_name(&name) {
            self.at += 1;
            let value = self.rest_of_word()?;
            // Later words of the line see it, as bash assigns left to right.
            self.vars.insert(name.clone(), value.clone());
            return Ok(Word::Assign(name, value));
        }
        self.at = start;
        Ok(Word::Plain(self.rest_of_word()?))
    }

    fn rest_of_word(&mut self) -> Result<Value, ShellError> {
        let mut v = Value::Text(String::new());
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' | b';' | b'|' | b'&' | b'<' | b'>' | b'(' | b')' => break,
                b'\'' => {
                    self.at += 1;
                    let start = self.at;
                    while self.peek().is_some_and(|c| c != b'\'') {
                        self.at += 1;
                    }
                    if self.peek().is_none() {
                        return Err(ShellError::Unclosed("single quote"));
                    }
                    v.push_str(&String::from_utf8_lossy(&self.s[start..self.at]));
                    self.at += 1;
                }
                b'"' => {
                    self.at += 1;
                    let q = self.double_quoted()?;
                    v.append(q);
                }
                b'\\' => {
                    self.at += 1;
                    match self.peek() {
                        Some(_) => self.push_char(&mut v),
                        None => return Err(ShellError::Continued),
                    }
                }
                b'$' => {
                    let x = self.dollar()?;
                    v.append(x);
                }
                b'`' => {
                    self.skip_to(b'`');
                    v = Value::Unknown("command substitution");
                }
                _ => self.push_char(&mut v),
            }
        }
        Ok(v)
    }

    /// Pushes the (UTF-8) character at the cursor.
    fn push_char(&mut self, v: &mut Value) {
        let rest = String::from_utf8_lossy(&self.s[self.at..]);
        let c = rest.chars().next().unwrap_or('\u{fffd}');
        v.push(c);
        self.at += c.len_utf8().min(self.s.len() - self.at).max(1);
    }

    fn double_quoted(&mut self) -> Result<Value, ShellError> {
        let mut v = Value::Text(String::new());
        loop {
            match self.peek() {
                None => return Err(ShellError::Unclosed("double quote")),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(v);
                }
                Some(b'\\') => {
                    self.at += 1;
                    match self.peek() {
                        Some(b'"' | b'\\' | b'$' | b'`') => self.push_char(&mut v),
                        Some(_) => v.push('\\'),
                        None => return Err(ShellError::Unclosed("double quote")),
                    }
                }
                Some(b'$') => {
                    let x = self.dollar()?;
                    v.append(x);
                }
                Some(b'`') => {
                    self.skip_to(b'`');
                    v = Value::Unknown("command substitution");
                }
                Some(_) => self.push_char(&mut v),
            }
        }
    }

    /// Skips past the next `close` (or to the end of the line).
    fn skip_to(&mut self, close: u8) {
        self.at += 1;
        while self.peek().is_some_and(|c| c != close) {
            self.at += 1;
        }
        self.at = (self.at + 1).min(self.s.len());
    }

    /// `$NAME`, `${...}`, `$(...)`; a `$` before anything else is itself.
    fn dollar(&mut self) -> Result<Value, ShellError> {
        self.at += 1;
        match self.peek() {
            Some(b'(') => {
                let mut depth = 0usize;
                while let Some(c) = self.peek() {
                    self.at += 1;
                    match c {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                return Ok(Value::Unknown("command substitution"));
                            }
                        }
                        _ => {}
                    }
                }
                Err(ShellError::Unclosed("$("))
            }
            Some(b'{') => self.braced(),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.at;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
                {
                    self.at += 1;
                }
                let name = String::from_utf8_lossy(&self.s[start..self.at]).into_owned();
                Ok(self.get(&name))
            }
            Some(c) if c.is_ascii_digit() || b"@*#?$!-".contains(&c) => {
                self.at += 1;
                Ok(Value::Unknown("a positional or special parameter"))
            }
            _ => Ok(Value::Text("$".into())),
        }
    }

    fn get(&self, name: &str) -> Value {
        self.vars
            .get(name)
            .cloned()
            .unwrap_or(Value::Text(String::new()))
    }

    /// `${NAME}`, `${NAME:-word}`, `${NAME-word}`, `${NAME:=word}`, `${NAME=word}`.
    fn braced(&mut self) -> Result<Value, ShellError> {
        self.at += 1;
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            self.at += 1;
        }
        let name = String::from_utf8_lossy(&self.s[start..self.at]).into_owned();
        if !is_name(&name) {
            self.skip_to(b'}');
            return Ok(Value::Unknown("a ${...} expansion"));
        }
        let colon = self.peek() == Some(b':');
        if colon {
            self.at += 1;
        }
        let op = self.peek();
        if op == Some(b'}') && !colon {
            self.at += 1;
            return Ok(self.get(&name));
        }
        if !matches!(op, Some(b'-' | b'=')) {
            self.skip_to(b'}');
            return Ok(Value::Unknown("a ${...} expansion"));
        }
        self.at += 1;
        let word = self.braced_word()?;
        let current = self.vars.get(&name).cloned();
        let unset = match &current {
            None => true,
            Some(Value::Text(t)) => colon && t.is_empty(),
            Some(Value::Unknown(_)) => false,
        };
        if !unset {
            return Ok(current.unwrap_or(Value::Text(String::new())));
        }
        if op == Some(b'=') {
            self.vars.insert(name, word.clone());
        }
        Ok(word)
    }

    /// The word of `${NAME:-word}`, up to the closing brace.
    fn braced_word(&mut self) -> Result<Value, ShellError> {
        let mut v = Value::Text(String::new());
        loop {
            match self.peek() {
                None => return Err(ShellError::Unclosed("${")),
                Some(b'}') => {
                    self.at += 1;
                    return Ok(v);
                }
                Some(b'\'') => {
                    self.at += 1;
                    let start = self.at;
                    while self.peek().is_some_and(|c| c != b'\'') {
                        self.at += 1;
                    }
                    if self.peek().is_none() {
                        return Err(ShellError::Unclosed("single quote"));
                    }
                    v.push_str(&String::from_utf8_lossy(&self.s[start..self.at]));
                    self.at += 1;
                }
                Some(b'"') => {
                    self.at += 1;
                    let q = self.double_quoted()?;
                    v.append(q);
                }
                Some(b'$') => {
                    let x = self.dollar()?;
                    v.append(x);
                }
                Some(_) => self.push_char(&mut v),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: &str) -> Value {
        Value::Text(v.into())
    }

    fn read(s: &str) -> Vec<(String, Value)> {
        assignments(s)
            .unwrap()
            .into_iter()
            .map(|a| (a.name, a.value))
            .collect()
    }

    #[test]
    fn quotes_comments_export_and_expansions() {
        let a = read(
            "# comment\n\
             A=1   # trailing\n\
             export B=\"two words\" C='$A #x'\n\
             D=${A:-9} E=${UNSET:-7} F=${UNSET:=8}; G=$F\n\
             H=\"${A}0\"\\ x\n\
             I=$(hostname) J=\"`date`\"\n\
             export A B\n\
             K=\n",
        );
        let want = [
            ("A", text("1")),
            ("B", text("two words")),
            ("C", text("$A #x")),
            ("D", text("1")),
            ("E", text("7")),
            ("F", text("8")),
            ("G", text("8")),
            ("H", text("10 x")),
            ("I", Value::Unknown("command substitution")),
            ("J", Value::Unknown("command substitution")),
            ("K", text("")),
        ];
        let want: Vec<(String, Value)> = want.into_iter().map(|(n, v)| (n.into(), v)).collect();
        assert_eq!(a, want);
    }

    #[test]
    fn colon_forms_differ_on_empty_values() {
        let a = read("E=\nX=${E-unset} Y=${E:-empty}\n");
        assert_eq!(a[1].1, text(""));
        assert_eq!(a[2].1, text("empty"));
    }

    #[test]
    fn commands_and_open_quotes_are_refused_with_their_line() {
        let (line, e) = assignments("A=1\nif [ x ]; then\n").unwrap_err();
        assert_eq!(line, 2);
        assert!(e.to_string().contains("not an assignment"), "{e}");
        let (line, e) = assignments("\n\nA=\"open\n").unwrap_err();
        assert_eq!(line, 3);
        assert!(e.to_string().contains("double quote is not closed"), "{e}");
        assert_eq!(assignments("echo hi > x").unwrap_err().0, 1);
        assert_eq!(assignments("A=1 \\").unwrap_err().0, 1);
    }
}
