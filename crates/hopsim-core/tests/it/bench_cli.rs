//! The benchmark command's handling of bad arguments: a user's mistake gets a line naming the
//! argument, the usage, and exit code 2 (not a panic and its backtrace).

use std::process::Command;

fn bench(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hopsim-bench")).args(args).output().expect("runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn missing_scenario_file_names_it_and_exits_2() {
    let (code, err) = bench(&["/nonexistent/scenario.json"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot read /nonexistent/scenario.json"), "{err}");
    assert!(err.contains("usage: hopsim-bench"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn malformed_scenario_and_unknown_option_exit_2() {
    let dir = std::env::temp_dir().join(format!("hopsim-bench-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"topology\": 3}").unwrap();
    let (code, err) = bench(&[bad.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("bad.json"), "{err}");
    let (code, err) = bench(&["--fast"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown option --fast"), "{err}");
}

#[test]
fn help_prints_usage_and_succeeds() {
    let out = Command::new(env!("CARGO_BIN_EXE_hopsim-bench")).arg("--help").output().expect("runs");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("SCENARIO.json"));
}
