//! The switch memory management unit: one shared buffer, with ingress accounting per
//! (port, priority) and egress accounting per (port, queue).
//!
//! Modelled on the MMU of the HPCC ns-3 simulator (`switch-mmu.cc`), which the papers' simulators
//! inherit: every ingress (port, priority) owns a small reserved pool, then draws on the shared pool
//! up to the dynamic threshold `alpha x free shared buffer` (Choudhury & Hahne), and, when the
//! switch is lossless, on a per-port headroom that absorbs what is in flight after a pause. A
//! packet that fits nowhere is dropped and counted by the caller.
//!
//! Why ingress accounting: PFC pauses the upstream sender of an ingress (port, priority), so the
//! quantity it compares with its threshold must be the bytes that came in through that ingress.
//! Egress accounting is kept beside it for the statistics and for schemes that key on egress
//! queues (P-PFC's Kmax check, BFC).

use crate::packet::Charge;
use serde::{Deserialize, Serialize};

/// Static MMU settings of one switch.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MmuConfig {
    /// Total shared-memory size in bytes (HPCC simulator default 12 MB, the default).
    pub buffer_bytes: u64,
    /// Reserved (guaranteed) bytes per ingress (port, priority); HPCC: 4 KB.
    pub reserve_bytes: u64,
    /// Dynamic-threshold factor alpha: an ingress may hold up to `alpha x free shared` bytes.
    /// HPCC: 1/8 (`pfc_a_shift = 3`).
    pub alpha: f64,
    /// Hysteresis of the resume decision (HPCC `resume_offset`, 3 KB).
    pub resume_offset: u64,
    /// Use headroom (lossless operation). Without it, a packet over the threshold is dropped.
    pub lossless: bool,
    /// A departing packet's bytes leave the ingress's headroom first, then its shared share,
    /// whatever pool they were charged to (the HPCC simulator's `RemoveFromIngressAdmission`).
    /// Why it matters: headroom empties sooner and the shared share later than the packets that
    /// filled them, which moves when pauses end. Off: each packet releases what it was charged.
    pub headroom_first: bool,
}

impl Default for MmuConfig {
    fn default() -> Self {
        MmuConfig { buffer_bytes: 12_000_000, reserve_bytes: 4 * 1024, alpha: 1.0 / 8.0, resume_offset: 3 * 1024, lossless: true, headroom_first: false }
    }
}

/// What one ingress (port, priority) holds: `bytes` in its reserve and the shared pool,
/// `hdrm` in its headroom.
#[derive(Clone, Copy, Debug, Default)]
struct Ingress {
    bytes: u64,
    hdrm: u64,
}

/// Distinct per-port alphas whose thresholds are kept current (`Mmu::port_class`).
const MAX_CLASSES: usize = 4;

/// Fields in the order admission and release read them (`repr(C)`, aligned to a cache line), as
/// `Port`'s are and for the same reason (the engine waits on memory at scale): line 0 the scalars
/// every packet updates, line 1 the per-port arrays it indexes, line 2 what the threshold reads.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Mmu {
    // line 0
    pub cfg: MmuConfig,
    /// Bytes currently held in the buffer (all pools).
    used: u64,
    shared_used: u64,
    /// `alpha x shared_free()`, kept current as `shared_used` changes (read on every packet).
    thresh: u64,
    // line 1
    /// Bytes of each ingress (port, priority): its reserved and shared share, and its headroom,
    /// side by side because admission, release and the pause checks read both for one packet.
    ingress: Vec<Ingress>,
    egress_bytes: Vec<u64>,
    nprio: u32,
    nqueue: u32,
    /// Peak of `used` over the run.
    pub peak_used: u64,
    // line 2
    /// Per-port alpha when ports differ (`buffer.alpha_by_rate`); empty: `cfg.alpha` everywhere.
    port_alpha: Vec<f64>,
    total_headroom: u64,
    total_reserve: u64,
    /// Headroom per port (bytes); HPCC sizes it from the port's rate and delay.
    headroom: Vec<u64>,
    /// With per-port alphas: each port's class (ports sharing an alpha share one), each class's
    /// alpha and its current threshold, kept current with `thresh`. Why: the threshold is read on
    /// every packet and a fabric has two or three distinct alphas, so a few multiplies per change
    /// of the shared pool replace one per read.
    port_class: Vec<u8>,
    class_alpha: Vec<f64>,
    class_thresh: Vec<u64>,
}

impl Mmu {
    pub fn new(cfg: MmuConfig, headroom: Vec<u64>, nprio: usize, nqueue: usize) -> Mmu {
        let nports = headroom.len();
        let total_headroom = if cfg.lossless { headroom.iter().sum() } else { 0 };
        // Like HPCC, reserve is set aside per port for the data priorities actually used; we charge
        // it per (port, priority) lazily, so only count one priority's reserve per port up front.
        let total_reserve = cfg.reserve_bytes * nports as u64;
        let mut m = Mmu {
            cfg,
            nprio: nprio as u32,
            nqueue: nqueue as u32,
            headroom,
            total_headroom,
            total_reserve,
            ingress: vec![Ingress::default(); nports * nprio],
            egress_bytes: vec![0; nports * nqueue],
            shared_used: 0,
            thresh: 0,
            port_alpha: Vec::new(),
            port_class: Vec::new(),
            class_alpha: Vec::new(),
            class_thresh: Vec::new(),
            used: 0,
            peak_used: 0,
        };
        m.update_threshold();
        m
    }

    #[inline]
    fn update_threshold(&mut self) {
        let free = self.shared_free() as f64;
        self.thresh = (free * self.cfg.alpha) as u64;
        for (t, &a) in self.class_thresh.iter_mut().zip(&self.class_alpha) {
            *t = (free * a) as u64;
        }
    }

    #[inline]
    fn ip(&self, port: usize, prio: usize) -> usize {
        port * self.nprio as usize + prio
    }

    /// Free bytes of the shared pool.
    #[inline]
    pub fn shared_free(&self) -> u64 {
        self.cfg.buffer_bytes.saturating_sub(self.total_headroom + self.total_reserve + self.shared_used)
    }

    /// Free bytes of the whole buffer (P-PFC can use it for `switch_space_left`; see `SpaceLeft`).
    #[inline]
    pub fn buffer_free(&self) -> u64 {
        self.cfg.buffer_bytes.saturating_sub(self.used)
    }

    /// The dynamic PFC / admission threshold of an ingress of `port`, `alpha x free shared`.
    #[inline]
    pub fn threshold(&self, port: usize) -> u64 {
        if self.port_alpha.is_empty() {
            self.thresh
        } else {
            self.threshold_by_port(port)
        }
    }

    /// `threshold` with per-port alphas: the port's class's threshold, kept current by
    /// `update_threshold`; a port of a fabric with more distinct alphas than classes computes its
    /// own.
    #[inline]
    fn threshold_by_port(&self, port: usize) -> u64 {
        match self.port_class.get(port) {
            Some(&c) if (c as usize) < self.class_thresh.len() => self.class_thresh[c as usize],
            _ => (self.shared_free() as f64 * self.port_alpha[port]) as u64,
        }
    }

    /// Give each port its own alpha (one entry per port). Why per port: the HPCC simulator lets a
    /// faster port take a larger share of the free buffer (`buffer.alpha_by_rate`).
    pub fn set_port_alpha(&mut self, alpha: Vec<f64>) {
        assert_eq!(alpha.len(), self.headroom.len());
        self.port_alpha = if alpha.iter().all(|&a| a == self.cfg.alpha) { Vec::new() } else { alpha };
        self.class_alpha.clear();
        self.port_class.clear();
        for &a in &self.port_alpha {
            let c = match self.class_alpha.iter().position(|&x| x.to_bits() == a.to_bits()) {
                Some(c) => c,
                None if self.class_alpha.len() < MAX_CLASSES => {
                    self.class_alpha.push(a);
                    self.class_alpha.len() - 1
                }
                None => MAX_CLASSES, // computed per read
            };
            self.port_class.push(c as u8);
        }
        self.class_thresh = vec![0; self.class_alpha.len()];
        self.update_threshold();
    }

    /// Bytes of this ingress (port, priority) above its reserve.
    #[inline]
    pub fn shared_used_by(&self, port: usize, prio: usize) -> u64 {
        self.ingress[self.ip(port, prio)].bytes.saturating_sub(self.cfg.reserve_bytes)
    }

    pub fn ingress_bytes(&self, port: usize, prio: usize) -> u64 {
        self.ingress[self.ip(port, prio)].bytes + self.ingress[self.ip(port, prio)].hdrm
    }

    pub fn headroom_bytes(&self, port: usize, prio: usize) -> u64 {
        self.ingress[self.ip(port, prio)].hdrm
    }

    #[inline]
    pub fn egress_bytes(&self, port: usize, queue: usize) -> u64 {
        self.egress_bytes[port * self.nqueue as usize + queue]
    }

    /// The bytes of every queue of egress `port`.
    pub fn egress_port_bytes(&self, port: usize) -> u64 {
        let n = self.nqueue as usize;
        self.egress_bytes[port * n..(port + 1) * n].iter().sum()
    }

    pub fn used(&self) -> u64 {
        self.used
    }

    pub fn nports(&self) -> usize {
        self.headroom.len()
    }

    /// Charge an arriving packet, or refuse it (`None`): the caller drops and counts it.
    #[inline]
    pub fn admit(&mut self, port: usize, prio: usize, egress: usize, queue: usize, size: u32) -> Option<Charge> {
        let s = size as u64;
        if self.used + s > self.cfg.buffer_bytes {
            return None;
        }
        let i = self.ip(port, prio);
        let new_bytes = self.ingress[i].bytes + s;
        let charge = if new_bytes <= self.cfg.reserve_bytes {
            Charge::Reserved
        } else {
            let thresh = self.threshold(port);
            let over = new_bytes - self.cfg.reserve_bytes;
            if over > thresh {
                if self.cfg.lossless && self.ingress[i].hdrm + s <= self.headroom[port] {
                    Charge::Headroom
                } else {
                    return None;
                }
            } else {
                Charge::Shared { shared: s.min(over) as u32 }
            }
        };
        match charge {
            Charge::Headroom => self.ingress[i].hdrm += s,
            Charge::Shared { shared } => {
                self.ingress[i].bytes += s;
                self.shared_used += shared as u64;
                self.update_threshold();
            }
            Charge::Reserved => self.ingress[i].bytes += s,
        }
        self.egress_bytes[egress * self.nqueue as usize + queue] += s;
        self.used += s;
        if self.used > self.peak_used {
            self.peak_used = self.used;
        }
        Some(charge)
    }

    /// Release a departing packet's bytes from the pools it was charged to.
    #[inline]
    pub fn release(&mut self, port: usize, prio: usize, egress: usize, queue: usize, size: u32, charge: Charge) {
        let s = size as u64;
        let i = self.ip(port, prio);
        // (bytes out of the headroom, bytes of the rest that were shared)
        let (from_hdrm, from_shared) = if self.cfg.headroom_first {
            // headroom first, then the ingress's bytes, of which those above the reserve are shared
            let h = self.ingress[i].hdrm.min(s);
            (h, (s - h).min(self.ingress[i].bytes.saturating_sub(self.cfg.reserve_bytes)))
        } else {
            match charge {
                Charge::Headroom => (s, 0),
                Charge::Shared { shared } => (0, shared as u64),
                Charge::Reserved => (0, 0),
            }
        };
        self.ingress[i].hdrm -= from_hdrm;
        self.ingress[i].bytes -= s - from_hdrm;
        if from_shared > 0 {
            self.shared_used -= from_shared;
            self.update_threshold();
        }
        self.egress_bytes[egress * self.nqueue as usize + queue] -= s;
        self.used -= s;
    }

    /// A queued packet of `size` bytes moved from queue `from` to queue `to` of `egress`
    /// (`FcAction::Join`): its ingress and shared charges stay as they are.
    pub fn move_egress(&mut self, egress: usize, from: usize, to: usize, size: u32) {
        let n = self.nqueue as usize;
        self.egress_bytes[egress * n + from] -= size as u64;
        self.egress_bytes[egress * n + to] += size as u64;
    }

    /// HPCC's `CheckShouldPause`: headroom in use, or the shared share at the threshold.
    #[inline]
    pub fn should_pause(&self, port: usize, prio: usize) -> bool {
        let i = self.ip(port, prio);
        self.ingress[i].hdrm > 0 || self.shared_used_by(port, prio) >= self.threshold(port)
    }

    /// HPCC's `CheckShouldResume`: headroom drained and the shared share back below the threshold
    /// by `resume_offset`.
    #[inline]
    pub fn should_resume(&self, port: usize, prio: usize) -> bool {
        let i = self.ip(port, prio);
        let su = self.shared_used_by(port, prio);
        self.ingress[i].hdrm == 0 && (su == 0 || su + self.cfg.resume_offset <= self.threshold(port))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_fields_keep_their_cache_lines() {
        use std::mem::offset_of;
        assert_eq!(std::mem::align_of::<Mmu>(), 64);
        for off in [offset_of!(Mmu, cfg), offset_of!(Mmu, used), offset_of!(Mmu, shared_used), offset_of!(Mmu, thresh)] {
            assert!(off < 64, "line 0 field at {off}");
        }
        for off in [offset_of!(Mmu, ingress), offset_of!(Mmu, egress_bytes), offset_of!(Mmu, peak_used)] {
            assert!((64..128).contains(&off), "line 1 field at {off}");
        }
        for off in [offset_of!(Mmu, port_alpha), offset_of!(Mmu, total_headroom), offset_of!(Mmu, total_reserve)] {
            assert!((128..192).contains(&off), "line 2 field at {off}");
        }
    }

    fn mmu(buffer: u64, lossless: bool) -> Mmu {
        let cfg = MmuConfig { buffer_bytes: buffer, lossless, ..Default::default() };
        Mmu::new(cfg, vec![20_000; 4], 8, 8)
    }

    #[test]
    fn reserve_then_shared_then_headroom() {
        let mut m = mmu(200_000, true);
        // reserve is 4096: four 1000 B packets fit in it
        for _ in 0..4 {
            assert_eq!(m.admit(0, 3, 1, 3, 1000), Some(Charge::Reserved));
        }
        let c = m.admit(0, 3, 1, 3, 1000).unwrap();
        assert!(matches!(c, Charge::Shared { shared: 904 }));
        // fill until the threshold moves packets to headroom
        let mut saw_hdrm = false;
        for _ in 0..200 {
            match m.admit(0, 3, 1, 3, 1000) {
                Some(Charge::Headroom) => saw_hdrm = true,
                None => break,
                _ => {}
            }
        }
        assert!(saw_hdrm);
        assert!(m.should_pause(0, 3));
        assert!(m.headroom_bytes(0, 3) <= 20_000);
    }

    #[test]
    fn per_port_alpha_gives_each_port_its_own_threshold() {
        let mut m = mmu(1_000_000, true);
        let free = m.shared_free();
        m.set_port_alpha(vec![0.125, 0.5, 0.125, 1.0]);
        assert_eq!(m.threshold(0), free / 8);
        assert_eq!(m.threshold(1), free / 2);
        assert_eq!(m.threshold(3), free);
        // the 1/2 port takes four times the 1/8 port's bytes before it must pause
        let fill = |m: &mut Mmu, port: usize| {
            let mut n = 0;
            while !m.should_pause(port, 3) {
                m.admit(port, 3, 2, 3, 1000).unwrap();
                n += 1;
            }
            n
        };
        let mut m2 = m.clone();
        let (a, b) = (fill(&mut m, 0), fill(&mut m2, 1));
        // dynamic threshold: x / (free - x) = alpha gives x = free x alpha / (1 + alpha)
        let expect = |al: f64| free as f64 * al / (1.0 + al) / 1000.0;
        assert!((a as f64 - expect(0.125)).abs() < 6.0, "{a}");
        assert!((b as f64 - expect(0.5)).abs() < 6.0, "{b}");
        // more distinct alphas than kept classes: the rest compute theirs per read, the same
        let alphas = [0.5, 0.25, 0.125, 1.0 / 16.0, 1.0 / 32.0, 1.0 / 3.0];
        let mut m3 = Mmu::new(m.cfg.clone(), vec![20_000; 6], 8, 8);
        m3.set_port_alpha(alphas.to_vec());
        for _ in 0..50 {
            m3.admit(0, 3, 2, 3, 1000).unwrap();
            for (port, a) in alphas.iter().enumerate() {
                assert_eq!(m3.threshold(port), (m3.shared_free() as f64 * a) as u64);
            }
        }
        // all equal to the config's alpha: back to the shared threshold
        m.set_port_alpha(vec![0.125; 4]);
        assert!(m.port_alpha.is_empty());
    }

    #[test]
    fn headroom_first_release_empties_headroom_before_shared() {
        // Fill an ingress into headroom, then release its oldest packets (charged to reserve and
        // shared): as charged, headroom stays until its own packets leave; headroom first (the
        // HPCC simulator's MMU), it empties at once and the shared share stays.
        let fill = |first: bool| {
            let cfg = MmuConfig { buffer_bytes: 200_000, headroom_first: first, ..Default::default() };
            let mut m = Mmu::new(cfg, vec![20_000; 4], 8, 8);
            let mut charges = vec![];
            while m.headroom_bytes(0, 3) < 5_000 {
                charges.push(m.admit(0, 3, 1, 3, 1000).unwrap());
            }
            let shared_before = m.shared_used_by(0, 3);
            for &c in charges.iter().take(5) {
                m.release(0, 3, 1, 3, 1000, c);
            }
            (m.headroom_bytes(0, 3), m.shared_used_by(0, 3), shared_before, m.used())
        };
        let (h_exact, s_exact, before, used_exact) = fill(false);
        let (h_first, s_first, _, used_first) = fill(true);
        assert_eq!(h_exact, 5_000, "as charged: the released packets were in reserve and shared");
        assert_eq!(h_first, 0, "headroom first: 5 x 1000 B left headroom");
        assert_eq!(s_first, before);
        assert!(s_exact < before);
        assert_eq!(used_exact, used_first);
    }

    #[test]
    fn lossy_drops_over_threshold_and_release_restores() {
        let mut m = mmu(200_000, false);
        let mut charges = vec![];
        while let Some(c) = m.admit(2, 0, 1, 0, 1500) {
            charges.push(c);
        }
        assert!(m.used() < 200_000);
        assert_eq!(m.headroom_bytes(2, 0), 0);
        for c in charges {
            m.release(2, 0, 1, 0, 1500, c);
        }
        assert_eq!(m.used(), 0);
        assert_eq!(m.egress_bytes(1, 0), 0);
        assert_eq!(m.shared_free(), 200_000 - 4 * 4096);
        assert!(m.should_resume(2, 0));
    }
}
