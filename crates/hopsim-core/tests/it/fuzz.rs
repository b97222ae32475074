//! Property-based fuzzing of the core's readers, bounded for CI (256 cases each, a fixed seed per
//! test so a failure reproduces): whatever the input, a reader returns an error with a message or
//! a value, and never panics.
//!
//! - The scenario JSON the front hands over: random mutations (values replaced by awkward ones,
//!   keys deleted or added, array elements repeated) of six valid scenarios that between them use
//!   every topology and workload kind, every flow-control scheme and congestion control, faults
//!   and the recorders (`fuzz/*.json`, written by the Python front). What deserialises is built
//!   (topology, flows, network: the core's validation) and run for one checkpoint's worth of
//!   events.
//! - The CDF reader (`workload/cdf.rs`), on arbitrary text and on lines of awkward numbers; what
//!   it accepts is sampled and drawn flows from.
//! - The HPCC topology and flow-file readers (`topo/hpcc_file.rs`, `workload/flow_file.rs`), on
//!   arbitrary text and on files of the right shape with awkward fields; a topology they accept is
//!   assembled into a network.

use hopsim_core::config::NetConfig;
use hopsim_core::progress::Watch;
use hopsim_core::rng::Rng;
use hopsim_core::scenario::Scenario;
use hopsim_core::topo::hpcc_file::read_hpcc_file;
use hopsim_core::workload::cdf::Cdf;
use hopsim_core::workload::flow_file::read_hpcc_flows;
use hopsim_core::Simulation;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{json, Value};
use std::time::Duration;

const BASES: [(&str, &str); 6] = [
    ("star_flows", include_str!("fuzz/star_flows.json")),
    ("leafspine_incastmix", include_str!("fuzz/leafspine_incastmix.json")),
    ("hpcc_files", include_str!("fuzz/hpcc_files.json")),
    ("fattree_background", include_str!("fuzz/fattree_background.json")),
    ("explicit_incast", include_str!("fuzz/explicit_incast.json")),
    ("dumbbell_longlived", include_str!("fuzz/dumbbell_longlived.json")),
];

/// 256 cases from a fixed seed: the same cases on every run. For a longer hunt,
/// `HOPSIM_FUZZ_CASES=20000 HOPSIM_FUZZ_SEED=3 cargo test --release --test it fuzz`.
fn runner() -> TestRunner {
    let env = |k: &str, d: u32| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let config = Config { cases: env("HOPSIM_FUZZ_CASES", 256), failure_persistence: None, ..Config::default() };
    let seed = [env("HOPSIM_FUZZ_SEED", 7) as u8; 32];
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed))
}

/// An error is a sentence, not an empty string.
fn clean(e: &str) -> Result<(), TestCaseError> {
    prop_assert!(!e.trim().is_empty(), "an error without a message");
    Ok(())
}

// ------------------------------------------------------------------ scenario JSON

/// Values that break assumptions: zero, one, negative, the edges of the integer types, huge and
/// tiny floats, short strings (including the keywords the schema uses), empty containers.
fn awkward_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop::sample::select(vec![0i64, 1, 2, 3, 7, 17, -1, -1000, i64::MIN]).prop_map(|x| json!(x)),
        prop::sample::select(vec![u64::MAX, 1 << 32, 1 << 53, u32::MAX as u64]).prop_map(|x| json!(x)),
        prop::sample::select(vec![0.0, 0.5, -0.5, 1.5, 1e300, -1e300, 1e-300, 0.999_999_999_9, 2.0])
            .prop_map(|x| json!(x)),
        "[a-z_]{0,8}".prop_map(Value::String),
        prop::sample::select(vec![
            "none", "pfc", "auto", "off", "dynamic", "static", "hopsim", "hpcc", "down", "up", "drr", "strict", "rank",
            "Poisson", "bdp", "lowercase", "Host", "Switch", "", "\u{0}", "1e400", "NaN",
        ])
        .prop_map(|s| json!(s)),
        Just(json!([])),
        Just(json!({})),
        Just(json!([0, 1])),
        Just(json!([[0, 1]])),
        Just(json!({"Switch": {"tier": 9}})),
    ]
}

#[derive(Clone, Debug)]
enum Mutation {
    /// Replace the value at path `n` (modulo the number of paths).
    Replace(usize, Value),
    /// Remove the object key or array element at path `n`.
    Delete(usize),
    /// Add a key to the object at or above path `n`.
    AddKey(usize, String, Value),
    /// Repeat the array element at path `n`.
    Repeat(usize),
    /// Replace the value at path `n` by another of the same kind (`k` picks it), which gets
    /// past deserialisation to the checks behind it.
    Tweak(usize, usize),
}

const NUMBERS: [f64; 14] = [0.0, 1.0, 2.0, 3.0, 17.0, -1.0, 0.5, 1.5, 1e-9, 1e300, 4294967295.0, 4294967296.0, 9007199254740992.0, 18446744073709551615.0];
const WORDS: [&str; 14] = ["", "none", "auto", "off", "pfc", "hpcc", "down", "up", "strict", "rank", "x", "0", "1e400", "NaN"];

/// Settings whose small values mean very many events or flows (a burst every picosecond), which
/// a run may legitimately hold but a bounded test cannot: tweaked to zero or large values only.
const RATE_KEYS: [&str; 6] = ["Period", "period", "queue_interval", "buffer_interval", "interval", "dump_interval"];

/// `v` for a setting named `key`, with a small positive number scaled to microseconds for
/// the settings of [`RATE_KEYS`].
fn tame(key: &str, v: Value) -> Value {
    match v.as_f64() {
        Some(x) if RATE_KEYS.contains(&key) && x > 0.0 && x < 1e6 => json!((x * 1e6) as u64),
        _ => v,
    }
}

fn tweak(v: &Value, k: usize) -> Value {
    match v {
        Value::Number(n) => {
            let x = NUMBERS[k % NUMBERS.len()];
            // integers stay integers (where they fit), so a count gets a count
            if (n.is_u64() || n.is_i64()) && x.fract() == 0.0 {
                if x < 0.0 {
                    json!(x as i64)
                } else {
                    json!(x as u64)
                }
            } else {
                json!(x)
            }
        }
        Value::Bool(b) => json!(!b),
        Value::String(_) => json!(WORDS[k % WORDS.len()]),
        Value::Array(a) => match k % 3 {
            0 => json!([]),
            1 => Value::Array(a.iter().chain(a.iter()).cloned().collect()),
            _ => Value::Array(a.iter().rev().cloned().collect()),
        },
        Value::Object(o) => {
            let mut o = o.clone();
            if let Some(key) = o.keys().nth(k % o.len().max(1)).cloned() {
                o.remove(&key);
            }
            Value::Object(o)
        }
        Value::Null => json!(NUMBERS[k % NUMBERS.len()] as u64),
    }
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), awkward_value()).prop_map(|(n, v)| Mutation::Replace(n, v)),
        2 => any::<usize>().prop_map(Mutation::Delete),
        1 => (any::<usize>(), "[a-z_]{1,6}", awkward_value()).prop_map(|(n, k, v)| Mutation::AddKey(n, k, v)),
        1 => any::<usize>().prop_map(Mutation::Repeat),
        8 => (any::<usize>(), any::<usize>()).prop_map(|(n, k)| Mutation::Tweak(n, k)),
    ]
}

/// A step of a path into a JSON value.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

fn paths(v: &Value, here: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(here.clone());
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                here.push(Step::Key(k.clone()));
                paths(c, here, out);
                here.pop();
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                here.push(Step::Index(i));
                paths(c, here, out);
                here.pop();
            }
        }
        _ => {}
    }
}

fn at<'a>(v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(v, |v, s| match s {
        Step::Key(k) => &mut v[k.as_str()],
        Step::Index(i) => &mut v[*i],
    })
}

/// The name of the last key on `path` ("" for an array element or the root).
fn last_key(path: &[Step]) -> String {
    match path.last() {
        Some(Step::Key(k)) => k.clone(),
        _ => String::new(),
    }
}

/// Apply `m` to `v`; returns the path it acted on, for messages.
fn apply(v: &mut Value, m: &Mutation) -> String {
    let mut all = vec![];
    paths(v, &mut vec![], &mut all);
    let pick = |n: usize| all[n % all.len()].clone();
    let n = match m {
        Mutation::Replace(n, _) | Mutation::Delete(n) | Mutation::AddKey(n, _, _) | Mutation::Repeat(n) | Mutation::Tweak(n, _) => *n,
    };
    let shown = pick(n).iter().map(|s| match s {
        Step::Key(k) => k.clone(),
        Step::Index(i) => i.to_string(),
    }).collect::<Vec<_>>().join(".");
    match m {
        Mutation::Replace(n, x) => {
            let p = pick(*n);
            *at(v, &p) = tame(&last_key(&p), x.clone());
        }
        Mutation::Tweak(n, k) => {
            let p = pick(*n);
            let target = at(v, &p);
            *target = tame(&last_key(&p), tweak(target, *k));
        }
        Mutation::Delete(n) => {
            let p = pick(*n);
            if let Some((last, parent)) = p.split_last() {
                match (at(v, parent), last) {
                    (Value::Object(o), Step::Key(k)) => {
                        o.remove(k);
                    }
                    (Value::Array(a), Step::Index(i)) => {
                        a.remove(*i);
                    }
                    _ => {}
                }
            }
        }
        Mutation::AddKey(n, k, x) => {
            let mut p = pick(*n);
            loop {
                if let Value::Object(o) = at(v, &p) {
                    o.insert(k.clone(), x.clone());
                    break;
                }
                if p.pop().is_none() {
                    break;
                }
            }
        }
        Mutation::Repeat(n) => {
            let p = pick(*n);
            if let Some((Step::Index(i), parent)) = p.split_last() {
                if let Value::Array(a) = at(v, parent) {
                    let x = a[*i].clone();
                    a.insert(*i, x);
                }
            }
        }
    }
    shown
}

/// Deserialise, build (the core's validation) and run up to the first checkpoint: errors must
/// say something, nothing may panic.
fn check_scenario(text: &str) -> Result<(), TestCaseError> {
    let sc = match Scenario::from_json(text) {
        Ok(sc) => sc,
        Err(e) => return clean(&e),
    };
    let _ = sc.warnings();
    let mut sim = match sc.build() {
        Ok(sim) => sim,
        Err(e) => return clean(&e),
    };
    // Run up to the first checkpoint (CHECK_EVERY events): enough to take every kind of event.
    // Only in release builds (`cargo test --release`, as CI runs): the event loop's picosecond
    // arithmetic is unchecked there, as the engine runs, and a debug build would stop at the
    // overflow of a timer set years ahead by a setting no front lets through, which is not a
    // reader's concern.
    if cfg!(debug_assertions) {
        return Ok(());
    }
    sim.set_watch(Watch::with_hook(Box::new(|_| false), Duration::ZERO));
    sim.run();
    Ok(())
}

#[test]
fn mutated_scenario_json_is_refused_with_a_message_or_runs() {
    for (name, base) in BASES {
        let v: Value = serde_json::from_str(base).unwrap_or_else(|e| panic!("{name}: {e}"));
        check_scenario(base).unwrap_or_else(|e| panic!("{name} as written: {e}"));
        let mut r = runner();
        r.run(&prop::collection::vec(mutation(), 1..4), |ms| {
            let mut m = v.clone();
            let mut done = vec![];
            for x in &ms {
                let path = apply(&mut m, x);
                done.push(format!("{path}: {x:?}"));
            }
            if std::env::var("HOPSIM_FUZZ_SHOW").is_ok() {
                // each case before it runs: a case that aborts the process (out of memory) is
                // the last one shown
                eprintln!("case {name}: {done:?}");
            }
            check_scenario(&m.to_string()).map_err(|e| TestCaseError::fail(format!("{done:?}: {e}")))
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn truncated_or_garbled_scenario_json_is_refused_with_a_message() {
    let mut r = runner();
    let base = BASES[0].1;
    r.run(&(0..base.len(), "[^\"]{0,3}"), |(cut, junk)| {
        let mut t = base[..cut].to_string();
        t.push_str(&junk);
        check_scenario(&t)
    })
    .unwrap();
}

// ------------------------------------------------------------------ CDF files

/// A number as a file might hold one, or not quite.
fn number_token() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "0", "1", "0.5", "1.0", "1e400", "-1", "nan", "inf", "-inf", "1000", "18446744073709551616", "1e-400",
            "x", "0x10", "+5", ".5", "5.", "1e308", "1.7976931348623157e308", "0.9999999999", "1.00000000001", "-0",
        ])
        .prop_map(str::to_string),
        any::<f64>().prop_map(|x| x.to_string()),
        any::<u64>().prop_map(|x| x.to_string()),
        (0.0f64..1.0).prop_map(|x| x.to_string()),
    ]
}

fn cdf_text() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        6 => (number_token(), number_token()).prop_map(|(a, b)| format!("{a} {b}")),
        1 => (number_token(), number_token(), number_token()).prop_map(|(a, b, c)| format!("{a} {b} {c}")),
        1 => number_token(),
        1 => "#[ -~]{0,10}".prop_map(|s| s),
        1 => Just(String::new()),
    ];
    prop_oneof![
        3 => prop::collection::vec(line, 0..12).prop_map(|l| l.join("\n")),
        1 => ".{0,100}".prop_map(|s| s),
        // sorted, well-formed points, which reach past the format checks
        2 => prop::collection::vec((0u64..1u64 << 40, 0.0f64..=1.0), 1..8).prop_map(|mut p| {
            p.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
            let mut f: Vec<f64> = p.iter().map(|x| x.1).collect();
            f.sort_by(f64::total_cmp);
            let n = f.len();
            f[n - 1] = 1.0;
            p.iter().zip(f).map(|((s, _), c)| format!("{s} {c}")).collect::<Vec<_>>().join("\n")
        }),
    ]
}

#[test]
fn the_cdf_reader_refuses_with_a_message_or_gives_a_distribution_that_samples() {
    let mut r = runner();
    r.run(&cdf_text(), |text| {
        let cdf = match Cdf::parse(&text) {
            Ok(c) => c,
            Err(e) => return clean(&e),
        };
        let mut rng = Rng::stream(1, 99, 0);
        for _ in 0..50 {
            let x = cdf.sample(&mut rng);
            prop_assert!(x >= 1);
            let u = rng.uniform();
            let q = cdf.quantile(u);
            prop_assert!(q >= cdf.min_size() && q <= cdf.max_size(), "quantile {q} of {u} outside the sizes");
            let _ = cdf.cdf_at(q);
        }
        let _ = cdf.mean();
        // drawn into a background workload over 100 ns (whatever the sizes, a bounded count)
        let spec = hopsim_core::workload::background::BackgroundSpec {
            hosts: vec![0, 1, 2, 3],
            arrival: hopsim_core::workload::arrivals::Arrival::Poisson,
            basis: hopsim_core::workload::arrivals::LoadBasis::HostLinks { hosts: 4, host_rate: hopsim_core::Rate::gbps(100) },
            load: 0.3,
            start: hopsim_core::Time::ZERO,
            limit: hopsim_core::workload::arrivals::Limit::Duration(hopsim_core::Time::from_ns(100)),
            prio: 3,
            seed: 1,
            stream_index: 0,
            dst: None,
            rack_size: 0,
        };
        if let Err(e) = hopsim_core::workload::background::background_flows(&spec, &cdf) {
            clean(&e)?;
        }
        Ok(())
    })
    .unwrap();
}

// ------------------------------------------------------------------ HPCC topology and flow files

fn field_token() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (0u32..8).prop_map(|x| x.to_string()),
        1 => prop::sample::select(vec![
            "100Gbps", "0Gbps", "1Mbps", "25Gbit", "1us", "1000ns", "0.001ms", "1", "0", "0.01", "-1", "1.5", "nan",
            "4294967295", "4294967296", "18446744073709551615", "1e400", "x", "", "2.000001",
        ])
        .prop_map(str::to_string),
        1 => any::<u64>().prop_map(|x| x.to_string()),
    ]
}

/// Text shaped like an HPCC file: a header of counts, then lines of fields.
fn hpcc_text(fields: std::ops::Range<usize>) -> impl Strategy<Value = String> {
    let line = prop::collection::vec(field_token(), fields).prop_map(|f| f.join(" "));
    prop_oneof![
        4 => (prop::collection::vec(field_token(), 1..4), prop::collection::vec(line, 0..10))
            .prop_map(|(h, l)| format!("{}\n{}\n", h.join(" "), l.join("\n"))),
        1 => ".{0,100}".prop_map(|s| s),
    ]
}

#[test]
fn the_hpcc_topology_reader_refuses_with_a_message_or_gives_a_network() {
    let mut r = runner();
    // near-valid files: 6 nodes (4 hosts, switches 4 and 5) with one field of one line garbled
    let good = ["6 2 5", "4 5", "0 4 100Gbps 1000ns 0", "1 4 100Gbps 1000ns 0", "2 5 100Gbps 1000ns 0", "3 5 100Gbps 1000ns 0", "4 5 400Gbps 1000ns 0.01"];
    let near = (0..good.len(), 0usize..5, field_token()).prop_map(move |(l, f, t)| {
        let mut lines: Vec<Vec<String>> = good.iter().map(|l| l.split(' ').map(str::to_string).collect()).collect();
        let n = lines[l].len();
        lines[l][f % n] = t;
        lines.iter().map(|l| l.join(" ")).collect::<Vec<_>>().join("\n")
    });
    r.run(&prop_oneof![hpcc_text(2..6), near], |text| {
        let f = match read_hpcc_file(&text) {
            Ok(f) => f,
            Err(e) => return clean(&e),
        };
        for (_, _, rate) in &f.loss {
            prop_assert!(*rate > 0.0 && *rate <= 1.0);
        }
        if let Err(e) = Simulation::new(&f.topo, &[], NetConfig::default()) {
            clean(&e)?;
        }
        Ok(())
    })
    .unwrap();
}

#[test]
fn the_hpcc_flow_file_reader_refuses_with_a_message_or_gives_flows() {
    let mut r = runner();
    r.run(&hpcc_text(5..8), |text| {
        match read_hpcc_flows(&text) {
            Ok((flows, _)) => prop_assert!(flows.len() < text.lines().count()),
            Err(e) => clean(&e)?,
        }
        Ok(())
    })
    .unwrap();
}
