//! The network substrate: ports and wires, the shared-buffer MMU, switches and hosts.
pub mod host;
pub mod mmu;
pub mod port;
pub mod switch;
