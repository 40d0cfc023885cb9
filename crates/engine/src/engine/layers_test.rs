//! The engine's layering, checked from its source: every `crate::<module>` path (and every
//! name the crate root re-exports, such as `crate::Somna`) in a file under `src/` is an
//! edge from the file's top-level module to that module, and so is every `super::` chain
//! that climbs to the crate root (`super::super::store` in `sleep/plan.rs`). The module graph must have no
//! loop; only the layers above the façade (`eval`, `bench`) may reach the façade
//! (`engine`); and every `impl Somna` is in `src/engine/`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Edges between top-level modules, each with the files that make it.
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// The modules above the façade: they may call it.
const ABOVE_FACADE: [&str; 2] = ["eval", "bench"];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, as (path relative to `dir`, text).
fn sources(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read the source folder") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(dir).expect("under src");
                let rel = rel.to_string_lossy().replace('\\', "/");
                let text = std::fs::read_to_string(&path).expect("read a source file");
                out.push((rel, text));
            }
        }
    }
    out.sort();
    out
}

/// The text without `//` comments and `/* */` blocks (doc links are not imports).
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            rest = &rest[end..];
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |e| e + 2);
            rest = &rest[end..];
        } else {
            let c = rest.chars().next().expect("not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first segment of every path in a `use` tree body (`a, b::c, d::{e, f}`).
fn tree_heads(body: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut item_start = true;
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => item_start = true,
            c if item_start && (c.is_alphanumeric() || c == '_') => {
                heads.push(ident_at(&body[i..]).to_string());
                item_start = false;
            }
            _ => {}
        }
    }
    heads
}

/// The body of the braces that open at `s[0]`.
fn braced(s: &str) -> &str {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &s[1..i];
                }
            }
            _ => {}
        }
    }
    &s[1..]
}

/// Every name a path that starts with `crate::` names first.
fn crate_refs(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue; // part of a longer name, or a macro's `$crate`
        }
        let rest = &code[at + "crate::".len()..];
        if rest.starts_with('{') {
            out.extend(tree_heads(braced(rest)));
        } else {
            out.push(ident_at(rest).to_string());
        }
    }
    out
}

/// Every name a `super::` chain that climbs to the crate root names first, in the file at
/// `path` (under `src/`): `sleep/plan.rs` is two levels deep, `sleep/mod.rs` and
/// `golden.rs` one, and each inline `mod name { … }` around a chain adds a level.
fn super_refs(path: &str, code: &str) -> Vec<String> {
    let mut depth_of_file = path.split('/').count();
    if path.ends_with("/mod.rs") {
        depth_of_file -= 1;
    }
    // The spans of inline modules (`mod tests { … }`).
    let mut inline = Vec::new();
    for (at, _) in code.match_indices("mod ") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + "mod ".len()..];
        let name = ident_at(rest);
        let after = rest[name.len()..].trim_start();
        if !name.is_empty() && after.starts_with('{') {
            let open = code.len() - after.len();
            inline.push(open..open + braced(after).len() + 2);
        }
    }
    let mut out = Vec::new();
    for (at, _) in code.match_indices("super::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue; // inside a longer name, or a later link of a chain
        }
        let mut rest = &code[at..];
        let mut climbs = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            climbs += 1;
            rest = r;
        }
        let depth = depth_of_file + inline.iter().filter(|s| s.contains(&at)).count();
        if climbs < depth {
            continue; // stays inside the file's own top-level module
        }
        if rest.starts_with('{') {
            out.extend(tree_heads(braced(rest)));
        } else {
            out.push(ident_at(rest).to_string());
        }
    }
    out
}

/// The crate root's modules, and which module each name it re-exports comes from.
fn root_names(lib: &str) -> (BTreeSet<String>, BTreeMap<String, String>) {
    let code = strip_comments(lib);
    let mut modules = BTreeSet::new();
    let mut reexports = BTreeMap::new();
    for stmt in code.split(';') {
        let words: Vec<&str> = stmt.split_whitespace().collect();
        match words.as_slice() {
            [.., "mod", name] => {
                modules.insert(name.to_string());
            }
            ["pub", "use", ..] => {
                let path = stmt.trim().trim_start_matches("pub").trim_start();
                let path = path.trim_start_matches("use").trim();
                let module = ident_at(path).to_string();
                let tail = &path[module.len()..].trim_start_matches("::");
                let names = if tail.starts_with('{') {
                    tree_heads(braced(tail))
                } else {
                    vec![tail.rsplit("::").next().unwrap_or("").to_string()]
                };
                for n in names {
                    reexports.insert(n, module.clone());
                }
            }
            _ => {}
        }
    }
    (modules, reexports)
}

/// The module graph of the files `(path under src, text)`; `lib.rs` supplies the names.
fn module_graph(files: &[(String, String)]) -> Graph {
    let lib = files
        .iter()
        .find(|(p, _)| p == "lib.rs")
        .map(|(_, t)| t.as_str())
        .expect("lib.rs");
    let (modules, reexports) = root_names(lib);
    let mut graph = Graph::new();
    for (path, text) in files {
        if path == "lib.rs" {
            continue;
        }
        let top = path.split('/').next().expect("a path");
        let top = top.trim_end_matches(".rs").to_string();
        let code = strip_comments(text);
        for name in crate_refs(&code).into_iter().chain(super_refs(path, &code)) {
            let target = if modules.contains(&name) {
                Some(name)
            } else {
                reexports.get(&name).cloned()
            };
            if let Some(target) = target.filter(|t| *t != top) {
                graph
                    .entry(top.clone())
                    .or_default()
                    .entry(target)
                    .or_default()
                    .insert(path.clone());
            }
        }
    }
    graph
}

/// One loop of the graph, as the modules along it (first = last), if there is any.
fn find_loop(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        done: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == node) {
            let mut cycle = path[i..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flat_map(|e| e.keys()) {
            if let Some(c) = visit(next, graph, done, path) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut done, &mut Vec::new()))
}

fn describe(graph: &Graph, cycle: &[String]) -> String {
    cycle
        .windows(2)
        .map(|w| {
            let files: Vec<&String> = graph[&w[0]][&w[1]].iter().collect();
            format!("{} -> {} (in {files:?})", w[0], w[1])
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_engine_modules_import_each_other_without_loops() {
    let graph = module_graph(&sources(&src_dir()));
    assert!(graph.contains_key("engine"), "the façade has edges");
    if let Some(cycle) = find_loop(&graph) {
        panic!("an import loop:\n{}", describe(&graph, &cycle));
    }
}

#[test]
fn only_the_layers_above_the_facade_import_it() {
    let graph = module_graph(&sources(&src_dir()));
    let offenders: Vec<String> = graph
        .iter()
        .filter(|(m, _)| !ABOVE_FACADE.contains(&m.as_str()))
        .filter_map(|(m, edges)| edges.get("engine").map(|files| format!("{m}: {files:?}")))
        .collect();
    assert!(offenders.is_empty(), "below the façade: {offenders:?}");
}

#[test]
fn impl_somna_appears_only_in_the_facade_folder() {
    let outside: Vec<String> = sources(&src_dir())
        .into_iter()
        .filter(|(path, _)| !path.starts_with("engine/"))
        .filter(|(_, text)| {
            let code = strip_comments(text);
            code.contains("impl Somna") || code.contains("impl crate::Somna")
        })
        .map(|(path, _)| path)
        .collect();
    assert!(
        outside.is_empty(),
        "impl Somna outside src/engine/: {outside:?}"
    );
}

#[test]
fn the_checker_finds_a_loop_made_through_a_reexported_name() {
    let files = vec![
        (
            "lib.rs".to_string(),
            "mod engine;\npub mod sleep;\npub mod store;\npub use engine::Somna;\n".to_string(),
        ),
        ("engine/mod.rs".into(), "use crate::sleep::plan;\n".into()),
        (
            "sleep/mod.rs".into(),
            "// crate::engine in a comment is no edge\nuse crate::{store::Tx, Somna};\n".into(),
        ),
        ("store/mod.rs".into(), "fn f() {}\n".into()),
    ];
    let graph = module_graph(&files);
    assert_eq!(graph["sleep"]["engine"].len(), 1, "Somna names the façade");
    assert_eq!(graph["sleep"]["store"].len(), 1);
    let cycle = find_loop(&graph).expect("engine -> sleep -> engine is a loop");
    assert_eq!(cycle.first(), cycle.last());
    assert!(cycle.contains(&"sleep".to_string()) && cycle.contains(&"engine".to_string()));
    assert!(!graph["sleep"].contains_key("sleep"));
}

#[test]
fn the_checker_accepts_a_graph_that_only_calls_down() {
    let files = vec![
        (
            "lib.rs".to_string(),
            "mod engine;\npub mod sleep;\npub mod store;\n".to_string(),
        ),
        (
            "engine/mod.rs".into(),
            "use crate::{sleep, store::Store};\n".into(),
        ),
        ("sleep/plan.rs".into(), "use crate::store::Tx;\n".into()),
        (
            "store/mod.rs".into(),
            "/* crate::sleep */ fn f() {}\n".into(),
        ),
    ];
    let graph = module_graph(&files);
    assert_eq!(find_loop(&graph), None);
    assert_eq!(graph["engine"].len(), 2);
}

#[test]
fn the_checker_follows_super_chains_that_climb_to_the_crate_root() {
    let files = vec![
        (
            "lib.rs".to_string(),
            "mod engine;\npub mod sleep;\npub mod store;\npub use engine::Somna;\n".to_string(),
        ),
        ("engine/mod.rs".into(), "use crate::sleep::plan;\n".into()),
        (
            "sleep/plan.rs".into(),
            "use super::super::{store::Tx, Somna};\nuse super::Batch;\n".into(),
        ),
        (
            "store/mod.rs".into(),
            "mod tests {\n    use super::*;\n    use super::super::sleep;\n}\n".into(),
        ),
        ("store/history.rs".into(), "use super::Tx;\n".into()),
    ];
    let graph = module_graph(&files);
    assert_eq!(graph["sleep"]["engine"].len(), 1, "super::super::Somna");
    assert_eq!(graph["sleep"]["store"].len(), 1, "super::super::store");
    assert_eq!(graph["store"]["sleep"].len(), 1, "from an inline module");
    assert!(!graph["sleep"].contains_key("sleep"));
    assert!(!graph["store"].contains_key("store"));
    let cycle = find_loop(&graph).expect("engine -> sleep -> engine is a loop");
    assert!(cycle.contains(&"sleep".to_string()) && cycle.contains(&"engine".to_string()));
}
