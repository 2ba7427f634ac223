//! The documentation's own checks. Every figure infermeter states about itself lives in
//! docs/performance.md; the README's headline table is a copy of the first two columns of
//! that file's, and these tests fail when the copy differs, when the README stops being a short
//! page for users (length, the two commands first, no dates or commit ids that go stale), or
//! when a relative link in README.md, CONTRIBUTING.md or docs/*.md points at nothing.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

/// The README's limit, in characters: longer material belongs in docs/ or CONTRIBUTING.md.
const README_MAX_CHARS: usize = 12_000;

fn root() -> PathBuf {
    // Read at run time: a build cache shared by checkouts can hold this binary built in
    // another one, and cargo does not rebuild it for a path change alone.
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("run by cargo test"))
}

fn read(name: &str) -> String {
    let path = root().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The lines of a Markdown text outside fenced code blocks, with their 1-based numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut in_fence = false;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            lines.push((i + 1, line));
        }
    }
    lines
}

/// The cells of each body row of the first table under the heading `heading` (a whole line,
/// such as `## Headline figures`), up to the next heading of any level.
fn table_under(text: &str, heading: &str) -> Vec<Vec<String>> {
    let lines = prose_lines(text);
    let start = lines
        .iter()
        .position(|(_, l)| l.trim_end() == heading)
        .unwrap_or_else(|| panic!("no heading {heading:?}"));
    let mut rows = Vec::new();
    for (_, line) in &lines[start + 1..] {
        if line.starts_with('#') {
            break;
        }
        if line.starts_with('|') {
            rows.push(cells(line));
        } else if !rows.is_empty() {
            break;
        }
    }
    assert!(rows.len() > 2, "the table under {heading:?} has no rows");
    rows.drain(..2); // header and the |---| line
    rows
}

/// A table row's cells, trimmed (no cell here holds an escaped `|`).
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split('|').map(|c| c.trim().to_string()).collect()
}

#[test]
fn readme_headline_figures_are_those_of_docs_performance() {
    let readme = table_under(&read("README.md"), "## Headline figures");
    let performance = table_under(&read("docs/performance.md"), "## Headline figures");
    for row in &readme {
        assert_eq!(
            row.len(),
            2,
            "README headline row {row:?}: want | what | figure |"
        );
        let what = &row[0];
        let source = performance
            .iter()
            .find(|p| &p[0] == what)
            .unwrap_or_else(|| {
                panic!(
                    "README headline row {what:?} is not in docs/performance.md's headline table"
                )
            });
        assert_eq!(
            row[1], source[1],
            "README's figure for {what:?} differs from docs/performance.md's"
        );
    }
    let in_readme: Vec<&String> = readme.iter().map(|r| &r[0]).collect();
    let in_performance: Vec<&String> = performance.iter().map(|r| &r[0]).collect();
    assert_eq!(
        in_readme, in_performance,
        "the README's headline table must list docs/performance.md's rows, in its order"
    );
}

#[test]
fn readme_is_a_short_page_for_users() {
    let readme = read("README.md");
    let chars = readme.chars().count();
    assert!(
        chars <= README_MAX_CHARS,
        "README.md has {chars} characters, over {README_MAX_CHARS}: move detail to docs/ or CONTRIBUTING.md"
    );
    for (n, line) in readme.lines().enumerate() {
        if let Some(id) = commit_id(line) {
            panic!("README.md:{}: {id:?} looks like a commit id; figures with their provenance belong in docs/performance.md", n + 1);
        }
        if let Some(date) = date(line) {
            panic!("README.md:{}: {date:?} is a date; dated measurements belong in docs/performance.md", n + 1);
        }
    }
}

/// A word of 7 or more lowercase hex digits with at least one digit and one letter (so neither
/// a number nor an English word such as "defaced").
fn commit_id(line: &str) -> Option<&str> {
    line.split(|c: char| !c.is_ascii_alphanumeric()).find(|w| {
        w.len() >= 7
            && w.chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
            && w.chars().any(|c| c.is_ascii_digit())
            && w.chars().any(|c| c.is_ascii_alphabetic())
    })
}

/// A year of this century or the last followed by `-` and two digits (2026-11, 1999-01-02).
fn date(line: &str) -> Option<&str> {
    let b = line.as_bytes();
    (0..b.len().saturating_sub(6)).find_map(|i| {
        let w = &b[i..i + 7];
        let starts_word = i == 0 || !b[i - 1].is_ascii_digit();
        (starts_word
            && (w.starts_with(b"19") || w.starts_with(b"20"))
            && w[..4].iter().all(u8::is_ascii_digit)
            && w[4] == b'-'
            && w[5..].iter().all(u8::is_ascii_digit))
        .then(|| &line[i..i + 7])
    })
}

#[test]
fn the_checks_recognise_what_they_look_for() {
    assert_eq!(commit_id("main at 6022d2e, whose"), Some("6022d2e"));
    assert_eq!(commit_id("sha256 of 1403770 bytes, defaced"), None);
    assert_eq!(date("measured 2026-11-27 14:25"), Some("2026-11"));
    assert_eq!(date("-o h100-vs-h200.html, 2,000 streams, 12026-1"), None);
    assert_eq!(
        slug("The client at scale: CPU per streamed token (issue #38)"),
        "the-client-at-scale-cpu-per-streamed-token-issue-38"
    );
    assert_eq!(
        slug("Latest: the request's task (16:20–17:20)"),
        "latest-the-requests-task-16201720"
    );
}

#[test]
fn readme_starts_with_the_two_commands() {
    let readme = read("README.md");
    let lines: Vec<&str> = readme.lines().collect();
    let open = lines
        .iter()
        .position(|l| l.starts_with("```"))
        .expect("README.md has no code block");
    assert!(
        open < 20,
        "the README's first code block (line {}) must be on its first screen",
        open + 1
    );
    let close = open
        + 1
        + lines[open + 1..]
            .iter()
            .position(|l| l.starts_with("```"))
            .expect("unclosed code block");
    let commands: Vec<&str> = lines[open + 1..close]
        .iter()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        commands,
        ["bash scripts/demo.sh", "bash scripts/test.sh"],
        "the README's first code block must be exactly the two commands"
    );
}

/// GitHub's anchor for a heading: lowercase, letters, digits, `-` and `_` kept, spaces made
/// `-`, everything else dropped.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors a Markdown file's headings (and any `id="…"` of its HTML) give, as GitHub
/// numbers repeated ones (`x`, `x-1`, …).
fn anchors(text: &str) -> HashSet<String> {
    let mut found = HashSet::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let base = slug(line[hashes..].trim());
            let mut anchor = base.clone();
            let mut n = 0;
            while found.contains(&anchor) {
                n += 1;
                anchor = format!("{base}-{n}");
            }
            found.insert(anchor);
        }
        for part in line.split("id=\"").skip(1) {
            if let Some(id) = part.split('"').next() {
                found.insert(id.to_string());
            }
        }
    }
    found
}

/// The targets of the inline links and images in a Markdown text's prose (outside code blocks
/// and code spans), with their line numbers.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in prose_lines(text) {
        // Odd pieces between backticks are code spans.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            let target = rest[..end].split_whitespace().next().unwrap_or("");
            found.push((n, target.trim_matches(['<', '>']).to_string()));
            rest = &rest[end..];
        }
    }
    found
}

/// `path` relative to the repository root, or None when it leaves the repository.
fn normalise(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(p) => out.push(p),
            _ => return None,
        }
    }
    Some(out)
}

#[test]
fn relative_links_in_the_documentation_resolve() {
    let root = root();
    let mut files = vec!["README.md".to_string(), "CONTRIBUTING.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| {
            e.expect("docs/ entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    files.extend(docs);

    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = read(file);
        let dir = Path::new(file)
            .parent()
            .expect("a file has a folder")
            .to_path_buf();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() {
                Some(PathBuf::from(file))
            } else {
                normalise(&dir.join(path))
            };
            let Some(resolved) = resolved else {
                broken.push(format!("{file}:{line}: {target} leaves the repository"));
                continue;
            };
            if resolved.starts_with("shared") || !root.join(&resolved).exists() {
                broken.push(format!(
                    "{file}:{line}: {target}: no {}",
                    resolved.display()
                ));
                continue;
            }
            let is_markdown = resolved.extension().is_some_and(|e| e == "md");
            if let (Some(anchor), true) = (anchor, is_markdown) {
                let in_target = read(&resolved.to_string_lossy());
                if !anchors(&in_target).contains(anchor) {
                    broken.push(format!(
                        "{file}:{line}: {target}: {} has no heading with anchor #{anchor}",
                        resolved.display()
                    ));
                }
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} relative links found: is the parser broken?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}
