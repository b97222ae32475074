//! The registries against their sources and their runs: every file of `src/fc` and `src/cc` is
//! compiled and every scheme file is registered (a file left out of `fc/mod.rs` is not compiled,
//! so its own tests would pass by not running); every scheme and algorithm reports exactly the
//! counters it declares; every scheme whose switch half reads the upstreamQ tag says so, so that
//! the run can refuse it a NIC half that never writes the tag.

use crate::common::*;
use hopsim_core::cc::{AnyCc, CcConfig, FlowInfo};
use hopsim_core::config::NetConfig;
use hopsim_core::fc::FcConfig;
use hopsim_core::params::WindowConfig;
use hopsim_core::topo::star;
use hopsim_core::{Rate, Time};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn src(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir)
}

/// The source without `//` comments.
fn uncommented(path: &Path) -> String {
    let s = std::fs::read_to_string(path).unwrap_or_default();
    s.lines().map(|l| l.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n")
}

/// The source without `//` comments and without its `#[cfg(test)]` items from the first one on
/// (unit tests sit at the end of a file).
fn code(path: &Path) -> String {
    uncommented(path).split("#[cfg(test)]").next().unwrap_or_default().to_string()
}

/// The modules a parent file declares (`mod x;`, `pub mod x;`) and the modules its registry
/// list names (`x::Variant(Config) =>`), by name.
fn declared_modules(parent: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut mods = BTreeSet::new();
    let mut entries = BTreeSet::new();
    for line in parent.lines().map(str::trim) {
        let l = line.strip_prefix("pub(crate) ").or_else(|| line.strip_prefix("pub ")).unwrap_or(line);
        if let Some(m) = l.strip_prefix("mod ").and_then(|m| m.strip_suffix(';')) {
            mods.insert(m.trim().to_string());
        }
        if line.contains("=> [") {
            if let Some((m, _)) = line.split_once("::") {
                entries.insert(m.trim().to_string());
            }
        }
    }
    (mods, entries)
}

/// Every `.rs` file under `dir` is a module its parent declares, and every file that declares
/// an entry (`impl ... Declared for`) is one of the registry list's entries.
fn check_folder(root: &Path, dir: &str) -> Vec<String> {
    let mut wrong = vec![];
    let (mods, entries) = declared_modules(&uncommented(&root.join("mod.rs")));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for path in files {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            // a folder of submodules: each file is declared by the module file beside it
            let parent = uncommented(&root.join(format!("{stem}.rs")));
            let (sub, _) = declared_modules(&parent);
            for f in std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()) {
                let s = f.file_stem().unwrap().to_string_lossy().to_string();
                if f.extension().is_some_and(|e| e == "rs") && !sub.contains(&s) {
                    wrong.push(format!("src/{dir}/{stem}/{s}.rs is not declared in src/{dir}/{stem}.rs, so it is never compiled"));
                }
            }
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") || stem == "mod" {
            continue;
        }
        if !mods.contains(&stem) && !entries.contains(&stem) {
            wrong.push(format!("src/{dir}/{stem}.rs is neither in the registry list nor a declared module of src/{dir}/mod.rs, so it is never compiled"));
        }
        if code(&path).contains("Declared for") && !entries.contains(&stem) {
            wrong.push(format!("src/{dir}/{stem}.rs declares an entry but has no line in src/{dir}/mod.rs's registry list"));
        }
    }
    wrong
}

#[test]
fn every_file_of_fc_and_cc_is_compiled_and_every_entry_is_registered() {
    let mut wrong = check_folder(&src("fc"), "fc");
    wrong.extend(check_folder(&src("cc"), "cc"));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The check itself, on a folder with a scheme file left out of the list and a submodule left
/// out of its parent.
#[test]
fn a_scheme_file_left_out_of_the_list_is_named() {
    let dir = std::env::temp_dir().join(format!("hopsim-registry-{}", std::process::id()));
    let fc = dir.join("fc");
    std::fs::create_dir_all(fc.join("tqp")).unwrap();
    std::fs::write(fc.join("mod.rs"), "pub mod nic;\nregistry! {\n    configured {\n        tqp::Tqp(TqpConfig) => [Tqp(tqp::Tqp)],\n    }\n}\n").unwrap();
    std::fs::write(fc.join("nic.rs"), "").unwrap();
    std::fs::write(fc.join("tqp.rs"), "mod pool;\n").unwrap();
    std::fs::write(fc.join("tqp/pool.rs"), "").unwrap();
    std::fs::write(fc.join("tqp/lost.rs"), "").unwrap();
    std::fs::write(fc.join("mine.rs"), "impl crate::registry::Declared for MineConfig {}\n").unwrap();
    let wrong = check_folder(&fc, "fc");
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(wrong.len(), 3, "{wrong:?}");
    assert!(wrong[0].starts_with("src/fc/mine.rs is neither"), "{wrong:?}");
    assert!(wrong[1].starts_with("src/fc/mine.rs declares an entry"), "{wrong:?}");
    assert!(wrong[2].starts_with("src/fc/tqp/lost.rs is not declared"), "{wrong:?}");
}

#[test]
fn every_scheme_reports_exactly_the_counters_it_declares() {
    let pfc = hopsim_core::fc::pfc::PfcConfig::default();
    for fc in FcConfig::all_defaults() {
        fc.check_declaration(&pfc).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// The same after a run: an incast into one switch, with each scheme, reports in its summary
/// exactly the counters the scheme declares (no algorithm runs, so none of its counters).
#[test]
fn every_scheme_run_reports_exactly_its_declared_counters() {
    let t = star(9, Rate::gbps(100), Time::from_us(1));
    let flows: Vec<_> = (1..=8).map(|s| flow(s, 0, 200_000, Time::from_us(1))).collect();
    for (fc, entry) in FcConfig::all_defaults().into_iter().zip(FcConfig::registry()) {
        let mut cfg = NetConfig { fc: fc.clone(), cc: CcConfig::None, ..Default::default() };
        cfg.switch.buffer_bytes = 400_000;
        cfg.switch.lossless = fc.pauses();
        cfg.switch.nqueues = 8;
        cfg.host.window = WindowConfig::Off;
        let r = run(&t, &flows, cfg);
        let reported: BTreeSet<&str> = r.modules.keys().map(String::as_str).filter(|k| *k != "ein_marks").collect();
        let declared: BTreeSet<&str> = entry.counters.iter().copied().collect();
        assert_eq!(reported, declared, "scheme `{}`", entry.name);
    }
}

#[test]
fn every_algorithm_reports_exactly_the_counters_it_declares() {
    let info = FlowInfo { line_rate: Rate::gbps(100), base_rtt: Time::from_us(8), mtu: 1000 };
    for (cc, entry) in CcConfig::all_defaults().into_iter().zip(CcConfig::registry()) {
        let mut out = vec![];
        hopsim_core::cc::CongestionControl::counters(&AnyCc::build(&cc, &info), &mut out);
        let reported: BTreeSet<&str> = out.iter().map(|(k, _)| *k).collect();
        let declared: BTreeSet<&str> = entry.counters.iter().copied().collect();
        assert_eq!(reported, declared, "algorithm `{}`", entry.name);
    }
}

/// A scheme file whose switch half reads `tags.upstream_q` (not only writes it) declares
/// `reads_upstream_q`, so that the run checks its NIC half writes the tag.
#[test]
fn every_scheme_that_reads_upstream_q_declares_it() {
    let schemes = FcConfig::all_defaults();
    for e in std::fs::read_dir(src("fc")).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let c = code(&path);
        let reads = c.match_indices("tags.upstream_q").any(|(i, m)| {
            let rest = c[i + m.len()..].trim_start();
            !(rest.starts_with('=') && !rest.starts_with("=="))
        });
        if !reads {
            continue;
        }
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let scheme = schemes.iter().find(|s| s.name() == stem).unwrap_or_else(|| panic!("src/fc/{stem}.rs reads upstreamQ but is no scheme"));
        assert!(scheme.reads_upstream_q(), "src/fc/{stem}.rs reads upstreamQ; its scheme must declare `reads_upstream_q`");
        assert!(scheme.check_declaration(&Default::default()).is_ok());
    }
}
