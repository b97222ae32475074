//! The core's layering (`src/lib.rs`'s module doc): no module uses a module of a higher layer.
//!
//! The layer table is the one in `src/lib.rs`, its `pub mod` lines grouped under `// Layer <name>:`
//! lines, bottom first; this test reads it rather than keeping a copy. It reads every source file
//! of the crate, drops comments, literals and `#[cfg(test)]` items (unit tests may reach up to
//! build what they test), and checks each `crate::` path, and each `super::` path that climbs to
//! the crate root, against the table.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The layers, bottom first, and the top-level names (modules and the root's re-exports) each
/// holds, read from `lib.rs`.
struct Table {
    layers: Vec<String>,
    /// Top-level module, or name re-exported at the root, to its layer's index.
    layer_of: BTreeMap<String, usize>,
    modules: BTreeSet<String>,
}

fn read_table(lib: &str) -> Table {
    let mut t = Table { layers: vec![], layer_of: BTreeMap::new(), modules: BTreeSet::new() };
    for line in lib.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("// Layer ") {
            let name = rest.split(':').next().unwrap_or_default().trim();
            assert!(!name.is_empty(), "lib.rs: a layer line without a name: {line}");
            t.layers.push(name.to_string());
        } else if let Some(m) = line.strip_prefix("pub mod ").or_else(|| line.strip_prefix("mod ")) {
            let m = m.trim_end_matches(';').trim().to_string();
            assert!(!t.layers.is_empty(), "lib.rs: module `{m}` comes before the first `// Layer` line");
            assert!(t.layer_of.insert(m.clone(), t.layers.len() - 1).is_none(), "lib.rs: module `{m}` is declared twice");
            t.modules.insert(m);
        }
    }
    // the root's re-exports count as the module they come from (`crate::NetConfig` is `config`'s)
    for line in lib.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("pub use ") {
            let module = rest.split("::").next().unwrap_or_default().to_string();
            let layer = *t.layer_of.get(&module).unwrap_or_else(|| panic!("lib.rs: `{line}` re-exports from an unknown module"));
            let names = rest[module.len() + 2..].trim_end_matches(';').trim_matches(|c| c == '{' || c == '}');
            for n in names.split(',').map(|n| n.trim().rsplit("::").next().unwrap_or_default()) {
                t.layer_of.insert(n.to_string(), layer);
            }
        }
    }
    t
}

/// The source with comments, string and char literals blanked (newlines kept), so that
/// neither a path in a doc comment nor a brace in a string counts.
fn code_only(s: &str) -> String {
    let b: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                blank(&mut out, b[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !b.get(i.wrapping_sub(1)).is_some_and(|p| p.is_alphanumeric() || *p == '_') {
            // raw string r"..." or r#"..."#
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for &ch in &b[i..j.min(b.len())] {
                blank(&mut out, ch);
            }
            i = j;
        } else if c == '"' {
            blank(&mut out, c);
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    blank(&mut out, b[i]);
                    i += 1;
                }
                if i < b.len() {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
            if i < b.len() {
                blank(&mut out, b[i]);
                i += 1;
            }
        } else if c == '\'' && (next == Some('\\') || b.get(i + 2) == Some(&'\'')) {
            // a char literal ('x', '\n', '\u{..}'); a lifetime ('a) has no closing quote
            let mut j = i + 1;
            if b[j] == '\\' {
                j += 2;
            } else {
                j += 1;
            }
            while j < b.len() && b[j] != '\'' {
                j += 1;
            }
            for &ch in &b[i..=j.min(b.len() - 1)] {
                blank(&mut out, ch);
            }
            i = j + 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// `code` with every item under a `#[cfg(test)]` attribute blanked, and the names of the
/// test-only modules it declares out of line (`#[cfg(test)] mod name;`).
fn drop_test_items(code: &str) -> (String, Vec<String>) {
    let mut b: Vec<char> = code.chars().collect();
    let pat: Vec<char> = "#[cfg(test)]".chars().collect();
    let mut outlined = vec![];
    let mut i = 0;
    while i + pat.len() <= b.len() {
        if b[i..i + pat.len()] != pat[..] {
            i += 1;
            continue;
        }
        let start = i;
        let mut j = i + pat.len();
        // further attributes, then the item: up to its `;` or its matching `}`
        loop {
            while j < b.len() && b[j].is_whitespace() {
                j += 1;
            }
            if b.get(j) == Some(&'#') {
                while j < b.len() && b[j] != ']' {
                    j += 1;
                }
                j += 1;
            } else {
                break;
            }
        }
        let item_start = j;
        let mut depth = 0usize;
        while j < b.len() {
            match b[j] {
                ';' if depth == 0 => break,
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        let item: String = b[item_start..j.min(b.len())].iter().collect();
        let words: Vec<&str> = item.split_whitespace().collect();
        if let ["mod", name] | ["pub", "mod", name] | ["pub(crate)", "mod", name] = words[..] {
            outlined.push(name.to_string());
        }
        let end = (j + 1).min(b.len());
        for ch in &mut b[start..end] {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
        i = j + 1;
    }
    (b.into_iter().collect(), outlined)
}

fn ident_at(s: &[char], mut i: usize) -> (String, usize) {
    let mut id = String::new();
    while i < s.len() && (s[i].is_alphanumeric() || s[i] == '_') {
        id.push(s[i]);
        i += 1;
    }
    (id, i)
}

/// The first segment of every path in `code` that starts at the crate root: `crate::x`, each
/// item of `crate::{x, y::z}`, and `super::` chains that climb from `module` (the file's module
/// path, `["fc", "view"]` for `fc/view.rs`) to the root.
fn root_uses(code: &str, module: &[String]) -> BTreeSet<String> {
    let s: Vec<char> = code.chars().collect();
    let mut out = BTreeSet::new();
    let mut i = 0;
    while i < s.len() {
        let boundary = i == 0 || !(s[i - 1].is_alphanumeric() || s[i - 1] == '_' || s[i - 1] == ':');
        let (word, end) = ident_at(&s, i);
        if word.is_empty() {
            i += 1;
            continue;
        }
        if !boundary {
            i = end;
            continue;
        }
        let mut at_root = None;
        if word == "crate" && s.get(end) == Some(&':') && s.get(end + 1) == Some(&':') {
            at_root = Some(end + 2);
        } else if word == "super" {
            let mut ups = 0;
            let mut j = i;
            loop {
                let (w, e) = ident_at(&s, j);
                if w != "super" || s.get(e) != Some(&':') || s.get(e + 1) != Some(&':') {
                    break;
                }
                ups += 1;
                j = e + 2;
            }
            if ups > 0 && ups == module.len() {
                at_root = Some(j);
            }
        }
        let Some(k) = at_root else {
            i = end;
            continue;
        };
        if s.get(k) == Some(&'{') {
            // the first identifier of each comma-separated item at depth 1
            let (mut depth, mut j, mut want) = (0usize, k, true);
            while j < s.len() {
                match s[j] {
                    '{' => {
                        depth += 1;
                        want = depth == 1;
                        j += 1;
                    }
                    '}' => {
                        depth -= 1;
                        j += 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => {
                        want = true;
                        j += 1;
                    }
                    c if c.is_alphabetic() || c == '_' => {
                        let (id, e) = ident_at(&s, j);
                        if want && depth == 1 {
                            out.insert(id);
                        }
                        want = false;
                        j = e;
                    }
                    _ => j += 1,
                }
            }
            i = j;
        } else {
            let (id, e) = ident_at(&s, k);
            if !id.is_empty() {
                out.insert(id);
            }
            i = e;
        }
    }
    out
}

/// Every source file of the library (not `lib.rs`, not `bin/`), with its module path, leaving
/// out files that are `#[cfg(test)]` modules.
fn sources(root: &Path) -> Vec<(PathBuf, Vec<String>, String)> {
    let mut files = vec![];
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut test_only: BTreeSet<PathBuf> = BTreeSet::new();
    let mut out = vec![];
    let mut parsed = vec![];
    for p in files {
        let rel = p.strip_prefix(root).unwrap().to_path_buf();
        let parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
        if parts[0] == "lib.rs" || parts[0] == "bin" {
            continue;
        }
        let mut module: Vec<String> = parts.iter().map(|c| c.trim_end_matches(".rs").to_string()).collect();
        if module.last().is_some_and(|m| m == "mod") {
            module.pop();
        }
        let (code, outlined) = drop_test_items(&code_only(&std::fs::read_to_string(&p).unwrap()));
        // where this file's out-of-line child modules live
        let dir = root.join(module.join("/"));
        for name in outlined {
            test_only.insert(dir.join(format!("{name}.rs")));
            test_only.insert(dir.join(&name));
        }
        parsed.push((p, rel, module, code));
    }
    for (p, rel, module, code) in parsed {
        if test_only.iter().any(|t| p.starts_with(t)) {
            continue;
        }
        out.push((rel, module, code));
    }
    out
}

#[test]
fn no_module_uses_a_module_of_a_higher_layer() {
    let root = src();
    let t = read_table(&std::fs::read_to_string(root.join("lib.rs")).unwrap());
    assert!(t.layers.len() >= 2, "lib.rs: no layer table found (`// Layer <name>:` lines over `pub mod` groups)");
    let mut errors = vec![];
    let mut seen = BTreeSet::new();
    for (rel, module, code) in sources(&root) {
        let top = &module[0];
        seen.insert(top.clone());
        let Some(&own) = t.layer_of.get(top) else {
            errors.push(format!("src/{}: module `{top}` is in no layer of lib.rs's table", rel.display()));
            continue;
        };
        for used in root_uses(&code, &module) {
            if &used == top {
                continue;
            }
            let Some(&theirs) = t.layer_of.get(&used) else {
                errors.push(format!("src/{}: uses `crate::{used}`, which is in no layer of lib.rs's table", rel.display()));
                continue;
            };
            if theirs > own {
                errors.push(format!(
                    "src/{}: module `{top}` (layer {}) uses `crate::{used}` (layer {}), a higher layer",
                    rel.display(),
                    t.layers[own],
                    t.layers[theirs]
                ));
            }
        }
    }
    for m in t.modules.difference(&seen) {
        errors.push(format!("lib.rs: module `{m}` has no source file"));
    }
    assert!(errors.is_empty(), "dependencies must run down the layers (src/lib.rs):\n{}", errors.join("\n"));
}

#[test]
fn the_reader_sees_paths_only_in_code() {
    let code = code_only("use crate::a; // crate::b\n/* crate::c */ let s = \"crate::d\"; let c = '{'; fn f<'x>() {}\n");
    let (code, _) = drop_test_items(&code);
    let uses = root_uses(&code, &["m".to_string()]);
    assert_eq!(uses, BTreeSet::from(["a".to_string()]));
    let (code, outlined) = drop_test_items("use crate::{x, y::{z, w}};\n#[cfg(test)]\nmod tests { use crate::t; }\n#[cfg(test)]\nmod more;\n");
    assert_eq!(root_uses(&code, &["m".to_string()]), BTreeSet::from(["x".to_string(), "y".to_string()]));
    assert_eq!(outlined, vec!["more".to_string()]);
    assert_eq!(root_uses("use super::super::k;", &["p".to_string(), "q".to_string()]), BTreeSet::from(["k".to_string()]));
    assert!(root_uses("use super::k;", &["p".to_string(), "q".to_string()]).is_empty());
}
