//! Bakes the Rust sources this extension is built from into it (`_native.rust_sources()`), so
//! that `hopsim plugin build` can build a user's scheme crate against exactly this core from any
//! installation: a wheel holds no `crates/` folder, and a copy beside the package would go stale
//! in an editable install. The sources: the core, this binding, the example plugin (an optional
//! path dependency, which cargo reads even when its feature is off), the workspace's lock file
//! and its release profile.

use std::path::{Path, PathBuf};

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.file_name().is_some_and(|n| n == "target" || n.to_string_lossy().starts_with('.')) {
            continue;
        }
        if p.is_dir() {
            walk(root, &p, out);
        } else if let Ok(text) = std::fs::read_to_string(&p) {
            let rel = p.strip_prefix(root).expect("under the root").to_string_lossy().replace('\\', "/");
            out.push((rel, text));
        }
    }
}

fn main() {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = here.join("../..");
    let mut files = vec![];
    for part in ["crates/hopsim-core", "crates/hopsim-py", "examples/buffer-pause-plugin", "Cargo.lock", "Cargo.toml"] {
        let p = root.join(part);
        println!("cargo:rerun-if-changed={}", p.display());
        if p.is_dir() {
            walk(&root, &p, &mut files);
        } else if let Ok(text) = std::fs::read_to_string(&p) {
            files.push((part.to_string(), text));
        }
    }
    let map: serde_json::Map<String, serde_json::Value> = files.into_iter().map(|(k, v)| (k, serde_json::Value::String(v))).collect();
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("sources.json");
    std::fs::write(out, serde_json::to_string(&map).expect("text serialises")).expect("OUT_DIR is writable");
}
