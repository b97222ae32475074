//! `hopsim._native`: the Python binding of `hopsim-core`. Seven functions, two constants and a
//! Parquet writer (`TableWriter`, in `parquet_out.rs`):
//!
//! - `run(scenario_json, on_progress=None, progress_every_s=0.5, on_spill=None, spill_rows=65536,
//!   max_memory=None) -> dict`: build and run one scenario with the GIL released (polling for
//!   Ctrl-C, reporting progress), and hand back its columnar results;
//! - `validate(scenario_json, max_memory=None) -> list[str]`: build without running (topology,
//!   routes, flows); raises `ValueError` with the core's message;
//! - `estimate(scenario_json, spill_rows=None) -> dict`: the memory a run needs, part by part,
//!   without building it (`hopsim_core::footprint`); `run` and `validate` refuse, before
//!   building, a scenario whose estimate exceeds `max_memory` bytes;
//! - `version() -> str`: the binding crate's version;
//! - `rust_sources() -> str`: the Rust sources it was built from (`build.rs`), for
//!   `hopsim plugin build`;
//! - `defaults() -> str`: the core's default settings as JSON (what the schema is tested against),
//!   with the registries of schemes and algorithms the schema takes its lists from;
//! - `read_tables(tables_json) -> str`: the core's reading of the scheme and algorithm tables
//!   (every field, read strictly) and what the front resolves from the scheme;
//! - `MAX_QUEUES`: the most data queues a port may have;
//! - `TRACE_EVENTS`: the names of the packet trace's event codes.
//!
//! How results cross the boundary: `run` returns `{"tables": {table: {column: value}},
//! "counters": {name: int}, "diagnostics": {name: int}, "modules": {name: int}, "stop": {"reason", "message", "cycle"}}`. A numeric column is a `(dtype, bytes)` pair: the column's `Vec`
//! copied once into a Python `bytes` in native (little-endian) layout, with a NumPy dtype string
//! (`"<u8"`, `"<f8"`, `"|b1"`, ...), so the Python side wraps it with `numpy.frombuffer` without
//! creating one Python object per value. Text columns are lists of `str`. The scenario itself
//! arrives as the core's serde JSON (`hopsim_core::scenario::Scenario`), produced by
//! `python/hopsim/scenario/model.py` from a validated TOML file.

use hopsim_core::progress::{Hook, Progress, Watch};
use hopsim_core::scenario::Scenario;
use hopsim_core::stats::RunStats;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod alloc;
mod parquet_out;
mod plugins;

#[global_allocator]
static ALLOCATOR: alloc::Guarded = alloc::Guarded;

/// A plain-old-data element type that NumPy can read straight from bytes.
trait Pod: Copy {
    const DTYPE: &'static str;
}
impl Pod for u8 {
    const DTYPE: &'static str = "|u1";
}
impl Pod for u16 {
    const DTYPE: &'static str = "<u2";
}
impl Pod for u32 {
    const DTYPE: &'static str = "<u4";
}
impl Pod for u64 {
    const DTYPE: &'static str = "<u8";
}
impl Pod for f64 {
    const DTYPE: &'static str = "<f8";
}
impl Pod for bool {
    // Rust guarantees a bool is one byte holding 0 or 1, which is NumPy's bool layout.
    const DTYPE: &'static str = "|b1";
}

#[cfg(not(target_endian = "little"))]
compile_error!("hopsim._native hands columns over in little-endian layout");

/// One column as `(dtype, bytes)`.
fn col<'py, T: Pod>(py: Python<'py>, v: &[T]) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: `T: Pod` are plain integer/float/bool types without padding; any byte view of a
    // slice of them is valid to read, and the length covers exactly the slice.
    let bytes = unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) };
    Ok((T::DTYPE, PyBytes::new(py, bytes)).into_pyobject(py)?.into_any())
}

fn text_col<'py>(py: Python<'py>, v: &[String]) -> PyResult<Bound<'py, PyAny>> {
    Ok(PyList::new(py, v)?.into_any())
}

macro_rules! table {
    ($py:expr, $tables:expr, $name:literal, $src:expr, [$($field:ident),* $(,)?] $(, text [$($tfield:ident),*])?) => {{
        let t = PyDict::new($py);
        $( t.set_item(stringify!($field), col($py, &$src.$field)?)?; )*
        $( $( t.set_item(stringify!($tfield), text_col($py, &$src.$tfield)?)?; )* )?
        $tables.set_item($name, t)?;
    }};
}

/// The tables that grow with simulated time, and the flows table (`RunStats::spill_rows`), into
/// `tables`: handed to `on_spill` in chunks during a run, and their last rows with the rest of
/// the results.
fn spill_tables<'py>(py: Python<'py>, tables: &Bound<'py, PyDict>, s: &RunStats) -> PyResult<()> {
    let f = &s.flows;
    table!(py, tables, "flows", f, [flow_id, src, dst, size_bytes, start_ps, finish_ps, fct_ps, ideal_fct_ps, slowdown, incast, retx_bytes, dropped_bytes, delivered_bytes, ack_finish_ps, ack_fct_ps, hpcc_standalone_fct_ps, sport, dport]);
    let b = &s.buffer;
    table!(py, tables, "buffer_switch", b, [switch_time_ps, switch_node, switch_bytes]);
    table!(py, tables, "buffer_port", b, [port_time_ps, port_row, port_bytes, port_tx_bytes, port_active]);
    let q = &s.queues;
    table!(py, tables, "queues", q, [time_ps, node, port, bytes]);
    let tr = &s.trace;
    table!(py, tables, "trace", tr, [time_ps, node, port, queue, event, flow, seq, size, qlen_bytes]);
    let m = &s.module_samples;
    table!(py, tables, "module_samples", m, [time_ps, node, port, metric, value]);
    let p = &s.pauses;
    table!(py, tables, "pauses", p, [time_ps, node, port, prio, quanta, duration_ps], text [mechanism]);
    let c = &s.control;
    table!(py, tables, "control", c, [time_ps, node, port, peer_node, target, value], text [kind]);
    let r = &s.pfc_received;
    table!(py, tables, "pfc_received", r, [time_ps, node, is_switch, port, prio, pause]);
    Ok(())
}

fn stats_to_py<'py>(py: Python<'py>, s: &RunStats) -> PyResult<Bound<'py, PyDict>> {
    let tables = PyDict::new(py);
    spill_tables(py, &tables, s)?;
    let h = &s.qlen;
    table!(py, tables, "qlen", h, [dump_time_ps, node, port, kb, count]);
    let l = &s.latency;
    table!(py, tables, "latency", l, [count, min_ps, p50_ps, p95_ps, p99_ps, max_ps, mean_ps], text [class]);
    let cw = &s.cwnd;
    table!(py, tables, "cwnd", cw, [time_ps, flow, cwnd_bytes, delivered_bytes]);
    let pt = &s.ports;
    table!(
        py,
        tables,
        "ports",
        pt,
        [
            node,
            port,
            peer_node,
            rate_bps,
            tx_bytes,
            ctrl_bytes,
            utilisation,
            paused_ps,
            gate_closed_ps,
            peak_queue_bytes,
            pause_frames,
            resume_frames,
            other_ctrl_frames,
            markers_inserted,
            markers_matched,
            ein_marks,
            drops_loss,
            drops_link_down,
            drops_unreachable
        ],
        text [hop_class]
    );

    // Counters go through serde so that a counter the core adds shows up without a binding change.
    let counters = flat_dict(py, serde_json::to_value(&s.counters))?;
    // Module counters (P-PFC's predictive pauses, CaPFC's, EIN marks, Pulser's cuts), by name.
    let modules = PyDict::new(py);
    for (k, v) in &s.modules {
        modules.set_item(k, v)?;
    }
    // why the run ended: "done", "duration", "no_progress", "deadlock" or "interrupted"
    let stop = PyDict::new(py);
    stop.set_item("reason", s.stop.reason.name())?;
    stop.set_item("message", &s.stop.message)?;
    stop.set_item("cycle", s.stop.cycle.clone())?;
    let out = PyDict::new(py);
    out.set_item("stop", stop)?;
    out.set_item("tables", tables)?;
    out.set_item("counters", counters)?;
    // the engine's own peaks, which depend on how the run was split (`Diagnostics`)
    out.set_item("diagnostics", flat_dict(py, serde_json::to_value(&s.diagnostics))?)?;
    out.set_item("modules", modules)?;
    // names of `module_samples`' metric ids (they outlive the spilled rows)
    out.set_item("module_metrics", PyList::new(py, &s.module_metrics)?)?;
    Ok(out)
}

/// A struct of plain fields as a dict, through serde: a field the core adds shows up without a
/// binding change.
fn flat_dict(py: Python<'_>, v: serde_json::Result<serde_json::Value>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    if let serde_json::Value::Object(m) = v.map_err(|e| PyRuntimeError::new_err(e.to_string()))? {
        for (k, v) in m {
            match v {
                serde_json::Value::Number(n) if n.is_u64() => d.set_item(k, n.as_u64())?,
                serde_json::Value::Number(n) if n.is_i64() => d.set_item(k, n.as_i64())?,
                serde_json::Value::Number(n) => d.set_item(k, n.as_f64())?,
                serde_json::Value::Bool(b) => d.set_item(k, b)?,
                serde_json::Value::String(t) => d.set_item(k, t)?,
                other => d.set_item(k, other.to_string())?,
            }
        }
    }
    Ok(d)
}

fn parse(scenario_json: &str) -> PyResult<Scenario> {
    Scenario::from_json(scenario_json).map_err(PyValueError::new_err)
}

/// Run one scenario (the core's JSON) and return its columnar results. The GIL is released for
/// the whole build and run, so threads (and a Dask worker's other tasks) keep going.
///
/// Ctrl-C: the core calls a hook every 100 ms of wall time (`hopsim_core::progress`), and the
/// hook re-acquires the GIL briefly to run `Python::check_signals`. Why this and not a Python
/// signal handler that sets the core's stop flag through another binding function: Python runs
/// signal handlers only on the main thread between bytecodes, and while the core runs with the
/// GIL released that thread executes no bytecode, so such a handler would run only after the
/// run had ended. Polling runs whatever handler the program has installed (the default SIGINT
/// handler raises KeyboardInterrupt; `hopsim run` makes SIGTERM do the same) at the moment the
/// core is ready to stop, needs no native signal handler competing with Python's, and costs one
/// GIL acquisition per 100 ms. When a handler raises, the run stops and its partial results come
/// back with `stop.reason == "interrupted"`; the exception itself is dropped (the caller decides
/// what an interrupted run means). Off the main thread `check_signals` does nothing, so a Dask
/// worker's thread is stopped by its process ending instead.
///
/// `on_progress`, if given, is called with a dict (`now_ns`, `end_ns`, `last_start_ns`, `events`,
/// `flows`, `flows_started`, `flows_done`, `wall_s`) at most every `progress_every_s` of wall
/// time, from the same hook; an exception it raises stops the run and is re-raised, except a
/// KeyboardInterrupt, which ends the run as interrupted (`keep_error`).
///
/// `on_spill`, if given, is called with `{table: {column: value}}` of the tables that grow with
/// simulated time (`buffer_switch`, `buffer_port`, `queues`, `trace`, `module_samples`, `pauses`,
/// `control`, `pfc_received`) and of
/// `flows`, whose rows then come as flows are freed, in that order (not by flow id), whenever
/// they hold `spill_rows` rows or more; the core then empties them, so the run's memory stays
/// bounded and the returned tables hold only the rows after the last call
/// (`hopsim_core::progress::Sink`).
/// An exception it raises stops the run and is re-raised (a KeyboardInterrupt: as interrupted).
#[pyfunction]
#[pyo3(signature = (scenario_json, on_progress=None, progress_every_s=0.5, on_spill=None, spill_rows=65536, max_memory=None, limit_note="max_memory", threads=1))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    scenario_json: &str,
    on_progress: Option<Py<PyAny>>,
    progress_every_s: f64,
    on_spill: Option<Py<PyAny>>,
    spill_rows: usize,
    max_memory: Option<u64>,
    limit_note: &str,
    threads: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let sc = parse(scenario_json)?;
    guard(&sc, max_memory, limit_note, on_spill.as_ref().map(|_| spill_rows), threads)?;
    let failed: Arc<Mutex<Option<PyErr>>> = Arc::new(Mutex::new(None));
    let failed_in_hook = failed.clone();
    let failed_in_sink = failed.clone();
    let every = Duration::from_secs_f64(progress_every_s.max(0.0));
    let mut last_report: Option<Instant> = None;
    let hook: Hook = Box::new(move |p: &Progress| {
        Python::attach(|py| {
            if py.check_signals().is_err() {
                return false;
            }
            let Some(cb) = &on_progress else { return true };
            if last_report.is_some_and(|t| t.elapsed() < every) {
                return true;
            }
            last_report = Some(Instant::now());
            match progress_dict(py, p).and_then(|d| cb.call1(py, (d,))) {
                Ok(_) => true,
                Err(e) => {
                    keep_error(py, &failed_in_hook, e);
                    false
                }
            }
        })
    });
    let mut watch = Watch::with_hook(hook, Duration::from_millis(100));
    if let Some(cb) = on_spill {
        watch.spill_rows = spill_rows.max(1);
        watch.sink = Some(Box::new(move |s: &RunStats| {
            Python::attach(|py| {
                let tables = PyDict::new(py);
                match spill_tables(py, &tables, s).and_then(|_| cb.call1(py, (tables,))) {
                    Ok(_) => true,
                    Err(e) => {
                        keep_error(py, &failed_in_sink, e);
                        false
                    }
                }
            })
        }));
    }
    let (stats, split) = py.detach(move || sc.run_threads(watch, threads.max(1))).map_err(PyValueError::new_err)?;
    if let Some(e) = failed.lock().expect("hook error slot").take() {
        return Err(e);
    }
    let out = stats_to_py(py, &stats);
    if let Ok(d) = &out {
        // how the run was split over threads (`hopsim_core::engine`)
        let engine = PyDict::new(py);
        engine.set_item("threads", split.threads)?;
        engine.set_item("note", split.note)?;
        d.set_item("engine", engine)?;
    }
    drop(stats);
    release_freed_memory();
    out
}

/// An exception a callback raised: kept to be raised when the run returns, except a
/// KeyboardInterrupt (a signal handler that ran while the callback did, Ctrl-C or SIGTERM),
/// which stops the run as one seen by `check_signals` does: partial results, `stop.reason ==
/// "interrupted"`. Why: whichever moment the signal lands at, the caller sees one kind of end.
fn keep_error(py: Python<'_>, slot: &Mutex<Option<PyErr>>, e: PyErr) {
    if !e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
        *slot.lock().expect("hook error slot") = Some(e);
    }
}

/// Hand the memory the finished run freed back to the system. Why: glibc's allocator keeps freed
/// blocks inside its heap, and what comes next in the same process (Arrow turning the results
/// into Parquet, another run of a sweep) allocates through other pools (Arrow's jemalloc) that
/// cannot reuse them, so without this the run's peak stays resident until the process ends:
/// about 25 MB on the standard benchmark, which set `hopsim run`'s peak. Elsewhere a no-op.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::os::raw::c_int;
        }
        // SAFETY: malloc_trim only returns free pages of the allocator's own heap to the kernel.
        unsafe {
            malloc_trim(0);
        }
    }
}

fn progress_dict<'py>(py: Python<'py>, p: &Progress) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("now_ns", p.now.0 as f64 / 1e3)?;
    d.set_item("end_ns", p.end.map(|t| t.0 as f64 / 1e3))?;
    d.set_item("last_start_ns", p.last_start.0 as f64 / 1e3)?;
    d.set_item("events", p.events)?;
    d.set_item("flows", p.flows)?;
    d.set_item("flows_started", p.flows_started)?;
    d.set_item("flows_done", p.flows_done)?;
    d.set_item("wall_s", p.wall.as_secs_f64())?;
    Ok(d)
}

/// Build a scenario without running it; raises ValueError naming what is wrong, else returns
/// the warnings of its input files' readers (`Scenario::warnings`: text they skipped).
/// `max_memory` (bytes): refuse, before building, a scenario whose estimated memory exceeds it.
#[pyfunction]
/// `spill_rows`: the run will spill its time-growing tables every that many rows (as `run` with
/// `on_spill` does), so only a chunk of them counts in memory.
#[pyo3(signature = (scenario_json, max_memory=None, limit_note="max_memory", spill_rows=None, threads=1))]
fn validate(py: Python<'_>, scenario_json: &str, max_memory: Option<u64>, limit_note: &str, spill_rows: Option<usize>, threads: usize) -> PyResult<Vec<String>> {
    let sc = parse(scenario_json)?;
    guard(&sc, max_memory, limit_note, spill_rows, threads)?;
    py.detach(move || sc.build().map(|_| sc.warnings())).map_err(PyValueError::new_err)
}

/// `ValueError` when the scenario's estimated memory (`hopsim_core::footprint`) exceeds
/// `max_memory` bytes; the message names the largest part and the field to change.
fn guard(sc: &Scenario, max_memory: Option<u64>, limit_note: &str, spill_rows: Option<usize>, threads: usize) -> PyResult<()> {
    match max_memory {
        Some(limit) => sc.check_memory_threads(limit, limit_note, spill_rows, threads).map_err(PyValueError::new_err),
        None => Ok(()),
    }
}

/// The memory a scenario's run needs, estimated without building it: `{"total": bytes, "flows":
/// expected flows, "run_time_ns": the run length samples were counted over, "parts": [{"name",
/// "bytes", "detail", "change"}, ...]}` with the parts largest first, and the counts behind them
/// under "shape"; with `spill_rows` (a run that spills its time-growing tables, as `run` with
/// `on_spill`), "disk" is what those take on disk. Raises ValueError when the scenario cannot be
/// read.
#[pyfunction]
#[pyo3(signature = (scenario_json, spill_rows=None, threads=1))]
fn estimate<'py>(py: Python<'py>, scenario_json: &str, spill_rows: Option<usize>, threads: usize) -> PyResult<Bound<'py, PyDict>> {
    let sc = parse(scenario_json)?;
    let e = sc.estimate_threads(spill_rows, threads).map_err(PyValueError::new_err)?;
    let out = PyDict::new(py);
    out.set_item("total", e.total())?;
    out.set_item("disk", e.disk)?;
    out.set_item("flows", e.flows)?;
    out.set_item("run_time_ns", e.run_time.0 as f64 / 1e3)?;
    let parts = PyList::empty(py);
    for p in &e.parts {
        let d = PyDict::new(py);
        d.set_item("name", p.name)?;
        d.set_item("bytes", p.bytes)?;
        d.set_item("detail", &p.detail)?;
        d.set_item("change", &p.change)?;
        parts.append(d)?;
    }
    out.set_item("parts", parts)?;
    let s = &e.shape;
    let shape = PyDict::new(py);
    for (k, v) in [
        ("nodes", s.nodes),
        ("hosts", s.hosts),
        ("switches", s.switches),
        ("links", s.links),
        ("switch_ports", s.switch_ports),
        ("route_rows", s.route_rows),
        ("route_cols", s.route_cols),
    ] {
        shape.set_item(k, v)?;
    }
    out.set_item("shape", shape)?;
    Ok(out)
}

/// The core's reading of a scenario's `flow_control` and `congestion_control` tables (given as
/// `{"flow_control": ..., "congestion_control": ...}` JSON): each as the core read it and writes
/// it back (every field, defaults filled in), and `facts`, what the front resolves from the scheme
/// (`FcConfig::front_facts`). Both tables are read strictly: a field the core does not have
/// raises `ValueError` naming it and the fields allowed.
#[pyfunction]
fn read_tables(tables_json: &str) -> PyResult<String> {
    let mut v: serde_json::Value = serde_json::from_str(tables_json).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let fc = hopsim_core::fc::FcConfig::from_table(v["flow_control"].take()).map_err(PyValueError::new_err)?;
    let cc = hopsim_core::cc::CcConfig::from_table(v["congestion_control"].take()).map_err(PyValueError::new_err)?;
    Ok(serde_json::json!({"flow_control": fc, "congestion_control": cc, "facts": fc.front_facts()}).to_string())
}

/// The Rust sources this extension was built from, as JSON `{path: text}` relative to the
/// workspace root (`build.rs`): what `hopsim plugin build` builds a user's scheme against.
#[pyfunction]
fn rust_sources() -> &'static str {
    include_str!(concat!(env!("OUT_DIR"), "/sources.json"))
}

/// Version of this binding crate, which is released together with the core.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[cfg(feature = "pymodule")]
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    init(m, &[])
}

/// A scheme crate's registration (`hopsim_core::fc::plugin::register` of each of its schemes).
pub type Register = fn() -> Result<(), String>;

/// Fills module `m` with the binding: what `hopsim._native` holds, with the schemes of
/// `plugins` registered besides those built in by feature (`plugins.rs`). An extension that
/// `hopsim plugin build` writes calls it with its crates' `register`.
pub fn init(m: &Bound<'_, PyModule>, plugins: &[Register]) -> PyResult<()> {
    // the plugin schemes first: reading a scenario may name them
    plugins::register().map_err(PyRuntimeError::new_err)?;
    for register in plugins {
        register().map_err(PyRuntimeError::new_err)?;
    }
    m.add_function(wrap_pyfunction!(rust_sources, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(defaults, m)?)?;
    m.add_function(wrap_pyfunction!(read_tables, m)?)?;
    // run folders' tables, written without pyarrow (`hopsim.results.columns`)
    m.add_class::<parquet_out::TableWriter>()?;
    // the core's limits, so the schema's can be checked against them
    m.add("MAX_QUEUES", hopsim_core::queues::port::MAX_QUEUES)?;
    // names of the packet trace's event codes (the `trace` table's `event` column)
    m.add("TRACE_EVENTS", hopsim_core::stats::record::TRACE_EVENTS.to_vec())?;
    Ok(())
}

/// The core's default settings as JSON (`hopsim_core::defaults::defaults_json`): the reference the
/// Python schema's defaults are tested against.
#[pyfunction]
fn defaults() -> String {
    hopsim_core::defaults::defaults_json()
}
