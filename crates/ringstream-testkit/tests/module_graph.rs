//! The modules of each library form a DAG: no module imports, directly or
//! through others, a module that imports it (issue 34: a reader follows a
//! request from the module that defines each thing, never back up a hub).
//!
//! The check reads the sources: every `use` of every file (and of the
//! inline modules in it) is resolved to the module that defines the item,
//! following re-exports (`pub use`), so importing `crate::Error` depends on
//! `error`, where it is defined, not on the crate root that re-exports it.
//! A module that re-exports its children's items and has a child importing
//! an item defined in the module itself is a cycle: move the item into a
//! module of its own. Strongly connected components of more than one
//! module are reported, with one import of each edge, where it is written.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The libraries, whose modules must form a DAG (the CLI's demo app, a
/// binary's module tree, is not checked).
const CRATES: [&str; 3] = ["ringstream-core", "ringstream-embedded", "ringstream"];

#[test]
fn library_modules_form_a_dag() {
    let mut failures = Vec::new();
    for name in CRATES {
        let graph = Graph::of_crate(&crates_dir().join(name).join("src"));
        let cycles = graph.cycles();
        for cycle in cycles {
            let mut report = format!("{name}: a cycle among {} modules:\n", cycle.len());
            for (from, to, at) in graph.edges_within(&cycle) {
                report.push_str(&format!("  {from} -> {to}  ({at})\n"));
            }
            failures.push(report);
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// The checker itself: a child that imports an item of its parent, which
/// re-exports the child, is a cycle; an item moved out of the parent ends
/// it; an import of a re-exported item counts against the module that
/// defines it.
#[test]
fn the_checker_finds_cycles_and_follows_re_exports() {
    let files = |parent: &str| {
        vec![
            (
                "lib.rs".to_owned(),
                "pub mod a;\npub use a::Thing;\n".to_owned(),
            ),
            (
                "a/mod.rs".to_owned(),
                format!("mod b;\npub use b::Thing;\n{parent}"),
            ),
            (
                "a/b.rs".to_owned(),
                "use super::Shared;\nuse crate::Thing as T;\npub struct Thing;\n".to_owned(),
            ),
        ]
    };
    let cyclic = Graph::of_files(files("pub struct Shared;\n"));
    assert_eq!(
        cyclic.cycles(),
        vec![BTreeSet::from([
            "crate::a".to_owned(),
            "crate::a::b".to_owned()
        ])]
    );
    let acyclic = Graph::of_files(
        files("mod shared;\npub use shared::Shared;\n")
            .into_iter()
            .chain([("a/shared.rs".to_owned(), "pub struct Shared;\n".to_owned())]),
    );
    assert!(acyclic.cycles().is_empty(), "{:?}", acyclic.cycles());
}

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One module's imports and re-exports.
#[derive(Default, Debug)]
struct Module {
    /// The paths it imports (absolute module paths with the item), with
    /// where each `use` is written.
    imports: Vec<(Vec<String>, String)>,
    /// Names it re-exports, and the path each comes from (empty for another
    /// crate's item).
    re_exports: BTreeMap<String, Vec<String>>,
}

#[derive(Debug)]
struct Graph {
    modules: BTreeMap<String, Module>,
    /// Edges: module → (module it depends on → where).
    edges: BTreeMap<String, BTreeMap<String, String>>,
}

impl Graph {
    fn of_crate(src: &Path) -> Graph {
        let mut files = Vec::new();
        collect(src, src, &mut files);
        Graph::of_files(files)
    }

    /// The graph of a crate given as (path under `src/`, source) pairs.
    fn of_files(files: impl IntoIterator<Item = (String, String)>) -> Graph {
        let mut modules = BTreeMap::new();
        for (rel, source) in files {
            let module = file_module(&rel);
            scan(&strip(&source), &module, &rel, &mut modules);
        }
        let mut graph = Graph {
            modules,
            edges: BTreeMap::new(),
        };
        graph.resolve();
        graph
    }

    fn resolve(&mut self) {
        let mut edges: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (name, module) in &self.modules {
            for (path, at) in &module.imports {
                let Some(target) = self.defining_module(path, 0) else {
                    continue;
                };
                if &target != name {
                    edges
                        .entry(name.clone())
                        .or_default()
                        .entry(target)
                        .or_insert_with(|| at.clone());
                }
            }
        }
        self.edges = edges;
    }

    /// The module that defines the item `path` names (following
    /// re-exports), or `None` for another crate's item.
    fn defining_module(&self, path: &[String], depth: usize) -> Option<String> {
        if depth > 16 || path.first().map(String::as_str) != Some("crate") {
            return None;
        }
        // The longest prefix that is a module of this crate.
        let mut module = "crate".to_owned();
        let mut rest = &path[1..];
        while let Some(segment) = rest.first() {
            let child = format!("{module}::{segment}");
            if !self.modules.contains_key(&child) {
                break;
            }
            module = child;
            rest = &rest[1..];
        }
        // An item re-exported by that module: where it comes from.
        if let Some(item) = rest.first() {
            if let Some(source) = self
                .modules
                .get(&module)
                .and_then(|m| m.re_exports.get(item))
            {
                if source.is_empty() {
                    return None;
                }
                let mut resolved = source.clone();
                resolved.extend(rest[1..].iter().cloned());
                if let Some(found) = self.defining_module(&resolved, depth + 1) {
                    return Some(found);
                }
            }
        }
        Some(module)
    }

    /// Strongly connected components with more than one module.
    fn cycles(&self) -> Vec<BTreeSet<String>> {
        let nodes: Vec<&String> = self.modules.keys().collect();
        let index: BTreeMap<&String, usize> =
            nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let adjacency: Vec<Vec<usize>> = nodes
            .iter()
            .map(|n| {
                self.edges
                    .get(*n)
                    .map(|to| to.keys().filter_map(|t| index.get(t).copied()).collect())
                    .unwrap_or_default()
            })
            .collect();
        let components = tarjan(&adjacency);
        components
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| c.into_iter().map(|i| nodes[i].clone()).collect())
            .collect()
    }

    fn edges_within(&self, cycle: &BTreeSet<String>) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        for from in cycle {
            for (to, at) in self.edges.get(from).into_iter().flatten() {
                if cycle.contains(to) {
                    out.push((from.clone(), to.clone(), at.clone()));
                }
            }
        }
        out
    }
}

/// Tarjan's algorithm, iterative enough for a crate's few hundred modules.
fn tarjan(adjacency: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        adjacency: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        components: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State<'_>, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &s.adjacency[v] {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            s.components.push(component);
        }
    }
    let n = adjacency.len();
    let mut s = State {
        adjacency,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        components: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.components
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(root, &path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            files.push((rel, fs::read_to_string(&path).unwrap()));
        }
    }
}

/// `a/b.rs` and `a/b/mod.rs` are `crate::a::b`; `lib.rs` is `crate`.
fn file_module(rel: &str) -> Vec<String> {
    let rel = rel.strip_suffix(".rs").unwrap();
    let mut parts: Vec<String> = rel.split('/').map(str::to_owned).collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    let mut module = vec!["crate".to_owned()];
    module.extend(parts);
    module
}

/// The source without comments, string and character literals (their
/// text replaced by nothing), so that braces and `use` are code.
fn strip(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &source[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |e| e + 2);
        } else if let Some(len) = raw_string_len(rest) {
            out.push_str("\"\"");
            i += len;
        } else if rest.starts_with('"') {
            let mut j = 1;
            while j < rest.len() {
                match rest.as_bytes()[j] {
                    b'\\' => j += 2,
                    b'"' => break,
                    _ => j += 1,
                }
            }
            out.push_str("\"\"");
            i += j + 1;
        } else if rest.starts_with('\'') && char_literal_len(rest).is_some() {
            out.push_str("' '");
            i += char_literal_len(rest).unwrap();
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The length of a raw string literal (`r"…"`, `r#"…"#`, `br"…"`) at the
/// start of `s`.
fn raw_string_len(s: &str) -> Option<usize> {
    let start = if s.starts_with("br") {
        2
    } else if s.starts_with('r') {
        1
    } else {
        return None;
    };
    let hashes = s[start..].bytes().take_while(|&b| b == b'#').count();
    if s.as_bytes().get(start + hashes) != Some(&b'"') {
        return None;
    }
    let close = format!("\"{}", "#".repeat(hashes));
    let body = start + hashes + 1;
    s[body..].find(&close).map(|e| body + e + close.len())
}

/// The length of a character literal at the start of `s` (not a
/// lifetime).
fn char_literal_len(s: &str) -> Option<usize> {
    let mut chars = s.char_indices().skip(1);
    let (_, c) = chars.next()?;
    if c == '\\' {
        let end = s[2..].find('\'')?;
        return Some(2 + end + 1);
    }
    let (i, next) = chars.next()?;
    (next == '\'').then_some(i + 1)
}

/// Reads the `use` statements and inline modules of one file.
fn scan(code: &str, file_module: &[String], rel: &str, modules: &mut BTreeMap<String, Module>) {
    // The module stack: the file's module, then inline `mod x { … }`s,
    // each with the brace depth at which it closes.
    let mut stack: Vec<(Vec<String>, usize)> = vec![(file_module.to_vec(), 0)];
    modules.entry(file_module.join("::")).or_default();
    let mut depth = 0usize;
    let mut line = 1;
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'\n' {
            line += 1;
        }
        let at_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if c == b'{' {
            depth += 1;
        } else if c == b'}' {
            depth = depth.saturating_sub(1);
            while stack.len() > 1 && stack.last().is_some_and(|(_, d)| *d > depth) {
                stack.pop();
            }
        } else if at_word && code[i..].starts_with("mod ") {
            let rest = &code[i + 4..];
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let after = rest.trim_start()[name.len()..].trim_start();
            let mut module = stack.last().unwrap().0.clone();
            module.push(name);
            modules.entry(module.join("::")).or_default();
            if after.starts_with('{') {
                stack.push((module, depth + 1));
            }
        } else if at_word && code[i..].starts_with("use ") {
            let end = code[i..].find(';').map_or(code.len(), |e| i + e);
            let statement = &code[i + 4..end];
            let public = code[..i].trim_end().ends_with("pub")
                || code[..i].trim_end().ends_with(')') && code[..i].trim_end().ends_with("(crate)");
            let current = stack.last().unwrap().0.clone();
            let at = format!("{rel}:{line}");
            let module = modules.entry(current.join("::")).or_default();
            for (path, alias) in expand(statement) {
                let Some(absolute) = absolute(&path, &current) else {
                    // Another crate's item, re-exported: importing it from
                    // here depends on no module of this crate.
                    if public {
                        if let Some(name) = alias.or_else(|| path.last().cloned()) {
                            module.re_exports.insert(name, Vec::new());
                        }
                    }
                    continue;
                };
                if public {
                    let name = alias.unwrap_or_else(|| path.last().cloned().unwrap_or_default());
                    if name != "*" && name != "self" {
                        module.re_exports.insert(name, absolute.clone());
                    }
                }
                module.imports.push((absolute, at.clone()));
            }
            line += code[i..end].matches('\n').count();
            i = end;
            continue;
        }
        i += 1;
    }
}

/// The absolute path of an import written in `current`: `crate::`,
/// `self::`, `super::` and child-module paths; `None` for other crates.
fn absolute(path: &[String], current: &[String]) -> Option<Vec<String>> {
    let first = path.first()?;
    let mut base: Vec<String>;
    let mut rest = path;
    match first.as_str() {
        "crate" => {
            base = vec!["crate".to_owned()];
            rest = &path[1..];
        }
        "self" => {
            base = current.to_vec();
            rest = &path[1..];
        }
        "super" => {
            base = current.to_vec();
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        // Other crates and the prelude's roots.
        "core" | "std" | "alloc" | "embassy_time" | "embassy_net" | "embedded_io_async" => {
            return None
        }
        name if name.contains(char::is_uppercase) || name.starts_with("ringstream") => return None,
        // A child module of the current one (2018 paths); other crates'
        // names fall through and resolve to nothing of this crate.
        _ => base = current.to_vec(),
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The paths a `use` tree names, each with its alias.
fn expand(tree: &str) -> Vec<(Vec<String>, Option<String>)> {
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = Vec::new();
    expand_into(tree.trim().trim_start_matches("::"), &[], &mut out);
    out
}

fn expand_into(tree: &str, prefix: &[String], out: &mut Vec<(Vec<String>, Option<String>)>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim().trim_end_matches("::");
        let mut base = prefix.to_vec();
        base.extend(
            head.split("::")
                .filter(|s| !s.is_empty())
                .map(|s| s.trim().to_owned()),
        );
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        for part in split_top(inner) {
            if part.trim() == "self" {
                out.push((base.clone(), None));
            } else if !part.trim().is_empty() {
                expand_into(part, &base, out);
            }
        }
        return;
    }
    let (path, alias) = match tree.split_once(" as ") {
        Some((p, a)) => (p.trim(), Some(a.trim().to_owned())),
        None => (tree, None),
    };
    let mut full = prefix.to_vec();
    full.extend(
        path.split("::")
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty()),
    );
    if full.last().map(String::as_str) == Some("self") {
        full.pop();
    }
    if !full.is_empty() {
        out.push((full, alias));
    }
}

/// Splits on the commas outside braces.
fn split_top(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}
