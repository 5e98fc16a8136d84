//! Every path that a comment, a test or a page names exists in the
//! repository, so a reader who follows a reference finds what it points at.
//!
//! The check reads every `*.rs`, `*.md`, `*.py`, `*.mjs` and `*.sh` file (and
//! the shell scripts without an extension) and looks at:
//!
//! - words that start like a path of the repository (`docs/...`,
//!   `server/src/...`, `tests/...`; see [`ROOTS`]): the file or directory must
//!   exist, and an `#anchor` on a Markdown file must be one of its headings;
//! - Markdown links `[text](target)`, resolved from the page's directory, the
//!   same way;
//! - names of documents kept outside the repository, which are refused
//!   wherever they appear (see [`refused`]).
//!
//! Words followed by a placeholder (`tests/sdk/test_<file>.py`,
//! `server/src/ops/{name}.rs`) are templates and are not checked.
//! How to fix a failure: point the reference at the page of `docs/` that
//! explains the subject (README.md, "Contributing").

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

/// First segments of the paths this check recognises in running text.
const ROOTS: &[&str] = &[
    "docs/",
    "server/",
    "blobstore/",
    "leases/",
    "client/",
    "tests/",
    "bench/",
    "fuzz/",
    "scripts/",
    "spec/",
];

/// Top-level files that are named bare (`README.md#contributing`).
const TOP_FILES: &[&str] = &[
    "README.md",
    "COMPATIBILITY.md",
    "Cargo.toml",
    "LICENSE-MIT",
    "LICENSE-APACHE",
];

/// Pages of `docs/wire/` that branches in flight add; `docs/README.md` links
/// them already. When one of them lands, remove it from this list (the test
/// `pending_pages_are_still_pending` says so).
const PENDING: &[&str] = &[];

/// Directories never read: build output, installed packages, fuzz inputs.
const SKIPPED_DIRS: &[&str] = &[".git", "target", "node_modules", ".venv-sdk", "corpus"];

/// This file: its examples are paths of a made-up repository.
const SELF: &str = "tests/tests/references.rs";

/// File types that are read.
const EXTENSIONS: &[&str] = &["rs", "md", "py", "mjs", "sh"];

/// Text that names documents outside the repository: the notes the code was
/// first written against (`spec/NN-...`, the design and style notes), the
/// directory beside the repository that held them, and paths of one
/// machine. Built from pieces so that this file does not refuse itself.
fn refused() -> Vec<(String, &'static str)> {
    let md = ".md";
    vec![
        (
            ["DESIGN", md].concat(),
            "a design note outside the repository; docs/architecture.md explains the design",
        ),
        (
            ["STYLE", md].concat(),
            "a style note outside the repository; README.md (Contributing) has the rules",
        ),
        (
            ["..", "/shared/"].concat(),
            "a directory outside the repository",
        ),
        (["/wo", "rk/"].concat(), "a path of one machine"),
        (["/ro", "ot/"].concat(), "a path of one machine"),
    ]
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is inside the repository")
        .to_path_buf()
}

/// The files to read, relative to the root, in a stable order.
fn files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![PathBuf::new()];
    while let Some(dir) = dirs.pop() {
        let mut entries: Vec<_> = fs::read_dir(root.join(&dir))
            .expect("readable directory")
            .map(|e| e.expect("directory entry"))
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = dir.join(&name);
            // Symbolic links lead to shared installs (.venv-sdk, node_modules).
            let kind = fs::symlink_metadata(entry.path()).expect("metadata");
            if kind.file_type().is_symlink() {
                continue;
            }
            if kind.is_dir() {
                if !SKIPPED_DIRS.contains(&name.as_str()) {
                    dirs.push(rel);
                }
            } else if is_read(&entry.path(), &name) {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

fn is_read(path: &Path, name: &str) -> bool {
    match name.rsplit_once('.') {
        Some((_, ext)) => EXTENSIONS.contains(&ext),
        // Scripts without an extension: scripts/test, tests/sdk/run, ...
        None => fs::read(path)
            .map(|b| {
                b.starts_with(b"#!")
                    && b.split(|&c| c == b'\n')
                        .next()
                        .is_some_and(|l| l.ends_with(b"sh"))
            })
            .unwrap_or(false),
    }
}

/// GitHub's anchor for a heading: lowercase, punctuation dropped (but `-`
/// and `_`), spaces turned into `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file: its headings, outside code blocks, and
/// explicit `<a id="...">` / `<a name="...">`.
fn anchors(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            out.push(slug(&line[hashes..]));
        }
        for marker in ["<a id=\"", "<a name=\""] {
            let mut rest = line;
            while let Some(i) = rest.find(marker) {
                rest = &rest[i + marker.len()..];
                if let Some(end) = rest.find('"') {
                    out.push(rest[..end].to_owned());
                }
            }
        }
    }
    out
}

struct Checker {
    root: PathBuf,
    anchors: HashMap<PathBuf, Vec<String>>,
    problems: Vec<String>,
}

impl Checker {
    /// Checks `target` (a path relative to the root, with an optional
    /// `#anchor`), named at `at`.
    fn check(&mut self, at: &str, target: &str) {
        let (path, anchor) = match target.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (target, None),
        };
        let normal = normalise(path);
        let Some(normal) = normal else {
            self.problems
                .push(format!("{at}: `{target}` leaves the repository"));
            return;
        };
        let full = self.root.join(&normal);
        if !full.exists() {
            let pending = PENDING.iter().any(|p| Path::new(p) == normal);
            if !pending {
                self.problems
                    .push(format!("{at}: `{target}` does not exist in the repository"));
            }
            return;
        }
        let (Some(anchor), true) = (anchor, path.ends_with(".md")) else {
            return;
        };
        if anchor.is_empty() {
            return;
        }
        let known = self
            .anchors
            .entry(normal.clone())
            .or_insert_with(|| anchors(&fs::read_to_string(&full).unwrap_or_default()));
        if !known.iter().any(|a| a == anchor) {
            self.problems.push(format!(
                "{at}: `{target}`: {} has no heading with anchor `#{anchor}`",
                normal.display()
            ));
        }
    }
}

/// `a/./b/../c` as `a/c`; `None` when it climbs out of the root.
fn normalise(path: &str) -> Option<PathBuf> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.iter().collect())
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/' | '#')
}

/// The path-like words of one line: (byte offset, word, the character after).
fn words(line: &str) -> Vec<(usize, &str, Option<char>)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line
        .char_indices()
        .chain(std::iter::once((line.len(), ' ')))
    {
        match (start, is_path_char(c) && i < line.len()) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                let next = line[i..].chars().next();
                out.push((s, &line[s..i], next));
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// The targets of the Markdown links `](target)` of one line.
fn link_targets(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find(')') {
            out.push(rest[..end].trim());
        }
    }
    out
}

fn check_repository(root: &Path) -> Vec<String> {
    let refused = refused();
    let mut checker = Checker {
        root: root.to_path_buf(),
        anchors: HashMap::new(),
        problems: Vec::new(),
    };
    for rel in files(root) {
        if rel == Path::new(SELF) {
            continue;
        }
        let Ok(text) = fs::read_to_string(root.join(&rel)) else {
            continue;
        };
        let shown = rel.display().to_string();
        let markdown = shown.ends_with(".md");
        let dir = rel.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut in_code = false;
        for (n, line) in text.lines().enumerate() {
            let at = format!("{shown}:{}", n + 1);
            for (text, why) in &refused {
                if line.contains(text.as_str()) {
                    checker
                        .problems
                        .push(format!("{at}: names `{text}`: {why}"));
                }
            }
            if refused_spec_file(line) {
                checker.problems.push(format!(
                    "{at}: names a file of the old spec directory; point at the page of docs/wire/ that explains it"
                ));
            }
            if markdown && line.trim_start().starts_with("```") {
                in_code = !in_code;
            }
            for (offset, word, next) in words(line) {
                if matches!(next, Some('<' | '{' | '*' | '$' | '[')) {
                    continue;
                }
                // A Markdown link's target is resolved from the page below.
                if markdown && line[..offset].ends_with("](") {
                    continue;
                }
                let word = word.trim_end_matches(['.', ',', '-', '#']);
                if !names_a_file(word) {
                    continue;
                }
                let top = TOP_FILES
                    .iter()
                    .any(|f| word == *f || word.starts_with(&format!("{f}#")));
                let rooted = ROOTS.iter().any(|r| word.starts_with(r)) && word.len() > 1;
                if top || rooted {
                    checker.check(&at, word);
                }
            }
            if markdown && !in_code {
                for target in link_targets(line) {
                    if target.contains("://") || target.starts_with("mailto:") {
                        continue;
                    }
                    if let Some(anchor) = target.strip_prefix('#') {
                        let own = format!("{}#{anchor}", rel.display());
                        checker.check(&at, &own);
                    } else {
                        let joined = format!("{}/{target}", dir.display());
                        checker.check(&at, joined.trim_start_matches('/'));
                    }
                }
            }
        }
    }
    checker.problems
}

/// Whether a word reads as a path of the repository rather than, say, a
/// benchmark id (`leases/apply/renew-leased`): its last segment has an
/// extension, or it ends in `/`. Installed packages (`node_modules`) are not
/// part of the repository.
fn names_a_file(word: &str) -> bool {
    let path = word.split('#').next().unwrap_or(word);
    let last = path.rsplit('/').next().unwrap_or(path);
    !path.contains("node_modules/") && (path.ends_with('/') || last.contains('.'))
}

/// `spec/` followed by two digits and `-`: a file of the old spec directory.
fn refused_spec_file(line: &str) -> bool {
    let needle = ["spec", "/"].concat();
    line.match_indices(needle.as_str()).any(|(i, _)| {
        let rest = &line.as_bytes()[i + needle.len()..];
        rest.len() >= 3 && rest[0].is_ascii_digit() && rest[1].is_ascii_digit() && rest[2] == b'-'
    })
}

#[test]
fn every_referenced_path_exists() {
    let problems = check_repository(&repo_root());
    assert!(
        problems.is_empty(),
        "{} reference(s) to nothing:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn pending_pages_are_still_pending() {
    let root = repo_root();
    let landed: Vec<_> = PENDING.iter().filter(|p| root.join(p).exists()).collect();
    assert!(
        landed.is_empty(),
        "{landed:?} exist now: remove them from PENDING in tests/tests/references.rs"
    );
}

/// The checker itself, on a small repository of its own.
#[test]
fn the_checker_finds_what_it_should() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("docs/wire")).unwrap();
    fs::create_dir_all(root.join("server/src")).unwrap();
    fs::write(root.join("docs/wire/blobs.md"), "# Blobs\n\n## Put Blob\n").unwrap();
    fs::write(root.join("server/src/lib.rs"), "").unwrap();
    let refs = [
        "// docs/wire/blobs.md#put-blob, server/src/lib.rs and server/src/.",
        "// tests/sdk/test_<file>.py is a template, not a path.",
        "// docs/wire/blobs.md#get-blob",
        "// server/src/main.rs",
        &["// see ", "spec", "/10-operations.md"].concat(),
        &["// see ", "DESIGN", ".md"].concat(),
    ]
    .join("\n");
    fs::write(root.join("server/src/refs.rs"), refs).unwrap();
    fs::write(
        root.join("docs/README.md"),
        "[blobs](wire/blobs.md#put-blob), [gone](wire/gone.md), [here](#index)\n\n# Index\n",
    )
    .unwrap();
    let problems = check_repository(root);
    let lines: Vec<&str> = problems
        .iter()
        .map(|p| p.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            "docs/README.md:1",
            "server/src/refs.rs:3",
            "server/src/refs.rs:4",
            "server/src/refs.rs:5",
            "server/src/refs.rs:5",
            "server/src/refs.rs:6",
        ],
        "{problems:#?}"
    );
}
