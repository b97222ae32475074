//! Where packets wait: ports with their queues, gates and scheduler (and the ring of the wire
//! behind each), and the shared-buffer MMU that admits them into a switch.
//!
//! Plain state that knows nothing of what switches and hosts do, of schemes or of the event loop.
//! Why a layer of its own, under the models: a flow-control module reads queue lengths and MMU
//! counters through its `SwitchView` (`crate::fc::view`), and the engine (`crate::net`) owns and
//! moves the packets; both sit above this, so neither has to reach into the other.
pub mod bits;
pub mod mmu;
pub mod port;
pub mod sched;
