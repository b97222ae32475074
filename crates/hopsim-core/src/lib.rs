//! hopsim-core: a packet-level discrete-event simulator of datacenter networks for studying incast
//! and per-hop flow control. Pure Rust: no Python, no file I/O inside the models.
//!
//! Layout follows `DESIGN.md`: `time`/`event`/`packet` are the engine, `net` the substrate, `aqm`
//! the marking and telemetry switches apply at egress,
//! `fc` the per-hop flow-control schemes, `cc` end-host congestion control, `topo` and `workload`
//! the inputs, `stats` the columnar outputs, `sim` the assembly and event loop, `scenario` the
//! serde description of a whole run.

pub mod aqm;
pub mod assemble;
pub mod cc;
pub mod config;
pub mod defaults;
pub mod engine;
pub mod event;
pub mod faults;
pub mod fc;
pub mod footprint;
pub mod net;
pub mod packet;
pub mod progress;
pub mod registry;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod testing;
pub mod time;
pub mod topo;
pub mod watchdog;
pub mod workload;

pub use config::NetConfig;
pub use sim::Simulation;
pub use time::{Rate, Time};
