//! How packets move: what switches and hosts do with a packet, wires, flows and their transport,
//! and the control-frame path between neighbours. The queues and the MMU they move packets
//! through are plain state a layer down (`crate::queues`), where flow-control modules can read
//! them without reaching into the engine.
pub mod arrivals;
pub mod control;
pub mod flow_store;
mod hop_hooks;
pub mod host;
pub mod link;
pub mod nic_choice;
pub mod nic_sched;
mod oracle;
mod reverse_path;
pub mod switch;
pub mod tcp;
mod timestamps;
