//! Reads a crate target into a graph of its files: which file names which.
//!
//! The module tree is followed from the root file through `mod` items (`#[path]`
//! included), as the compiler does. Then every path a file writes is resolved from the
//! file's module (`crate::`, `super::`, `self::`, or a child module's name first):
//! `use` trees with their groups, renames and globs, `pub use` re-exports, paths in
//! expressions, types, patterns and trait bounds, and `a::b` runs in macro bodies
//! (`$crate::` too). A path is an edge to the file of the module that defines what it
//! names: its longest prefix that is a module, followed through that module's `use`
//! items when the next segment is imported there rather than defined. So a parent (or
//! the crate root) that only re-exports closes no circle for those who import through
//! it, while one that defines what its children use, and uses or re-exports them, does.
//! The `mod x;` that declares a child is no edge. Items only compiled for tests
//! (`#[cfg(test)]`, `#[test]`) are left out: test code may import anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{Spacing, Span, TokenStream, TokenTree};
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Attribute, Expr, ImplItem, Item, Lit, Meta, UseTree};

/// Where a path that makes an edge is written.
#[derive(Clone, Debug)]
pub struct Site {
    pub line: usize,
    pub path: String,
}

/// What a module defines and imports, to follow a path through `use` (a re-export or a
/// private import) to the module that defines its item.
#[derive(Default)]
struct Scope {
    defined: BTreeSet<String>,
    /// A name brought in by `use`, to the absolute path it names (None: another crate).
    imported: BTreeMap<String, Option<Vec<String>>>,
    globs: Vec<Vec<String>>,
}

/// One crate target's files and the edges between them (files relative to the package
/// directory, such as `src/conn.rs`).
#[derive(Default)]
pub struct Graph {
    /// Module path (`""` the root, `"a::b"`) to the file that holds it.
    pub modules: BTreeMap<String, String>,
    scopes: BTreeMap<String, Scope>,
    /// Files reached only through test modules.
    pub test_files: BTreeSet<String>,
    pub edges: BTreeMap<String, BTreeMap<String, Vec<Site>>>,
}

pub type Read<'a> = &'a dyn Fn(&Path) -> Option<String>;

struct Loader<'a> {
    read: Read<'a>,
    package: PathBuf,
    graph: Graph,
    /// Each non-test file with its module path and syntax tree.
    files: Vec<(String, Vec<String>, syn::File)>,
}

impl Loader<'_> {
    /// Reads `file` as module `module`; `children` is where its `mod x;` files live.
    fn file(&mut self, file: &Path, module: Vec<String>, children: PathBuf, test: bool) {
        let text = (self.read)(file).unwrap_or_else(|| panic!("{} not found", file.display()));
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let rel = file.strip_prefix(&self.package).unwrap_or(file);
        let rel = rel.to_string_lossy().into_owned();
        if test {
            self.graph.test_files.insert(rel.clone());
        } else {
            self.graph.modules.insert(module.join("::"), rel.clone());
        }
        let dir = file.parent().expect("a file has a directory").to_path_buf();
        self.declarations(&ast.items, &module, &children, &dir, &rel, test);
        if !test {
            self.files.push((rel, module, ast));
        }
    }

    /// Follows the `mod` items of `items`; `#[path]` is relative to `path_base`.
    fn declarations(
        &mut self,
        items: &[Item],
        module: &[String],
        children: &Path,
        path_base: &Path,
        rel: &str,
        test: bool,
    ) {
        for item in items {
            let Item::Mod(m) = item else { continue };
            let test = test || test_only(&m.attrs);
            let name = m.ident.to_string();
            let child = [module, std::slice::from_ref(&name)].concat();
            if let Some((_, inner)) = &m.content {
                // An inline module belongs to its file's node.
                if !test {
                    self.graph.modules.insert(child.join("::"), rel.to_string());
                }
                let dir = children.join(&name);
                self.declarations(inner, &child, &dir, &dir, rel, test);
            } else if let Some(p) = path_attr(&m.attrs) {
                // A file named by #[path] is read like a mod.rs.
                let file = path_base.join(p);
                let dir = file.parent().expect("a directory").to_path_buf();
                self.file(&file, child, dir, test);
            } else if (self.read)(&children.join(format!("{name}.rs"))).is_some() {
                let file = children.join(format!("{name}.rs"));
                self.file(&file, child, children.join(&name), test);
            } else {
                let dir = children.join(&name);
                self.file(&dir.join("mod.rs"), child, dir, test);
            }
        }
    }

    /// What the modules of `items` define and import.
    fn scopes(&mut self, items: &[Item], module: &[String]) {
        for item in items.iter().filter(|i| !test_only(item_parts(i).0)) {
            match item {
                Item::Use(u) => {
                    let mut leaves = Vec::new();
                    use_leaves(&u.tree, &mut Vec::new(), &mut leaves);
                    let scope = self.graph.scopes.entry(module.join("::")).or_default();
                    for (path, name, _) in leaves {
                        let target = absolute(&self.graph.modules, module, &path);
                        match name {
                            Some(name) => drop(scope.imported.insert(name, target)),
                            None => scope.globs.extend(target),
                        }
                    }
                }
                Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        self.scopes(inner, &[module, &[m.ident.to_string()]].concat());
                    }
                }
                _ => {
                    if let Some(name) = item_parts(item).1 {
                        let scope = self.graph.scopes.entry(module.join("::")).or_default();
                        scope.defined.insert(name.to_string());
                    }
                }
            }
        }
    }
}

/// The graph of the crate target whose root file is `root` (lib.rs or main.rs).
pub fn load(package: &Path, root: &Path, read: Read) -> Graph {
    let mut loader = Loader {
        read,
        package: package.to_path_buf(),
        graph: Graph::default(),
        files: Vec::new(),
    };
    let dir = root.parent().expect("a directory").to_path_buf();
    loader.file(root, Vec::new(), dir, false);
    let files = std::mem::take(&mut loader.files);
    for (_, module, ast) in &files {
        loader.scopes(&ast.items, module);
    }
    let mut graph = loader.graph;
    for (rel, module, ast) in &files {
        let mut paths = Paths {
            graph: &graph,
            file: rel,
            stack: module.clone(),
            found: Vec::new(),
        };
        paths.visit_file(ast);
        let found = paths.found;
        let from = graph.edges.entry(rel.clone()).or_default();
        for (to, site) in found {
            from.entry(to).or_default().push(site);
        }
    }
    graph
}

/// True for items compiled only in tests: `#[test]`, `#[cfg(test)]`, `#[cfg(all(test, ..))]`.
fn test_only(attrs: &[Attribute]) -> bool {
    fn cfg_test(meta: &Meta) -> bool {
        let nested = |l: &syn::MetaList| -> Vec<Meta> {
            l.parse_args_with(Punctuated::<Meta, syn::Token![,]>::parse_terminated)
                .map(|p| p.into_iter().collect())
                .unwrap_or_default()
        };
        match meta {
            Meta::Path(p) => p.is_ident("test"),
            Meta::List(l) if l.path.is_ident("all") => nested(l).iter().any(cfg_test),
            Meta::List(l) if l.path.is_ident("any") => {
                let n = nested(l);
                !n.is_empty() && n.iter().all(cfg_test)
            }
            _ => false,
        }
    }
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg") && a.parse_args::<Meta>().is_ok_and(|m| cfg_test(&m)))
    })
}

fn path_attr(attrs: &[Attribute]) -> Option<String> {
    let attr = attrs.iter().find(|a| a.path().is_ident("path"))?;
    match &attr.meta {
        Meta::NameValue(syn::MetaNameValue {
            value: Expr::Lit(syn::ExprLit {
                lit: Lit::Str(s), ..
            }),
            ..
        }) => Some(s.value()),
        _ => None,
    }
}

/// An item's attributes and the name it defines in its module's namespace.
fn item_parts(item: &Item) -> (&[Attribute], Option<&syn::Ident>) {
    match item {
        Item::Const(i) => (&i.attrs, Some(&i.ident)),
        Item::Enum(i) => (&i.attrs, Some(&i.ident)),
        Item::ExternCrate(i) => (&i.attrs, None),
        Item::Fn(i) => (&i.attrs, Some(&i.sig.ident)),
        Item::ForeignMod(i) => (&i.attrs, None),
        Item::Impl(i) => (&i.attrs, None),
        Item::Macro(i) => (&i.attrs, None),
        Item::Mod(i) => (&i.attrs, None),
        Item::Static(i) => (&i.attrs, Some(&i.ident)),
        Item::Struct(i) => (&i.attrs, Some(&i.ident)),
        Item::Trait(i) => (&i.attrs, Some(&i.ident)),
        Item::TraitAlias(i) => (&i.attrs, Some(&i.ident)),
        Item::Type(i) => (&i.attrs, Some(&i.ident)),
        Item::Union(i) => (&i.attrs, Some(&i.ident)),
        Item::Use(i) => (&i.attrs, None),
        _ => (&[], None),
    }
}

/// The paths a `use` tree names, each with the name it binds (None for a glob) and
/// where it is written: `a::{self as b, c::*}` gives `a` as `b` and the glob `a::c`.
fn use_leaves(
    tree: &UseTree,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>, Span)>,
) {
    let mut leaf = |ident: &syn::Ident, bound: &syn::Ident| {
        let mut path = prefix.clone();
        if ident != "self" {
            path.push(ident.to_string());
        }
        let name = if bound == "self" {
            path.last().cloned()
        } else {
            Some(bound.to_string())
        };
        out.push((path, name, ident.span()));
    };
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_leaves(&p.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(n) => leaf(&n.ident, &n.ident),
        UseTree::Rename(r) => leaf(&r.ident, &r.rename),
        UseTree::Glob(g) => out.push((prefix.clone(), None, g.star_token.spans[0])),
        UseTree::Group(g) => g.items.iter().for_each(|t| use_leaves(t, prefix, out)),
    }
}

/// The absolute module path `segments` names from module `here`, if it starts with
/// `crate`, `self`, `super` or the name of a child module of `here`.
fn absolute(
    modules: &BTreeMap<String, String>,
    here: &[String],
    segments: &[String],
) -> Option<Vec<String>> {
    let mut path = here.to_vec();
    let rest = match segments.first()?.as_str() {
        "crate" => {
            path.clear();
            &segments[1..]
        }
        "self" => &segments[1..],
        "super" => {
            let ups = segments.iter().take_while(|s| *s == "super").count();
            path.truncate(path.len().checked_sub(ups)?);
            &segments[ups..]
        }
        first => {
            let child = [here, &[first.to_string()]].concat().join("::");
            modules.contains_key(&child).then_some(())?;
            segments
        }
    };
    path.extend(rest.iter().cloned());
    Some(path)
}

/// The module that defines what an absolute path names: its longest prefix that is a
/// module, followed through that module's `use` items (re-exports, globs) when the next
/// segment is imported there, not defined. None for an item of another crate; the bool
/// says whether the item was found defined (globs are tried only for that).
fn owner(g: &Graph, path: &[String], depth: usize) -> Option<(String, bool)> {
    let k = (0..=path.len())
        .rev()
        .find(|&n| g.modules.contains_key(&path[..n].join("::")))?;
    let module = path[..k].join("::");
    let (Some(next), Some(scope)) = (path.get(k), g.scopes.get(&module)) else {
        return Some((module, true));
    };
    if scope.defined.contains(next) || depth > 16 {
        return Some((module, true));
    }
    if let Some(target) = scope.imported.get(next) {
        let through = [target.as_deref()?, &path[k + 1..]].concat();
        return owner(g, &through, depth + 1).or(Some((module, false)));
    }
    for glob in &scope.globs {
        if let Some((m, true)) = owner(g, &[glob, &path[k..]].concat(), depth + 1) {
            return Some((m, true));
        }
    }
    Some((module, false))
}

/// Collects the paths one file names into other files of its crate.
struct Paths<'g> {
    graph: &'g Graph,
    file: &'g str,
    /// The module the visitor is in (the file's, then inline modules).
    stack: Vec<String>,
    found: Vec<(String, Site)>,
}

impl Paths<'_> {
    fn note(&mut self, segments: Vec<String>, span: Span) {
        let Some(path) = absolute(&self.graph.modules, &self.stack, &segments) else {
            return;
        };
        let Some((module, _)) = owner(self.graph, &path, 0) else {
            return;
        };
        let to = &self.graph.modules[&module];
        if to != self.file {
            let site = Site {
                line: span.start().line,
                path: segments.join("::"),
            };
            self.found.push((to.clone(), site));
        }
    }

    /// Paths in a macro's tokens: `a::b::c` runs (also `$crate::a`), in every group.
    fn tokens(&mut self, stream: TokenStream) {
        let tokens: Vec<TokenTree> = stream.into_iter().collect();
        let colons = |i: usize| {
            matches!(tokens.get(i), Some(TokenTree::Punct(p)) if p.as_char() == ':' && p.spacing() == Spacing::Joint)
                && matches!(tokens.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == ':')
        };
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Group(g) => self.tokens(g.stream()),
                // The tail of a path that starts elsewhere (`<T>::x`, `::std::x`).
                TokenTree::Ident(_) if i >= 2 && colons(i - 2) => {}
                TokenTree::Ident(first) => {
                    let mut segments = vec![first.to_string()];
                    while colons(i + 1) {
                        let Some(TokenTree::Ident(next)) = tokens.get(i + 3) else {
                            break;
                        };
                        segments.push(next.to_string());
                        i += 3;
                    }
                    if segments.len() >= 2 {
                        self.note(segments, first.span());
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
}

impl<'ast> Visit<'ast> for Paths<'_> {
    fn visit_item(&mut self, item: &'ast Item) {
        if !test_only(item_parts(item).0) {
            visit::visit_item(self, item);
        }
    }

    fn visit_impl_item(&mut self, item: &'ast ImplItem) {
        let attrs = match item {
            ImplItem::Const(i) => &i.attrs,
            ImplItem::Fn(i) => &i.attrs,
            ImplItem::Type(i) => &i.attrs,
            ImplItem::Macro(i) => &i.attrs,
            _ => return visit::visit_impl_item(self, item),
        };
        if !test_only(attrs) {
            visit::visit_impl_item(self, item);
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        // A file module is read from its own file; an inline one here.
        if let Some((_, items)) = &m.content {
            self.stack.push(m.ident.to_string());
            items.iter().for_each(|item| self.visit_item(item));
            self.stack.pop();
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut leaves = Vec::new();
        use_leaves(&u.tree, &mut Vec::new(), &mut leaves);
        for (path, _, span) in leaves {
            self.note(path, span);
        }
    }

    // `pub(crate)`, `pub(super)`, `pub(in crate::a)` say who may see, not what is used.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.segments.len() >= 2 {
            let segments = path.segments.iter().map(|s| s.ident.to_string()).collect();
            self.note(segments, path.segments[0].ident.span());
        }
        visit::visit_path(self, path);
    }

    // Attributes' arguments are tokens too (`#[error("{}", saved::KINDS)]`).
    fn visit_attribute(&mut self, attr: &'ast Attribute) {
        if let Meta::List(list) = &attr.meta {
            self.tokens(list.tokens.clone());
        }
        visit::visit_attribute(self, attr);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        self.tokens(m.tokens.clone());
    }
}

#[test]
fn the_reader_sees_every_kind_of_path() {
    let files: BTreeMap<PathBuf, &str> = [
        (
            "src/lib.rs",
            "mod a; mod b; pub mod c; #[path = \"dd.rs\"] mod d;\n#[cfg(test)] mod tests;\n\
             pub use a::A; pub use c::*;\npub struct Root;",
        ),
        (
            "src/a.rs",
            "mod inner { pub fn f() { super::super::c::g() } }\n\
             use crate::b::{self as bee, x::{Y, Z as W}};\npub struct A;",
        ),
        ("src/b/mod.rs", "pub mod x;\nfn f() -> Option<crate::d::T> { format!(\"{}\", crate::K); None }"),
        (
            "src/b/x.rs",
            "use super::*;\npub struct Y; pub struct Z;\n#[cfg(test)]\nuse crate::a::A;\n\
             fn r() -> crate::Root { crate::Root }\npub(super) fn s() -> std::io::Result<()> { Ok(()) }",
        ),
        (
            "src/c.rs",
            "pub const K: u8 = 1; pub fn g() {}\nfn h(v: self::K) { match v { crate::b::x::Y => {} } }\n\
             fn i() -> crate::A { todo!() }",
        ),
        (
            "src/dd.rs",
            "pub struct T;\n#[test]\nfn t() { crate::a::A; }\nmacro_rules! m { () => { $crate::b::x::Y } }\n\
             #[doc = \"crate::a::A\"]\n#[error(\"{}\", crate::c::K)]\nstruct E;",
        ),
        ("src/tests.rs", "use crate::c::K;"),
    ]
    .into_iter()
    .map(|(p, t)| (PathBuf::from("/k").join(p), t))
    .collect();
    let read: Read = &|p: &Path| files.get(p).map(|t| t.to_string());
    let g = load(Path::new("/k"), Path::new("/k/src/lib.rs"), read);
    let mut edges = BTreeSet::new();
    for (from, to) in &g.edges {
        for (to, sites) in to {
            edges.extend(sites.iter().map(|s| (from.clone(), to.clone(), s.line)));
        }
    }
    let want: BTreeSet<(String, String, usize)> = [
        ("lib", "a", 3),     // pub use a::A; the `mod` lines are no edges
        ("lib", "c", 3),     // a glob re-export
        ("a", "c", 1),       // super::super from inside an inline module
        ("a", "b/mod", 2),   // `self as bee`
        ("a", "b/x", 2),     // a nested group, a rename
        ("b/mod", "dd", 2),  // a type's generic argument, through #[path]
        ("b/mod", "c", 2),   // in a macro's tokens, through the root's glob re-export
        ("b/x", "b/mod", 1), // a glob of the parent
        ("b/x", "lib", 5),   // an item the root defines (type and expression)
        ("c", "b/x", 2),     // a pattern; `self::K` stays in c.rs
        ("c", "a", 3),       // through the root's re-export to where A is defined
        ("dd", "b/x", 4),    // $crate in macro_rules; the #[test] fn is left out
        ("dd", "c", 6),      // an attribute's arguments; not a string in #[doc]
    ]
    .into_iter()
    .map(|(f, t, l)| (format!("src/{f}.rs"), format!("src/{t}.rs"), l))
    .collect();
    assert_eq!(edges, want);
    assert_eq!(g.test_files, BTreeSet::from(["src/tests.rs".to_string()]));
}
