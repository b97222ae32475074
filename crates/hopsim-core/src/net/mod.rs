//! The network substrate: ports with their queues, gates and scheduler, wires, the shared-buffer
//! MMU, switches and hosts, and the control-frame path between neighbours.
pub mod arrivals;
pub mod control;
pub mod flow_store;
mod hop_hooks;
pub mod host;
pub mod link;
pub mod nic_choice;
pub mod nic_sched;
mod oracle;
pub mod switch;
pub mod tcp;
