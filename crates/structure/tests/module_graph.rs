//! The structure of the workspace, read from its sources.
//!
//! 1. Within each crate, files import one another in layers: in the graph of which file
//!    names which (`reader`), no strongly connected component holds more than two files,
//!    except the circles of `KNOWN_CIRCLES`, which may only shrink. Files under `tests/`
//!    and `benches/` and test-only items are left out: test code may import anything.
//! 2. Between crates, `[dependencies]` run down the layers of `LAYERS`.

#[path = "module_graph/reader.rs"]
mod reader;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use reader::{load, Graph, Read};

/// Circles of more than two files that exist and are being taken apart: none left.
/// This list may only shrink: the test fails on a circle not listed, on a listed circle
/// that gained files, and on a listed circle that lost files or is gone while still
/// listed at its old size (so the list always says exactly what is left to cut).
const KNOWN_CIRCLES: &[(&str, &[&str])] = &[];

/// Each crate's layer, bottom up. A crate's `[dependencies]` may name only crates of
/// lower layers; crates of one layer are siblings and do not use one another. The order
/// is the design's (xdr, rpc, the NFS client, engine, workload, experiment, the CLI;
/// stats and report beside them, fed with completions and results), placed as
/// ARCHITECTURE.md draws it ("Who may use whom", "The NFS engine").
const LAYERS: &[(&str, u8)] = &[
    ("dbio-xdr", 0),
    // The result schema everything records into; it uses no crate of ours.
    ("dbio-stats", 0),
    ("dbio-rpc", 1),
    // Pure codecs of the NFS programs, over xdr (ARCHITECTURE: between rpc and nfs).
    ("dbio-nfs-proto", 2),
    ("dbio-nfs", 3),
    // The engine seam knows no NFS; the NFS client plugs in above it.
    ("dbio-engine", 4),
    ("dbio-workload", 5),
    // The NFS client as an engine and the data set over NFS: above engine, workload
    // and nfs (ARCHITECTURE, "Why a crate of its own").
    ("dbio-nfs-engine", 6),
    // Where workload models come from (AWR, PostgreSQL, MySQL, saved models) and the
    // model they give, and SLOB's slob.conf in the workload's knobs: over stats and
    // workload, so that experiment runs the model and compare judges it.
    ("dbio-sources", 6),
    // Observations and comparisons, read through the stats schema, production's side
    // from sources; report uses them.
    ("dbio-compare", 7),
    // A target (local, NFS, oranfstab): uses nfs-engine, nfs, workload, engine.
    ("dbio-storage", 7),
    // What to measure and when to stop: workload, engine, stats, sources; no NFS crate.
    ("dbio-experiment", 7),
    // Used by the CLI only.
    ("dbio-report", 8),
    ("dbio-diag", 8),
    ("dbio-mpi", 8),
    // A stand-alone FUSE daemon (a storage with a known latency); nothing uses it.
    ("dbio-delayfs", 8),
    ("dbio-structure", 8),
    ("dbio-cli", 9),
];

/// What ARCHITECTURE.md's "Who may use whom" forbids beyond the layers.
const NEVER: &[(&str, &[&str])] = &[
    // An NFS run is just another `Dataset` with a `Backend`.
    (
        "dbio-experiment",
        &["dbio-nfs-engine", "dbio-nfs", "dbio-nfs-proto", "dbio-rpc"],
    ),
    (
        "dbio-nfs-engine",
        &["dbio-rpc", "dbio-xdr", "dbio-nfs-proto"],
    ),
    // Results are read only through the stats schema.
    ("dbio-compare", &["dbio-nfs", "dbio-nfs-engine", "dbio-rpc"]),
    ("dbio-report", &["dbio-nfs", "dbio-nfs-engine", "dbio-rpc"]),
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn toml_of(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The workspace's members: (package name, package directory).
fn members() -> Vec<(String, PathBuf)> {
    let root = toml_of(&workspace().join("Cargo.toml"));
    let list = root["workspace"]["members"]
        .as_array()
        .expect("workspace.members");
    list.iter()
        .map(|m| {
            let m = m.as_str().expect("a member is a path");
            assert!(!m.contains('*'), "member globs are not read: {m}");
            let dir = workspace().join(m);
            let manifest = toml_of(&dir.join("Cargo.toml"));
            let name = manifest["package"]["name"].as_str().expect("package.name");
            (name.to_string(), dir)
        })
        .collect()
}

/// Each member with its directory and its targets (lib.rs, main.rs, [[bin]] paths).
fn crates() -> Vec<(String, PathBuf, Vec<Graph>)> {
    let read: Read = &|p: &Path| std::fs::read_to_string(p).ok();
    members()
        .into_iter()
        .map(|(name, dir)| {
            let manifest = toml_of(&dir.join("Cargo.toml"));
            let mut roots = BTreeSet::new();
            for t in ["lib", "bin"].iter().filter_map(|k| manifest.get(*k)) {
                let targets = t.as_array().cloned().unwrap_or_else(|| vec![t.clone()]);
                let paths = targets.iter().filter_map(|t| t.get("path")?.as_str());
                roots.extend(paths.map(|p| dir.join(p)));
            }
            for default in ["src/lib.rs", "src/main.rs"] {
                if dir.join(default).exists() {
                    roots.insert(dir.join(default));
                }
            }
            assert!(!roots.is_empty(), "{name}: no lib.rs or main.rs");
            let graphs = roots.iter().map(|r| load(&dir, r, read)).collect();
            (name, dir, graphs)
        })
        .collect()
}

// ---------------------------------------------------------------------------------
// Circles.

/// Strongly connected components (Tarjan), each sorted.
fn components(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Tarjan<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut Tarjan<'a>, v: &'a str) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on_stack.insert(v);
        for w in t.graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                t.low.entry(v).and_modify(|l| *l = (*l).min(lw));
            } else if t.on_stack.contains(w) {
                let iw = t.index[w];
                t.low.entry(v).and_modify(|l| *l = (*l).min(iw));
            }
        }
        if t.low[v] == t.index[v] {
            let mut c = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on_stack.remove(w);
                c.push(w.to_string());
                if w == v {
                    break;
                }
            }
            c.sort();
            t.out.push(c);
        }
    }
    let mut t = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

fn adjacency(g: &Graph) -> BTreeMap<String, BTreeSet<String>> {
    g.edges
        .iter()
        .map(|(from, to)| (from.clone(), to.keys().cloned().collect()))
        .collect()
}

/// The shortest way round a component, from its first file back to it.
fn way_round(adj: &BTreeMap<String, BTreeSet<String>>, scc: &[String]) -> Vec<String> {
    let inside: BTreeSet<&String> = scc.iter().collect();
    let start = &scc[0];
    let mut came_from: BTreeMap<&String, &String> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for w in adj
            .get(v)
            .into_iter()
            .flatten()
            .filter(|w| inside.contains(w))
        {
            if w == start {
                let mut back = vec![start.clone()];
                let mut at = v;
                while at != start {
                    back.push(at.clone());
                    at = came_from[at];
                }
                back.push(start.clone());
                back.reverse();
                return back;
            }
            if !came_from.contains_key(w) {
                came_from.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    unreachable!("a component of more than one file has a way round")
}

/// A circle, its way round and every edge inside it with where it is written.
fn describe(krate: &str, g: &Graph, scc: &[String]) -> String {
    let adj = adjacency(g);
    let mut s = format!("{krate}: {} files: {}\n", scc.len(), scc.join(", "));
    let _ = writeln!(s, "  one way round: {}", way_round(&adj, scc).join(" -> "));
    let _ = writeln!(s, "  the edges inside it (cut enough to open it):");
    for from in scc {
        for (to, sites) in g.edges.get(from).into_iter().flatten() {
            if scc.contains(to) {
                // One site per line: a `use` group names many items on one line.
                let mut lines: BTreeMap<usize, (&str, usize)> = BTreeMap::new();
                for w in sites {
                    lines.entry(w.line).or_insert((&w.path, 0)).1 += 1;
                }
                let at: Vec<String> = lines
                    .iter()
                    .map(|(line, (path, n))| match n {
                        1 => format!("{from}:{line} `{path}`"),
                        n => format!("{from}:{line} `{path}` and {} more", n - 1),
                    })
                    .collect();
                let _ = writeln!(s, "    {from} -> {to}: {}", at.join(", "));
            }
        }
    }
    s
}

/// What is wrong with `found` (the circles of more than two files of each crate) against
/// `known`; empty when they agree exactly.
fn ratchet(
    found: &BTreeMap<String, Vec<Vec<String>>>,
    known: &[(&str, &[&str])],
) -> Vec<(String, Option<Vec<String>>, String)> {
    let mut wrong = Vec::new();
    let known: Vec<(String, BTreeSet<String>)> = known
        .iter()
        .map(|(k, files)| (k.to_string(), files.iter().map(|f| f.to_string()).collect()))
        .collect();
    for (krate, circles) in found {
        for c in circles {
            let set: BTreeSet<String> = c.iter().cloned().collect();
            if known.iter().any(|(k, f)| k == krate && *f == set) {
                continue;
            }
            let near = known
                .iter()
                .find(|(k, f)| k == krate && !f.is_disjoint(&set));
            let why = match near {
                None => "a circle not in KNOWN_CIRCLES: cut it (move what its files take \
                         from one another into a module below them)"
                    .to_string(),
                Some((_, f)) if f.is_subset(&set) => format!(
                    "a known circle grew (KNOWN_CIRCLES may only shrink), gained {:?}",
                    set.difference(f).collect::<Vec<_>>()
                ),
                Some((_, f)) if set.is_subset(f) => format!(
                    "a known circle shrank, lost {:?}: list it in KNOWN_CIRCLES as it now is",
                    f.difference(&set).collect::<Vec<_>>()
                ),
                Some((_, f)) => format!(
                    "a known circle changed, lost {:?} and gained {:?}",
                    f.difference(&set).collect::<Vec<_>>(),
                    set.difference(f).collect::<Vec<_>>()
                ),
            };
            wrong.push((krate.clone(), Some(c.clone()), why));
        }
    }
    for (krate, f) in &known {
        let overlaps = found
            .get(krate)
            .into_iter()
            .flatten()
            .any(|c| c.iter().any(|x| f.contains(x)));
        if !overlaps {
            let why = format!("a circle listed in KNOWN_CIRCLES is gone, take it out: {f:?}");
            wrong.push((krate.clone(), None, why));
        }
    }
    wrong
}

#[test]
fn no_import_circle_of_more_than_two_files() {
    let mut found = BTreeMap::new();
    let mut graphs = BTreeMap::new();
    for (krate, _, targets) in crates() {
        for g in targets {
            let circles: Vec<Vec<String>> = components(&adjacency(&g))
                .into_iter()
                .filter(|c| c.len() > 1)
                .collect();
            // Every circle, pairs too: shown with --nocapture, and beside a failure.
            for c in &circles {
                eprintln!("{krate}: circle of {}: {}", c.len(), c.join(", "));
            }
            let big = circles.into_iter().filter(|c| c.len() > 2);
            found
                .entry(krate.clone())
                .or_insert_with(Vec::new)
                .extend(big);
            graphs.entry(krate.clone()).or_insert_with(Vec::new).push(g);
        }
    }
    let wrong = ratchet(&found, KNOWN_CIRCLES);
    let mut report = String::new();
    for (krate, circle, why) in &wrong {
        let _ = writeln!(report, "{why}");
        if let Some(c) = circle {
            let g = graphs[krate]
                .iter()
                .find(|g| g.edges.contains_key(&c[0]))
                .unwrap();
            let _ = writeln!(report, "{}", describe(krate, g, c));
        } else {
            let _ = writeln!(report, "in {krate}\n");
        }
    }
    assert!(
        wrong.is_empty(),
        "files that import one another in a circle:\n\n{report}"
    );
}

/// The walk misses no file: each `.rs` under a target's directory is one of its modules
/// or a test module's file.
#[test]
fn every_source_file_is_read() {
    for (krate, dir, targets) in crates() {
        let mut reached = BTreeSet::new();
        for g in &targets {
            reached.extend(g.modules.values().cloned());
            reached.extend(g.test_files.iter().cloned());
        }
        let mut stack = vec![dir.join("src")];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    let rel = p.strip_prefix(&dir).unwrap().to_string_lossy().into_owned();
                    assert!(
                        reached.contains(&rel),
                        "{krate}: {rel} is not reached from a crate root"
                    );
                }
            }
        }
        let files: usize = targets.iter().map(|g| g.edges.len()).sum();
        assert!(files > 0, "{krate}: no files read");
    }
}

#[test]
fn nfs_v41_borrows_nothing_from_the_nfsv3_mount_module() {
    let (_, _, graphs) = crates()
        .into_iter()
        .find(|(k, ..)| k == "dbio-nfs")
        .expect("dbio-nfs");
    for g in graphs {
        for (from, to) in &g.edges {
            if let (true, Some(sites)) = (from.starts_with("src/v41/"), to.get("src/mount.rs")) {
                panic!("{from} imports NFSv3's mount module: {sites:?}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Layers.

/// A crate's dependencies on crates of ours (not dev-dependencies: tests may use anything).
fn our_dependencies(manifest: &toml::Table) -> Vec<String> {
    let mut tables: Vec<&toml::Value> = ["dependencies", "build-dependencies"]
        .iter()
        .filter_map(|k| manifest.get(*k))
        .collect();
    for target in manifest
        .get("target")
        .and_then(|t| t.as_table())
        .into_iter()
        .flat_map(|t| t.values())
    {
        tables.extend(
            ["dependencies", "build-dependencies"]
                .iter()
                .filter_map(|k| target.get(*k)),
        );
    }
    let mut out = Vec::new();
    for table in tables.iter().filter_map(|t| t.as_table()) {
        for (key, value) in table {
            let name = value.get("package").and_then(|p| p.as_str()).unwrap_or(key);
            if name.starts_with("dbio-") {
                out.push(name.to_string());
            }
        }
    }
    out
}

#[test]
fn dependencies_run_down_the_layers() {
    let layer = |name: &str| LAYERS.iter().find(|(n, _)| *n == name).map(|(_, l)| *l);
    let members = members();
    let mut wrong = Vec::new();
    for (name, _) in LAYERS {
        if !members.iter().any(|(m, _)| m == name) {
            wrong.push(format!("{name} is in LAYERS but not a workspace member"));
        }
    }
    for (name, dir) in &members {
        let Some(own) = layer(name) else {
            wrong.push(format!("{name} has no layer: place it in LAYERS"));
            continue;
        };
        let never = NEVER
            .iter()
            .filter(|(n, _)| n == name)
            .flat_map(|(_, d)| d.iter());
        let never: Vec<&&str> = never.collect();
        for dep in our_dependencies(&toml_of(&dir.join("Cargo.toml"))) {
            match layer(&dep) {
                None => wrong.push(format!("{name} depends on {dep}, which has no layer")),
                Some(l) if l >= own => wrong.push(format!(
                    "{name} (layer {own}) depends on {dep} (layer {l}): dependencies run down"
                )),
                Some(_) if never.iter().any(|n| **n == dep) => wrong.push(format!(
                    "{name} depends on {dep}, which ARCHITECTURE.md rules out"
                )),
                Some(_) => {}
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn tarjan_and_the_ratchet() {
    let c = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let found = BTreeMap::from([("k".to_string(), vec![c(&["a", "b", "c"])])]);
    assert!(ratchet(&found, &[("k", &["a", "b", "c"])]).is_empty());
    let grew = ratchet(&found, &[("k", &["a", "b"])]);
    assert!(grew[0].2.contains("grew"), "{grew:?}");
    let shrank = ratchet(&found, &[("k", &["a", "b", "c", "d"])]);
    assert!(shrank[0].2.contains("shrank, lost [\"d\"]"), "{shrank:?}");
    let new = ratchet(&found, &[]);
    assert!(new[0].2.contains("not in KNOWN_CIRCLES"), "{new:?}");
    let gone = ratchet(&BTreeMap::new(), &[("k", &["a", "b", "c"])]);
    assert!(gone[0].2.contains("is gone"), "{gone:?}");
    let mut g = BTreeMap::new();
    for (a, b) in [
        ("x", "y"),
        ("y", "z"),
        ("z", "x"),
        ("p", "q"),
        ("q", "p"),
        ("q", "x"),
    ] {
        g.entry(a.to_string())
            .or_insert_with(BTreeSet::new)
            .insert(b.to_string());
    }
    assert_eq!(components(&g), [c(&["x", "y", "z"]), c(&["p", "q"])]);
}
