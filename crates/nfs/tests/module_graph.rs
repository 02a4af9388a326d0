//! The modules of `crates/nfs/src` import one another in layers: the graph of their
//! `use crate::` imports has no strongly connected component of more than two modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// A file's module, as a path from the crate root ("" for lib.rs; `a/mod.rs` is "a").
fn module_of(file: &Path) -> String {
    let rel = file.strip_prefix(src()).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts.join("::")
}

/// The paths a `use` tree names (`a::{b, c::D}` gives `a::b` and `a::c::D`).
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![tree.split(" as ").next().unwrap_or("").trim().to_string()];
    };
    let prefix = tree[..open].trim_end_matches("::").trim();
    let inner = &tree[open + 1..tree.rfind('}').expect("a closed brace")];
    let (mut depth, mut start, mut out) = (0, 0, Vec::new());
    let mut parts = Vec::new();
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    for p in parts.into_iter().filter(|p| !p.trim().is_empty()) {
        for tail in expand(p) {
            out.push(if prefix.is_empty() {
                tail
            } else if tail == "self" {
                prefix.to_string()
            } else {
                format!("{prefix}::{tail}")
            });
        }
    }
    out
}

/// The `use crate::` imports of `text` (whole statements, across lines).
fn imports(text: &str) -> Vec<String> {
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("use crate::") {
        let before = &rest[..at];
        let starts_statement = before
            .chars()
            .rev()
            .find(|c| !c.is_whitespace())
            .is_none_or(|c| matches!(c, ';' | '{' | '}' | ')' | ']') || before.ends_with("pub "))
            || before.trim_end().ends_with("pub")
            || before.trim_end().ends_with("pub(crate)")
            || before.trim_end().ends_with("pub(super)");
        let stmt_start = at + "use crate::".len();
        let end = rest[stmt_start..]
            .find(';')
            .map_or(rest.len(), |e| stmt_start + e);
        if starts_statement {
            out.extend(expand(&rest[stmt_start..end]));
        }
        rest = &rest[end..];
    }
    out
}

/// The module an imported path lives in: its longest prefix that is a module.
fn owner(path: &str, modules: &BTreeSet<String>) -> Option<String> {
    let segs: Vec<&str> = path.split("::").collect();
    (1..=segs.len())
        .rev()
        .map(|n| segs[..n].join("::"))
        .find(|m| modules.contains(m))
}

/// Strongly connected components (Tarjan).
fn components(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut c = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                c.push(w.to_string());
                if w == v {
                    break;
                }
            }
            c.sort();
            t.out.push(c);
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut all = Vec::new();
    files(&src(), &mut all);
    let modules: BTreeSet<String> = all.iter().map(|f| module_of(f)).collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &all {
        let from = module_of(f);
        let text = std::fs::read_to_string(f).unwrap();
        let to: BTreeSet<String> = imports(&text)
            .iter()
            .filter_map(|p| owner(p, &modules))
            .filter(|m| *m != from && !m.is_empty())
            .collect();
        g.entry(from).or_default().extend(to);
    }
    g
}

#[test]
fn the_parser_reads_nested_use_trees() {
    let got = imports(
        "use crate::a::{b, c::{D, E as F}};\npub use crate::g::H;\n// use crate::x::Y;\nlet u = 1; use crate::self_::{self};",
    );
    assert_eq!(got, ["a::b", "a::c::D", "a::c::E", "g::H", "self_"]);
    let mut g = BTreeMap::new();
    for (a, b) in [("x", "y"), ("y", "z"), ("z", "x"), ("p", "q"), ("q", "p")] {
        g.entry(a.to_string())
            .or_insert_with(BTreeSet::new)
            .insert(b.to_string());
    }
    let mut sizes: Vec<usize> = components(&g).iter().map(Vec::len).collect();
    sizes.sort();
    assert_eq!(sizes, [2, 3]);
}

#[test]
fn no_import_circle_of_more_than_two_modules() {
    let g = graph();
    assert!(g.len() > 20, "too few modules found: {:?}", g.keys());
    let big: Vec<Vec<String>> = components(&g).into_iter().filter(|c| c.len() > 2).collect();
    assert!(
        big.is_empty(),
        "modules that import one another in a circle: {big:?}"
    );
}
