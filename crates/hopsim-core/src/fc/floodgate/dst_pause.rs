//! dstPause and dstResume at a first-hop ToR (§4.3 "Hosts' support", the ideal design's per-dst
//! PAUSE): which source hosts a ToR pauses for a destination, and when it resumes them.
//!
//! Two readings, chosen by `flow_control.floodgate.dst_pause_on`:
//! - `voq` (default, the paper's): "When a Floodgate's ToR receives a data packet whose VOQ queue
//!   length exceeds a threshold thre_off, a special PAUSE frame, i.e., called dstPause, is sent back
//!   to source hosts ... When the VOQ queue length goes beneath a threshold thre_on, a RESUME
//!   frame called dstResume is sent back to hosts". The test is the destination's VOQ length at
//!   this ToR, whoever's packets fill it: each source host whose packet arrives while it is above
//!   `thre_off` is paused, and all of them are resumed together once it falls below `thre_on`.
//! - `source_host` (Floodgate-NS3, `SRCTOR_DST_PFC 1`): the ToR's host-facing ports account ingress
//!   bytes per destination instead of per priority (`third.cc` lines 2766 and 2786, the link loop:
//!   `pfc_mode[...] = SwitchMmu::PFC_ON_DST`; `switch-node.cc` line 277, `SendToDev`: `if
//!   (m_mmu->pfc_mode[inDev] == SwitchMmu::PFC_ON_DST) pfc_fine = Settings::hostIp2IdMap[ch.dip]`,
//!   released at line 379 in `SwitchNotifyDequeue`), so one source host is
//!   paused for one destination on that host's own bytes for it held at its ToR (in a VOQ or in
//!   the egress queue: they leave the ingress account at `SwitchNotifyDequeue`), and resumed on
//!   its own bytes too. Another host's bytes for the same destination do not pause it.
//!
//! hopsim keeps the paper's reading as the default; the importer of Floodgate-NS3 configs selects
//! `source_host` and converts that simulator's static threshold (`PFC_TH_STATIC x 2 x rate x
//! delay`, plus its 4 KiB reserve) into `thre_off_bdp` and `thre_on_bdp`.

use crate::fc::{Actions, CtrlMsg, FcAction, Origin, PktMeta, SwitchView};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// What a first-hop ToR's dstPause tests (see the module doc).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum DstPauseOn {
    /// The destination's VOQ length at the ToR; every source host sending to it is paused (§4.3).
    #[default]
    Voq,
    /// One source host's own bytes for the destination at its ToR (Floodgate-NS3's per-dst PFC).
    SourceHost,
}

/// dstPause state of one ToR.
#[derive(Default)]
pub(super) struct DstPauses {
    /// `voq`: the host ports paused for each destination.
    by_dst: HashMap<u32, Vec<u16>>,
    /// `source_host`: bytes held here per (host port, destination), and whether that pair is paused.
    held: HashMap<(u16, u32), (u64, bool)>,
    pub sent: u64,
}

fn frame(port: u16, dst: u32, pause: bool, out: &mut Actions) {
    out.push(FcAction::Send { port, msg: CtrlMsg::DstPause { dst, pause }, by: Origin::Scheme });
}

impl DstPauses {
    /// A packet from a host was queued here; `voq_bytes` is what the destination's VOQs hold now.
    pub fn on_enqueue(&mut self, on: DstPauseOn, off_bdp: f64, pkt: &PktMeta, view: &SwitchView, voq_bytes: u64, out: &mut Actions) {
        let off = (view.hop_bdp(pkt.ingress) as f64 * off_bdp) as u64;
        match on {
            DstPauseOn::Voq => {
                if voq_bytes > off {
                    let hosts = self.by_dst.entry(pkt.dst).or_default();
                    if !hosts.contains(&pkt.ingress) {
                        hosts.push(pkt.ingress);
                        self.sent += 1;
                        frame(pkt.ingress, pkt.dst, true, out);
                    }
                }
            }
            DstPauseOn::SourceHost => {
                let e = self.held.entry((pkt.ingress, pkt.dst)).or_default();
                e.0 += pkt.size as u64;
                if !e.1 && e.0 > off {
                    e.1 = true;
                    self.sent += 1;
                    frame(pkt.ingress, pkt.dst, true, out);
                }
            }
        }
    }

    /// A packet for `pkt.dst` left this switch; `voq_bytes` is what the destination's VOQs hold now.
    pub fn on_dequeue(&mut self, on: DstPauseOn, on_bdp: f64, pkt: &PktMeta, view: &SwitchView, voq_bytes: u64, out: &mut Actions) {
        match on {
            DstPauseOn::Voq => {
                if let Some(hosts) = self.by_dst.get(&pkt.dst) {
                    let thre_on = (view.hop_bdp(hosts[0]) as f64 * on_bdp) as u64;
                    if voq_bytes < thre_on {
                        for &h in self.by_dst.remove(&pkt.dst).expect("present").iter() {
                            frame(h, pkt.dst, false, out);
                        }
                    }
                }
            }
            DstPauseOn::SourceHost => {
                if !view.peer(pkt.ingress).is_host() {
                    return;
                }
                let key = (pkt.ingress, pkt.dst);
                let Some(e) = self.held.get_mut(&key) else { return };
                e.0 = e.0.saturating_sub(pkt.size as u64);
                let thre_on = (view.hop_bdp(pkt.ingress) as f64 * on_bdp) as u64;
                if e.1 && e.0 < thre_on {
                    e.1 = false;
                    frame(pkt.ingress, pkt.dst, false, out);
                }
                if e.0 == 0 && !e.1 {
                    self.held.remove(&key);
                }
            }
        }
    }

    /// The link of `port` went down: the pauses sent to the host behind it are forgotten.
    pub fn forget_port(&mut self, port: u16) {
        for v in self.by_dst.values_mut() {
            v.retain(|&h| h != port);
        }
        self.by_dst.retain(|_, v| !v.is_empty());
        self.held.retain(|&(h, _), _| h != port);
    }

    pub fn any(&self) -> bool {
        !self.by_dst.is_empty() || !self.held.is_empty()
    }
}
