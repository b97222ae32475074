//! hopsim-core: a packet-level discrete-event simulator of datacenter networks for studying incast
//! and per-hop flow control. Pure Rust: no Python, no file I/O inside the models.
//!
//! # Layers
//! The modules are layered, and dependencies run one way: a module uses modules of its own layer
//! and of the layers below it, never one above. The `pub mod` lines below are the table: each
//! group, under its `// Layer <name>:` line, is one layer, bottom first
//! (`tests/it/layering.rs` reads them and fails on any upward use outside `#[cfg(test)]` code).
//!
//! - **base**: time, random streams, the scheme registry, ids, and the packet with its plain
//!   headers (control-frame bodies, INT records, the MMU's charge), which every layer passes on.
//! - **substrate**: the queues packets wait in (ports, gates, schedulers, the MMU): plain state
//!   that flow-control modules read through their view and the engine moves packets through.
//! - **inputs**: the topology, the workload, and the network's plain parameters (`params`:
//!   switch, transport, routing, faults).
//! - **models**: the schemes, AQM, congestion control and flow control: pure state machines
//!   told `now` and handed what they may read (a view, an ACK), returning actions.
//! - **sinks**: the columnar statistics the engine writes into, and the progress hand-over; they
//!   read nothing of the simulation.
//! - **settings**: `NetConfig`, the parameters together with every scheme's own table; above the
//!   models because it names them, while the models read only `params`.
//! - **engine**: the `Simulation` and everything that runs it: the event queue, switches, hosts
//!   and wires (`net`), windows and partitions (`engine`), assembly, faults and the watchdog.
//!   One type whose concerns are `impl` blocks in files of their own, so these modules use one
//!   another; the layer as a whole uses only what is below it.
//! - **front**: what describes or sizes a whole run from outside: scenarios, the memory
//!   estimate, the published defaults, and helpers for tests of modules.
//!
//! Where a model needs engine state it gets a plain view (`fc::SwitchView` over the substrate,
//! `fc::registry::CheckAt` over the parameters), and functions over `Simulation` live in the
//! engine even when they serve one model (`net::oracle` for the Ideal congestion control,
//! `sim::sample` and `sim::record` for the statistics).

// Layer base: the vocabulary every other layer speaks.
pub mod time;
pub mod rng;
pub mod registry;
pub mod ids;
pub mod packet;

// Layer substrate: where packets wait.
pub mod queues;

// Layer inputs: what a run is given.
pub mod topo;
pub mod workload;
pub mod params;

// Layer models: the schemes.
pub mod aqm;
pub mod cc;
pub mod fc;

// Layer sinks: where results go.
pub mod stats;
pub mod progress;

// Layer settings: the parameters and every scheme's table together.
pub mod config;

// Layer engine: the simulation and what runs it.
pub mod event;
pub mod net;
pub mod sim;
pub mod engine;
pub mod assemble;
pub mod faults;
pub mod watchdog;

// Layer front: whole runs described and sized from outside.
pub mod scenario;
pub mod footprint;
pub mod defaults;
pub mod testing;

pub use config::NetConfig;
pub use sim::Simulation;
pub use time::{Rate, Time};
