//! The simulator's ids: what a node is, and how wide the numbers of ports, flows and switches may
//! be. At the bottom so that the queues a port owns, the inputs that number flows and the engine
//! that packs ids into events agree on one definition.

/// What a topology node is inside the simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeRef {
    Host(u32),
    Switch(u32),
}

/// Ids of ports, flows and switches must fit in 29 bits (536 million) to pack an event in a word
/// (`crate::event`).
pub const ID_BITS: u32 = 29;
