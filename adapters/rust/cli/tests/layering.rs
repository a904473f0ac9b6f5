//! The layering of the adapter, checked on its source (module cycles inside
//! one crate are no compile error, so this test is the check):
//!
//! - `cli/src` holds the crate root (`main.rs`), the registry (`suites.rs`)
//!   and suite modules: every other top-level module, with its submodules.
//!   What suites share lives in `ahp-contract` (the step engine `steps`, the
//!   process model, the `registry` types), never in `cli/src`.
//! - A suite module refers to no other suite module, nor to the registry or
//!   the root. The root refers to no suite module: it routes the commands
//!   through the registry, which names every suite.
//! - No cycle among the modules of `cli/src` (a module is a node, with an
//!   edge for every `crate::`, `super::`, `self::` path and every path
//!   through a child module it declares; `mod x;` itself is no edge), nor
//!   among its top-level modules (each with its submodules one node).
//! - `ahp-sdk` depends on neither `ahp-contract` nor `ahp-rust`; `ahp-contract`
//!   not on `ahp-rust` (cargo refuses a cycle between crates).
//!
//! Paths are read from the tokens, outside comments and literals.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level module of the registry.
const REGISTRY: &str = "suites";
/// How a report names the crate root (`main.rs`).
const ROOT: &str = "<root>";

type Module = Vec<String>;

fn show(m: &[String]) -> String {
    if m.is_empty() {
        ROOT.to_string()
    } else {
        m.join("::")
    }
}

fn top(m: &[String]) -> String {
    m.first().cloned().unwrap_or_else(|| ROOT.to_string())
}

// ------------------------------------------------------------------ tokens

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    Path,
    Punct(char),
}

/// The tokens that matter here: identifiers, `::` and single punctuation;
/// comments, string, char and byte literals dropped; lifetimes dropped.
fn tokens(src: &str) -> Vec<Tok> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let ident = |ch: char| ch == '_' || ch.is_alphanumeric();
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if ch == '"' {
            i = skip_string(&c, i);
        } else if (ch == 'r' || ch == 'b') && raw_string_start(&c, i).is_some() {
            i = skip_raw_string(&c, i);
        } else if ch == 'b' && next == Some('"') {
            i = skip_string(&c, i + 1);
        } else if ch == 'b' && next == Some('\'') {
            i = skip_char(&c, i + 1);
        } else if ch == '\'' {
            // a char literal, else a lifetime or label
            if next == Some('\\') || c.get(i + 2) == Some(&'\'') {
                i = skip_char(&c, i);
            } else {
                i += 1;
            }
        } else if ident(ch) {
            let start = i;
            while i < c.len() && ident(c[i]) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            if word == "r" && c.get(i) == Some(&'#') {
                // a raw identifier `r#name`: the name follows
                i += 1;
            } else {
                out.push(Tok::Ident(word));
            }
        } else if ch == ':' && next == Some(':') {
            out.push(Tok::Path);
            i += 2;
        } else {
            if !ch.is_whitespace() {
                out.push(Tok::Punct(ch));
            }
            i += 1;
        }
    }
    out
}

/// Past a `"…"` starting at `i` (escapes honoured).
fn skip_string(c: &[char], mut i: usize) -> usize {
    i += 1;
    while i < c.len() && c[i] != '"' {
        i += if c[i] == '\\' { 2 } else { 1 };
    }
    i + 1
}

/// Past a `'…'` starting at `i`.
fn skip_char(c: &[char], mut i: usize) -> usize {
    i += 1;
    while i < c.len() && c[i] != '\'' {
        i += if c[i] == '\\' { 2 } else { 1 };
    }
    i + 1
}

/// The number of `#` of a raw string (`r"`, `r#"`, `br##"` …) starting at `i`.
fn raw_string_start(c: &[char], i: usize) -> Option<usize> {
    if i > 0 && (c[i - 1] == '_' || c[i - 1].is_alphanumeric()) {
        return None;
    }
    let mut j = i;
    if c[j] == 'b' {
        j += 1;
    }
    if c.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = c[j..].iter().take_while(|&&h| h == '#').count();
    (c.get(j + hashes) == Some(&'"')).then_some(hashes)
}

fn skip_raw_string(c: &[char], i: usize) -> usize {
    let hashes = raw_string_start(c, i).expect("a raw string");
    let mut j = i + c[i..].iter().position(|&x| x == '"').expect("its quote") + 1;
    while j < c.len() {
        if c[j] == '"'
            && c[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&h| h == '#')
                .count()
                == hashes
        {
            return j + 1 + hashes;
        }
        j += 1;
    }
    j
}

// ------------------------------------------------------------------ paths

/// The path trees starting at `toks[i]`: `a::b::{c, d::{self, e}}` gives
/// `a::b::c`, `a::b::d`, `a::b::d::e`; a path ends at anything but `::`
/// followed by an identifier or a group.
fn path_trees(toks: &[Tok], mut i: usize) -> Vec<Vec<String>> {
    if !matches!(toks.get(i), Some(Tok::Ident(_))) {
        // nothing, as after a group's trailing comma
        return vec![];
    }
    let mut prefix = Vec::new();
    while let Some(Tok::Ident(seg)) = toks.get(i) {
        prefix.push(seg.clone());
        i += 1;
        if toks.get(i) != Some(&Tok::Path) {
            return vec![prefix];
        }
        i += 1;
        if toks.get(i) == Some(&Tok::Punct('{')) {
            let mut out = vec![];
            let mut depth = 0;
            let mut start = i + 1;
            for (j, t) in toks.iter().enumerate().skip(i) {
                match t {
                    Tok::Punct('{') => depth += 1,
                    Tok::Punct('}') | Tok::Punct(',') if depth == 1 => {
                        for tail in path_trees(toks, start) {
                            // `{self, ..}` names the prefix itself
                            let mut p = prefix.clone();
                            p.extend(tail.into_iter().filter(|s| s != "self"));
                            out.push(p);
                        }
                        start = j + 1;
                        if t == &Tok::Punct('}') {
                            break;
                        }
                    }
                    Tok::Punct('}') => depth -= 1,
                    _ => {}
                }
            }
            return out;
        }
    }
    vec![prefix]
}

/// One module's source: its references to other modules and the child
/// modules it declares with `mod x;` (inline `mod x { .. }` blocks are part
/// of it, their `super` resolved to it).
struct Parsed {
    refs: Vec<Module>,
    children: BTreeSet<String>,
}

fn parse(module: &Module, src: &str) -> Parsed {
    let toks = tokens(src);
    let mut children = BTreeSet::new();
    for w in toks.windows(3) {
        if let [Tok::Ident(m), Tok::Ident(name), Tok::Punct(';')] = w {
            if m == "mod" {
                children.insert(name.clone());
            }
        }
    }
    // inline modules: (name, brace depth inside it)
    let mut inline: Vec<(String, usize)> = vec![];
    let mut depth = 0usize;
    let mut refs = vec![];
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Punct('{') => {
                depth += 1;
                if let Some([Tok::Ident(m), Tok::Ident(name)]) =
                    i.checked_sub(2).map(|k| &toks[k..i])
                {
                    if m == "mod" {
                        inline.push((name.clone(), depth));
                    }
                }
            }
            Tok::Punct('}') => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Ident(first) => {
                let starts = i == 0 || !matches!(toks[i - 1], Tok::Path | Tok::Punct('.'));
                let is_path = toks.get(i + 1) == Some(&Tok::Path);
                let rooted = matches!(first.as_str(), "crate" | "super" | "self")
                    || (inline.is_empty() && children.contains(first));
                if starts && is_path && rooted {
                    // the module the path is read in (inline modules are below this file's)
                    let mut here = module.clone();
                    here.extend(inline.iter().map(|(n, _)| n.clone()));
                    for tree in path_trees(&toks, i) {
                        refs.push(resolve(&here, &tree));
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    Parsed { refs, children }
}

/// A path read in module `here` as absolute segments (an inline module's
/// own paths fold into its file's module, as every path not naming a module
/// does into the module that holds it: see `owner` in `problems`).
fn resolve(here: &Module, tree: &[String]) -> Module {
    let mut at = here.clone();
    let mut segs = tree.iter().peekable();
    match segs.peek().map(|s| s.as_str()) {
        Some("crate") => {
            at.clear();
            segs.next();
        }
        Some("self") => {
            segs.next();
        }
        _ => {}
    }
    while segs.peek().map(|s| s.as_str()) == Some("super") {
        at.pop();
        segs.next();
    }
    at.extend(segs.cloned());
    at
}

// ------------------------------------------------------------------ the graph

/// Problems of a crate's modules, given each module's path and source.
fn problems(sources: &BTreeMap<Module, String>) -> Vec<String> {
    let mut problems = vec![];
    let modules: BTreeSet<Module> = sources.keys().cloned().collect();
    // the longest module prefix of an absolute path
    let owner = |p: &Module| -> Module {
        (0..=p.len())
            .rev()
            .map(|n| p[..n].to_vec())
            .find(|m| modules.contains(m))
            .unwrap_or_default()
    };
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (m, src) in sources {
        let parsed = parse(m, src);
        for child in &parsed.children {
            let mut c = m.clone();
            c.push(child.clone());
            if !modules.contains(&c) {
                problems.push(format!("{} declares mod {child} without its file", show(m)));
            }
        }
        let out = edges.entry(m.clone()).or_default();
        for r in parsed.refs {
            let target = owner(&r);
            if &target != m {
                out.insert(target);
            }
        }
    }
    let suites: BTreeSet<String> = modules
        .iter()
        .filter(|m| !m.is_empty() && m[0] != REGISTRY)
        .map(|m| m[0].clone())
        .collect();
    if !modules.iter().any(|m| m == &[REGISTRY.to_string()]) {
        problems.push(format!("no registry module `{REGISTRY}`"));
    }
    if suites.is_empty() {
        problems.push("no suite module".into());
    }
    let mut tops: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, targets) in &edges {
        for b in targets {
            let (ta, tb) = (top(a), top(b));
            if ta == tb {
                continue;
            }
            tops.entry(ta.clone()).or_default().insert(tb.clone());
            if suites.contains(&ta) {
                let what = if suites.contains(&tb) {
                    "another suite module"
                } else if tb == REGISTRY {
                    "the registry"
                } else {
                    "the crate root"
                };
                problems.push(format!(
                    "suite module {} refers to {what}, {}: what suites share belongs in ahp-contract",
                    show(a),
                    show(b)
                ));
            } else if ta == ROOT && suites.contains(&tb) {
                problems.push(format!(
                    "the crate root refers to suite module {}: it routes through the registry",
                    show(b)
                ));
            }
        }
    }
    let registered = tops.get(REGISTRY).cloned().unwrap_or_default();
    for s in suites.difference(&registered) {
        problems.push(format!("the registry does not name suite module {s}"));
    }
    if let Some(cycle) = cycle(&edges) {
        let names: Vec<String> = cycle.iter().map(|m| show(m)).collect();
        problems.push(format!("a module cycle: {}", names.join(" -> ")));
    }
    if let Some(cycle) = cycle(&tops) {
        problems.push(format!(
            "a cycle among top-level modules: {}",
            cycle.join(" -> ")
        ));
    }
    problems
}

/// A cycle of a directed graph, if it has one (its first node repeated at the end).
fn cycle<N: Ord + Clone>(edges: &BTreeMap<N, BTreeSet<N>>) -> Option<Vec<N>> {
    fn visit<N: Ord + Clone>(
        n: &N,
        edges: &BTreeMap<N, BTreeSet<N>>,
        done: &mut BTreeSet<N>,
        stack: &mut Vec<N>,
    ) -> Option<Vec<N>> {
        if let Some(at) = stack.iter().position(|s| s == n) {
            let mut c = stack[at..].to_vec();
            c.push(n.clone());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n.clone());
        for next in edges.get(n).into_iter().flatten() {
            if let Some(c) = visit(next, edges, done, stack) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(n.clone());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|n| visit(n, edges, &mut done, &mut vec![]))
}

// ------------------------------------------------------------------ sources

/// Every `.rs` file of `dir` (recursively) by its module path: `main.rs`
/// the root, `a.rs` and `a/mod.rs` the module `a`, `a/b.rs` `a::b`.
fn crate_sources(dir: &Path) -> BTreeMap<Module, String> {
    fn walk(dir: &Path, at: &Module, out: &mut BTreeMap<Module, String>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let mut m = at.clone();
            if p.is_dir() {
                m.push(name);
                walk(&p, &m, out);
                continue;
            }
            let Some(stem) = name.strip_suffix(".rs") else {
                continue;
            };
            if !(stem == "mod" || (at.is_empty() && stem == "main")) {
                m.push(stem.to_string());
            }
            let src = std::fs::read_to_string(&p).unwrap();
            assert!(
                out.insert(m.clone(), src).is_none(),
                "two files for {}",
                show(&m)
            );
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, &vec![], &mut out);
    out
}

fn adapter() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn the_binary_is_a_root_a_registry_and_independent_suites() {
    let sources = crate_sources(&adapter().join("cli/src"));
    let problems = problems(&sources);
    assert!(problems.is_empty(), "cli/src:\n  {}", problems.join("\n  "));
}

/// The dependency names of a Cargo.toml (every dependency table).
fn dependencies(manifest: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let mut table = String::new();
    let mut out = BTreeSet::new();
    for line in text.lines().map(str::trim) {
        if let Some(t) = line.strip_prefix('[') {
            table = t.trim_end_matches(']').to_string();
            // [dependencies.NAME], [target.'..'.dependencies.NAME]
            if let Some((_, name)) = table.rsplit_once("dependencies.") {
                out.insert(name.to_string());
            }
        } else if table.ends_with("dependencies") && !line.starts_with('#') {
            if let Some((key, _)) = line.split_once('=') {
                out.insert(key.trim().trim_end_matches(".workspace").to_string());
            }
        }
    }
    out
}

#[test]
fn the_crates_are_layered() {
    let sdk = dependencies(&adapter().join("sdk/Cargo.toml"));
    let contract = dependencies(&adapter().join("contract/Cargo.toml"));
    let cli = dependencies(&adapter().join("cli/Cargo.toml"));
    assert!(cli.contains("ahp-sdk") && cli.contains("ahp-contract"));
    assert!(contract.contains("ahp-sdk"));
    for above in ["ahp-contract", "ahp-rust"] {
        assert!(!sdk.contains(above), "ahp-sdk depends on {above}");
    }
    assert!(
        !contract.contains("ahp-rust"),
        "ahp-contract depends on ahp-rust"
    );
}

// ------------------------------------------------------------------ the check's own tests

fn tree(files: &[(&str, &str)]) -> BTreeMap<Module, String> {
    files
        .iter()
        .map(|(m, src)| {
            let m: Module = m
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            (m, src.to_string())
        })
        .collect()
}

const ROOT_SRC: &str = "mod a; mod b; mod suites; fn main() { suites::command(); }";
const REGISTRY_SRC: &str =
    "use crate::{a, b}; pub static S: [u8; 2] = [a::X, b::X]; pub fn command() {}";

#[test]
fn the_check_passes_independent_suites() {
    let files = tree(&[
        ("", ROOT_SRC),
        ("suites", REGISTRY_SRC),
        (
            "a",
            "mod c; use ahp_contract::steps; pub const X: u8 = c::Y; // crate::b::X",
        ),
        ("a::c", "pub const Y: u8 = 1; const S: &str = \"crate::b\";"),
        (
            "b",
            "pub const X: u8 = 2; fn f<'a>(x: &'a str) -> char { 'b' }",
        ),
    ]);
    assert_eq!(problems(&files), Vec::<String>::new());
}

#[test]
fn the_check_fails_a_suite_naming_another_suite_or_the_registry() {
    let files = tree(&[
        ("", ROOT_SRC),
        ("suites", REGISTRY_SRC),
        ("a", "use crate::{b::{self}, x}; pub const X: u8 = 1;"),
        ("b", "pub const X: u8 = crate::suites::S[0];"),
    ]);
    let p = problems(&files);
    assert!(
        p.iter()
            .any(|p| p.contains("suite module a refers to another suite module, b")),
        "{p:?}"
    );
    assert!(
        p.iter()
            .any(|p| p.contains("suite module b refers to the registry")),
        "{p:?}"
    );
    assert!(p.iter().any(|p| p.contains("cycle")), "{p:?}");
}

#[test]
fn the_check_fails_the_root_naming_a_suite_and_an_unregistered_suite() {
    let files = tree(&[
        ("", "mod a; mod b; mod suites; fn main() { a::run(); }"),
        ("suites", "use crate::a; pub fn command() { a::run() }"),
        ("a", "pub fn run() {}"),
        ("b", "pub fn run() {}"),
    ]);
    let p = problems(&files);
    assert!(
        p.iter()
            .any(|p| p.contains("the crate root refers to suite module a")),
        "{p:?}"
    );
    assert!(
        p.iter()
            .any(|p| p.contains("the registry does not name suite module b")),
        "{p:?}"
    );
}

#[test]
fn the_check_fails_a_cycle_inside_a_suite() {
    let files = tree(&[
        ("", ROOT_SRC),
        ("suites", REGISTRY_SRC),
        ("a", "mod c; mod d; pub const X: u8 = c::Y;"),
        ("a::c", "pub const Y: u8 = super::d::Z;"),
        (
            "a::d",
            "pub const Z: u8 = self::super::c::Y; #[cfg(test)] mod t { use super::Z; }",
        ),
        ("b", "pub const X: u8 = 2;"),
    ]);
    let p = problems(&files);
    assert_eq!(p, vec!["a module cycle: a::c -> a::d -> a::c".to_string()]);
}
