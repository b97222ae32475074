//! A small switch for the flow-control modules' unit tests: an MMU, port rates, and helpers that
//! admit or release packets through it and call the module's hooks the way the engine does.

use super::view::SwitchInfo;
use super::{Actions, FlowControl, PktMeta, SwitchView};
use crate::net::mmu::{Charge, Mmu, MmuConfig};
use crate::time::{Rate, Time};
use std::collections::HashMap;

pub const PRIO: u8 = 3;
pub const PKT: u32 = 1000;

/// An 8-port 40 Gb/s switch with the P-PFC paper's 4 MB buffer (section 5), 50 KB headroom per port
/// and its ECN thresholds (Table 2: Kmin 40 KB, Kmax 200 KB) on every port.
pub struct Sw {
    pub mmu: Mmu,
    pub info: SwitchInfo,
    charges: HashMap<(u16, u16), Vec<Charge>>,
}

impl Sw {
    pub fn new() -> Sw {
        let cfg = MmuConfig { buffer_bytes: 4_000_000, ..Default::default() };
        let mut info = SwitchInfo::bare(vec![Rate::gbps(40); 8], 8);
        info.ecn = vec![(40_000, 200_000); 8];
        Sw { mmu: Mmu::new(cfg, vec![50_000; 8], 8, 8), info, charges: HashMap::new() }
    }
    pub fn view(&self) -> SwitchView<'_> {
        SwitchView::bare(&self.mmu, &self.info)
    }
    pub fn pkt(ingress: u16, egress: u16) -> PktMeta {
        PktMeta { ingress, egress, prio: PRIO, queue: PRIO as u16, size: PKT, ..Default::default() }
    }
    pub fn enq(&mut self, fc: &mut impl FlowControl, now: Time, ingress: u16, egress: u16, n: usize, out: &mut Actions) {
        for _ in 0..n {
            let c = self.mmu.admit(ingress as usize, PRIO as usize, egress as usize, PRIO as usize, PKT).expect("admitted");
            self.charges.entry((ingress, egress)).or_default().push(c);
            fc.on_enqueue(now, &mut Sw::pkt(ingress, egress), &self.view(), out);
        }
    }
    pub fn deq(&mut self, fc: &mut impl FlowControl, now: Time, ingress: u16, egress: u16, n: usize, out: &mut Actions) {
        for _ in 0..n {
            let c = self.charges.get_mut(&(ingress, egress)).unwrap().remove(0);
            self.mmu.release(ingress as usize, PRIO as usize, egress as usize, PRIO as usize, PKT, c);
            fc.on_dequeue(now, &Sw::pkt(ingress, egress), &self.view(), out);
        }
    }
}
