//! The file-level import graph of a crate, and its loops.
//!
//! A file imports another when its code outside the tests names an item of it: a `use` of a
//! path starting `crate::`, `super::`, `self::` or a module the file declares, or such a path
//! written inline (`crate::load::parse_version(…)`). `mod x;` alone is no import. A path
//! resolves to the file that defines what it names: the deepest module with a file of its own
//! (an inline `mod x { … }` is its file's), then through the `use`s of that file (a re-export,
//! `pub use child::X`, or a name it imported) to the file that defines the item.
//!
//! A re-export is an import of the file it re-exports from: `pub use child::X` in foo.rs is an
//! edge foo.rs → foo/child.rs. A file's import of one of its own ancestors (foo/child.rs doing
//! `use super::Y`, Y defined in foo.rs) is not an edge: foo/child.rs is a part of the module
//! foo.rs opens, which already contains it; counting that edge would make every module file
//! that re-exports or uses a part of its own folder a loop. What remains are files importing
//! each other in a loop across modules: the loops issue #45 measured (cli ↔ commands,
//! http/adapters ↔ http/endpoint, http/driver → prompts/text → http/server, prompts ↔ suite,
//! schema ↔ stats), none of them between a module file and its own parts.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use crate::sources::{is_comment, without_visibility, File};

/// One path a `use` brings in: its segments, and the name it is known by in the file (`None`
/// for a glob).
#[derive(Debug, Clone, PartialEq)]
struct UsePath {
    segments: Vec<String>,
    name: Option<String>,
}

/// A path named in a file, at a line.
struct Named {
    line: usize,
    path: Vec<String>,
}

/// What resolving paths needs to know of a file.
struct Facts {
    /// Every `use` of the file (its imports and its re-exports).
    uses: Vec<(usize, UsePath)>,
    /// The names it defines at its top level.
    defines: BTreeSet<String>,
    /// The modules it declares (`mod x;` and inline ones).
    children: BTreeSet<String>,
    /// The paths it names inline, outside `use` lines.
    inline: Vec<Named>,
}

/// The tokens of a use tree: identifiers, `::`, `{`, `}`, `,` and `*`.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' {
            let mut word = c.to_string();
            while let Some(&n) = chars.peek().filter(|n| n.is_alphanumeric() || **n == '_') {
                word.push(n);
                chars.next();
            }
            out.push(word);
        } else if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            out.push("::".to_string());
        } else if "{},*".contains(c) {
            out.push(c.to_string());
        }
    }
    out
}

/// Expands the use tree in `tokens` from `at` under `prefix` into `out`; returns where it ends.
fn expand(tokens: &[String], mut at: usize, prefix: &[String], out: &mut Vec<UsePath>) -> usize {
    let mut segments = prefix.to_vec();
    while at < tokens.len() {
        match tokens[at].as_str() {
            "::" => at += 1,
            "{" => {
                at += 1;
                while at < tokens.len() && tokens[at] != "}" {
                    at = expand(tokens, at, &segments, out);
                    if tokens.get(at).is_some_and(|t| t == ",") {
                        at += 1;
                    }
                }
                return at + 1;
            }
            "*" => {
                out.push(UsePath {
                    segments,
                    name: None,
                });
                return at + 1;
            }
            "," | "}" => break,
            word => {
                if word == "as" {
                    let alias = tokens.get(at + 1).cloned();
                    out.push(UsePath {
                        segments,
                        name: alias,
                    });
                    return at + 2;
                }
                if word != "self" {
                    segments.push(word.to_string());
                }
                at += 1;
            }
        }
    }
    let name = segments.last().cloned();
    out.push(UsePath { segments, name });
    at
}

/// The paths of a `use` statement's tree (the text between `use` and `;`).
fn use_paths(tree: &str) -> Vec<UsePath> {
    let mut out = Vec::new();
    let tokens = tokens(tree);
    expand(&tokens, 0, &[], &mut out);
    out
}

/// The name an item line at the top level defines.
fn defined_name(line: &str) -> Option<String> {
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    let code = without_visibility(line);
    if let Some(rest) = ["const fn ", "async fn ", "unsafe fn "]
        .iter()
        .find_map(|q| code.strip_prefix(q))
    {
        return Some(ident(rest));
    }
    let kinds = [
        "struct ",
        "enum ",
        "fn ",
        "trait ",
        "type ",
        "const ",
        "static ",
        "mod ",
        "union ",
        "macro_rules! ",
    ];
    let rest = kinds.iter().find_map(|k| code.strip_prefix(k))?;
    Some(ident(rest)).filter(|name| !name.is_empty())
}

fn ident(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The paths starting `crate::`, `super::` or `self::` written in `line`.
fn inline_paths(line: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        for (at, _) in line.match_indices(start) {
            let before = line[..at].chars().last();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let path: Vec<String> = line[at..]
                .split("::")
                .map(ident)
                .take_while(|s| !s.is_empty())
                .collect();
            found.push(path);
        }
    }
    found
}

fn facts(file: &File) -> Facts {
    let mut facts = Facts {
        uses: Vec::new(),
        defines: BTreeSet::new(),
        children: BTreeSet::new(),
        inline: Vec::new(),
    };
    let code: Vec<&(usize, String)> = file.lines.iter().filter(|(_, l)| !is_comment(l)).collect();
    let mut i = 0;
    while i < code.len() {
        let (number, line) = code[i];
        if let Some(name) = defined_name(line) {
            if without_visibility(line).starts_with("mod ") {
                facts.children.insert(name.clone());
            }
            facts.defines.insert(name);
        }
        let Some(start) = without_visibility(line).strip_prefix("use ") else {
            let named = inline_paths(line).into_iter();
            facts.inline.extend(named.map(|path| Named {
                line: *number,
                path,
            }));
            i += 1;
            continue;
        };
        let mut tree = start.to_string();
        while !tree.contains(';') && i + 1 < code.len() {
            i += 1;
            tree.push_str(&code[i].1);
        }
        let tree = tree.split(';').next().unwrap_or_default();
        facts
            .uses
            .extend(use_paths(tree).into_iter().map(|path| (*number, path)));
        i += 1;
    }
    facts
}

/// A crate's files and who imports whom: `edges[a][b]` is the first line of file `a` that
/// imports file `b`.
pub struct Graph {
    pub paths: Vec<String>,
    pub edges: Vec<BTreeMap<usize, usize>>,
}

struct Resolver<'a> {
    files: &'a [File],
    facts: Vec<Facts>,
    by_module: HashMap<&'a [String], usize>,
}

impl Resolver<'_> {
    /// The module path `segments`, named in file `from`, means; `None` for another crate's.
    fn absolute(&self, from: usize, segments: &[String]) -> Option<Vec<String>> {
        let here = &self.files[from].module;
        let first = segments.first()?;
        match first.as_str() {
            "crate" => Some(segments[1..].to_vec()),
            "self" => Some([here.as_slice(), &segments[1..]].concat()),
            "super" => {
                let ups = segments.iter().take_while(|s| *s == "super").count();
                let base = &here[..here.len().checked_sub(ups)?];
                Some([base, &segments[ups..]].concat())
            }
            _ if self.facts[from].children.contains(first) => {
                Some([here.as_slice(), segments].concat())
            }
            _ => None,
        }
    }

    /// The file that defines what the absolute `path` names.
    fn locate(&self, path: &[String], depth: usize) -> usize {
        let deepest = (0..=path.len())
            .rev()
            .find(|&n| self.by_module.contains_key(&path[..n]))
            .expect("the crate's root is a module");
        let file = self.by_module[&path[..deepest]];
        let rest = &path[deepest..];
        let facts = &self.facts[file];
        let Some(name) = rest.first() else {
            return file;
        };
        if facts.defines.contains(name) || depth > 8 {
            return file;
        }
        // Through the file's imports: by name, else through its globs.
        let through = |used: &UsePath, tail: &[String]| {
            let target = self.absolute(file, &used.segments)?;
            Some(self.locate(&[target.as_slice(), tail].concat(), depth + 1))
        };
        for (_, used) in &facts.uses {
            if used.name.as_ref() == Some(name) {
                return through(used, &rest[1..]).unwrap_or(file);
            }
        }
        for (_, used) in facts.uses.iter().filter(|(_, u)| u.name.is_none()) {
            let Some(target) = self.absolute(file, &used.segments) else {
                continue;
            };
            let holder = self.locate(&target, depth + 1);
            let holds = &self.facts[holder];
            if holder != file
                && (holds.defines.contains(name)
                    || holds
                        .uses
                        .iter()
                        .any(|(_, u)| u.name.as_ref() == Some(name)))
            {
                return through(used, rest).unwrap_or(file);
            }
        }
        file
    }
}

/// The import graph of a crate's files (as [`crate::sources::crate_files`] reads them).
pub fn graph(files: &[File]) -> Graph {
    let resolver = Resolver {
        files,
        facts: files.iter().map(facts).collect(),
        by_module: files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.module.as_slice(), i))
            .collect(),
    };
    let mut edges = vec![BTreeMap::new(); files.len()];
    for (from, facts) in resolver.facts.iter().enumerate() {
        let uses = facts.uses.iter().map(|(line, u)| (*line, &u.segments));
        let inline = facts.inline.iter().map(|n| (n.line, &n.path));
        for (line, segments) in uses.chain(inline) {
            let Some(path) = resolver.absolute(from, segments) else {
                continue;
            };
            let to = resolver.locate(&path, 0);
            let module = &files[from].module;
            // A part importing the module it belongs to is no edge (see the module's comment).
            if files[to].module.len() < module.len() && module.starts_with(&files[to].module) {
                continue;
            }
            if to != from {
                edges[from].entry(to).or_insert(line);
            }
        }
    }
    Graph {
        paths: files.iter().map(|f| f.path.clone()).collect(),
        edges,
    }
}

/// The strongly connected components of more than one file (Tarjan's algorithm).
fn loops(graph: &Graph) -> Vec<Vec<usize>> {
    struct State<'a> {
        graph: &'a Graph,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        next: usize,
        found: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in s.graph.edges[v].keys() {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(index) if s.on_stack[w] => s.low[v] = s.low[v].min(index),
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
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let n = graph.paths.len();
    let mut state = State {
        graph,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        next: 0,
        found: Vec::new(),
    };
    for v in 0..n {
        if state.index[v].is_none() {
            visit(&mut state, v);
        }
    }
    state.found.sort();
    state.found
}

/// The shortest loop through the first file of `component`, in order, back to its start.
fn shortest_loop(graph: &Graph, component: &[usize]) -> Vec<usize> {
    let start = component[0];
    let mut came_from: HashMap<usize, usize> = HashMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in graph.edges[v].keys() {
            if w == start {
                let mut path = vec![v];
                while let Some(&p) = came_from.get(path.last().unwrap()) {
                    path.push(p);
                }
                path.reverse();
                path.push(start);
                return path;
            }
            if component.contains(&w) && !came_from.contains_key(&w) {
                came_from.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    unreachable!("a strongly connected component holds a loop through each of its files")
}

/// Each loop of the graph, described: the shortest loop through its first file with the line
/// of each import, then every file of the loop.
pub fn describe_loops(graph: &Graph) -> Vec<String> {
    loops(graph)
        .iter()
        .map(|component| {
            let path = shortest_loop(graph, component);
            let steps: Vec<String> = path
                .windows(2)
                .map(|w| format!("{}:{}", graph.paths[w[0]], graph.edges[w[0]][&w[1]]))
                .collect();
            let all: Vec<&str> = component.iter().map(|&f| graph.paths[f].as_str()).collect();
            format!(
                "{} files import each other: {} → {} (all: {})",
                component.len(),
                steps.join(" → "),
                graph.paths[path[0]],
                all.join(", ")
            )
        })
        .collect()
}
