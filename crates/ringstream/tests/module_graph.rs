//! The modules of `server/` and `error/` import one another without a
//! cycle (issue 34: a reader follows one request through `server/` from
//! the file that defines each thing, never back up a hub).
//!
//! A text scan of the sources, which needs no tool beyond Cargo: every
//! `use` path and every `crate::` / `super::` path in code (comments and
//! `#[cfg(test)] mod tests` left out) is an edge from its file's module
//! to the deepest module the path names. A module's declaration of its
//! children is not an edge; its `use` of them is.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

type Module = Vec<String>;

/// Every module of the crate, by its path from the crate root, and its
/// source.
fn modules(root: &Path) -> BTreeMap<Module, String> {
    let mut found = BTreeMap::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|ext| ext != "rs") {
                continue;
            }
            let relative = path.strip_prefix(root).unwrap().with_extension("");
            let mut module: Module = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            found.insert(module, fs::read_to_string(&path).unwrap());
        }
    }
    found
}

/// The code of a source file: without comments and unit tests.
fn code(source: &str) -> String {
    let source = match source.find("#[cfg(test)]\nmod tests") {
        Some(at) => &source[..at],
        None => source,
    };
    source
        .lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths of a use tree: `a::{b, c::{d, self}}` is `a::b`, `a::c::d`
/// and `a::c`.
fn expand(tree: &str) -> Vec<String> {
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let tree = tree.trim();
    let Some(open) = tree.find("::{") else {
        let path = tree.split(" as ").next().unwrap_or(tree);
        return vec![path.trim().to_owned()];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 3..tree.len() - 1];
    let (mut parts, mut depth, mut current) = (Vec::new(), 0, String::new());
    for ch in inner.chars() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(ch);
    }
    parts.push(current);
    let mut paths = Vec::new();
    for part in parts.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
        for path in expand(part) {
            if path == "self" {
                paths.push(prefix.to_owned());
            } else {
                paths.push(format!("{prefix}::{path}"));
            }
        }
    }
    paths
}

/// Every path a module's code names: its `use` trees, and `crate::` and
/// `super::` paths written in place.
fn paths(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let starts_word = at == 0
            || !rest[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
        rest = &rest[at + 4..];
        if !starts_word {
            continue;
        }
        if let Some(end) = rest.find(';') {
            paths.extend(expand(&rest[..end]));
        }
    }
    for start in ["crate::", "super::"] {
        let mut rest = code;
        while let Some(at) = rest.find(start) {
            let path: String = rest[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            paths.push(path.trim_end_matches(':').to_owned());
            rest = &rest[at + start.len()..];
        }
    }
    paths
}

/// The deepest module that `path`, written in `module`, names.
fn resolve(module: &Module, path: &str, modules: &BTreeMap<Module, String>) -> Option<Module> {
    let mut segments = path.split("::").filter(|s| !s.is_empty()).peekable();
    let mut base: Module = match segments.peek().copied() {
        Some("crate") => {
            segments.next();
            Vec::new()
        }
        Some("super" | "self") => {
            let mut base = module.clone();
            while let Some(step) = segments.peek().copied() {
                match step {
                    "super" => {
                        base.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                segments.next();
            }
            base
        }
        Some(first) => {
            let mut child = module.clone();
            child.push(first.to_owned());
            if !modules.contains_key(&child) {
                return None;
            }
            module.clone()
        }
        None => return None,
    };
    for segment in segments {
        base.push(segment.to_owned());
        if !modules.contains_key(&base) {
            base.pop();
            break;
        }
    }
    Some(base)
}

/// The modules reachable from `from` by the edges of `graph`.
fn reachable(graph: &BTreeMap<Module, BTreeSet<Module>>, from: &Module) -> BTreeSet<Module> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.clone()];
    while let Some(module) = stack.pop() {
        for next in graph.get(&module).into_iter().flatten() {
            if seen.insert(next.clone()) {
                stack.push(next.clone());
            }
        }
    }
    seen
}

#[test]
fn server_and_error_modules_import_each_other_without_a_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = modules(&root);
    let mut graph: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, source) in &modules {
        for path in paths(&code(source)) {
            if let Some(target) = resolve(module, &path, &modules) {
                if &target != module {
                    graph.entry(module.clone()).or_default().insert(target);
                }
            }
        }
    }
    let watched = |m: &Module| matches!(m.first().map(String::as_str), Some("server" | "error"));
    let mut cycles = Vec::new();
    for module in modules.keys().filter(|m| watched(m)) {
        if reachable(&graph, module).contains(module) {
            cycles.push(module.join("::"));
        }
    }
    assert!(cycles.is_empty(), "modules on an import cycle: {cycles:?}");
    // The scan sees the edges it should: the driver uses its phases, and
    // nothing of server/ reaches back into server/mod.rs.
    let of = |s: &str| s.split("::").map(str::to_owned).collect::<Module>();
    assert!(graph[&of("server::connection")].contains(&of("server::connection::head")));
    assert!(graph[&of("server::accept")].contains(&of("server::admit")));
    assert!(graph
        .iter()
        .filter(|(from, _)| watched(from))
        .all(|(_, to)| !to.contains(&of("server"))));
}
