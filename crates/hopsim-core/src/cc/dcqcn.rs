//! DCQCN reaction point: the sender half of DCQCN (Zhu et al., "Congestion Control for
//! Large-Scale RDMA Deployments", SIGCOMM 2015, Section 3, "RP algorithm").
//!
//! The sender keeps a current rate `Rc` (what it paces at) and a target rate `Rt` (the rate it
//! had before the last cut, which recovery aims for), plus `alpha`, its estimate of how congested
//! the path is. It starts at line rate, with no timers.
//!
//! **Decrease, on a CNP.** DCQCN §3, RP algorithm, equation order:
//! `Rt = Rc; Rc = Rc * (1 - alpha/2); alpha = (1 - g) * alpha + g`. The cut uses the alpha from
//! *before* this CNP and alpha is raised after it. With the initial alpha 1 the first cut halves
//! the rate and alpha stays exactly 1, because `(1 - g) * 1 + g = 1`; the order shows from the
//! second cut on. Three details come from the HPCC simulator's Mellanox model
//! (alibaba-edu/High-Precision-Congestion-Control, `simulation/src/point-to-point/model/rdma-hw.cc`):
//! - at most one cut per `rate_decrease_interval`. `CheckRateDecreaseMlx` runs every
//!   `RateDecreaseInterval` and cuts once if any CNP came in since the last check. Here the first CNP
//!   cuts at once, and any CNP less than `rate_decrease_interval` after the last cut is ignored,
//!   alpha included. Either way a stream of CNPs gives at most one cut per interval. We do not
//!   wait for a periodic check, so there is no delay and no timer while the flow runs at line rate.
//! - `Rc` never falls below `min_rate` (`std::max(m_minRate, ...)` in `CheckRateDecreaseMlx`);
//! - the target clamp (`CheckRateDecreaseMlx`): if `clamp_target_rate` is off, `Rt = Rc` happens only
//!   when at least one rate increase has run since the last cut. So several cuts in a row with no
//!   increase between them keep aiming at the rate the flow had before the first of them. HPCC
//!   tests only its timer stage (it has no byte counter). We test both stage counters, which is
//!   what the DCQCN authors' ns-3 (bobzhuyb/ns3-rdma, `rpr_cnm_received`, option
//!   `ClampTargetRateAfterTimeInc`) does.
//!
//! **Alpha.** As in DCQCN §3: alpha rises by `g` on every CNP that gets through (above). If no CNP
//! comes for `alpha_timer`, it decays to `alpha = (1 - g) * alpha`, and every such CNP restarts
//! that timer (ns3-rdma `ResumeAlpha`). HPCC's `UpdateAlphaMlx`/`ScheduleUpdateAlphaMlx` sample a
//! "CNP arrived" flag once per period instead. The two agree when CNPs come less than once per
//! period.
//!
//! **Increase.** Like QCN, DCQCN §3 drives recovery from two sources: a timer that fires every
//! `rate_increase_timer`, and a byte counter that fires every `byte_counter` bytes sent. `T` and
//! `BC` count how many times each has fired since the last cut. Each event first picks its phase
//! from the counts *before* adding itself, then runs it:
//! - fast recovery, while `max(T, BC) < F`: `Rc = (Rt + Rc) / 2`;
//! - additive increase, while `min(T, BC) < F <= max(T, BC)`: `Rt += R_AI`, then
//!   `Rc = (Rt + Rc) / 2`;
//! - hyper increase, once `min(T, BC) >= F`: `Rt += i * R_HAI` with `i = min(T, BC) - F + 1`, then
//!   `Rc = (Rt + Rc) / 2`.
//!
//! The phase rules and `i * R_HAI` follow the paper and the DCQCN authors' ns-3 (`rpr_fast_*`,
//! `rpr_active_select`, `rpr_hyper_increase`). HPCC's Mellanox model (`RateIncEventTimerMlx`,
//! `FastRecoveryMlx`, `ActiveIncreaseMlx`, `HyperIncreaseMlx`) has no byte counter. It does one
//! additive step at stage `F` and then hyper steps of a fixed `R_HAI`. We follow it only in
//! counting stages before the increment, which gives exactly `F` fast-recovery steps after a cut.
//! `Rt` and `Rc` are capped at line rate. `Rc` is rounded up when averaged, so it actually
//! reaches `Rt` (a floor average would stay 1 bit/s below it forever). If the byte counter never
//! fires (a slow flow, or `byte_counter = 0`), `min(T, BC)` stays below `F`, and after fast
//! recovery the flow stays in additive increase, as the paper says. The timer and the byte
//! counter keep the same period in every phase, as HPCC's timer does. ns3-rdma halves both in the
//! hyper phase (`rpr_hyper_time`, `rpr_hyper_byte`); we do not model that.
//!
//! **Timers.** The two timers run only while the flow is held below line rate. They start at the
//! first CNP and stop when `Rc` is back at line rate. A flow at line rate needs no events.
//! `next_timer` reports the earlier of the alpha deadline and the increase deadline.
//! `on_timer(now)` handles every deadline at or before `now`, both if both are due. Alpha keeps
//! decaying in the paper even at line rate. So while the timers are stopped we keep the alpha
//! timer's phase and apply the decays we skipped, `(1 - g)^k`, when the next CNP comes. The result
//! is the same as running the timer the whole time. A CNP (or a send) that comes at the same
//! instant as a deadline is handled after that deadline, whatever order the host delivers them
//! in.
//!
//! **Scaling with line rate.** The HPCC simulator's C++ does not scale `RATE_AI`/`RATE_HAI`:
//! `third.cc` copies them from the config into `RdmaHw`'s `RateAI`/`RateHAI` attributes. Its driver
//! script `run.py` writes them in proportion to the NIC bandwidth `bw` (Gb/s): DCQCN gets
//! `ai = 5 * bw / 25` Mb/s and `hai = 50 * bw / 25` Mb/s. We scale the same way, in proportion,
//! from the 40 Gb/s values the P-PFC paper gives:
//! `R_AI = rai_at_40g * line_rate / 40 Gb/s`, and likewise `R_HAI`.
//!
//! `rai` and `rhai`, when set, are absolute steps that replace this scaling (in both models), so a
//! simulator config's `RATE_AI 20Mb/s` can be imported as it stands.
//!
//! Rates are whole bit/s (`Rate`), so runs are bit-identical across platforms. Only alpha, a
//! fraction, is an `f64`.
//!
//! **Two models.** Everything above is the `paper` model, the default. `model = "mlx"` runs the HPCC
//! simulator's Mellanox model exactly instead (`cnp_received_mlx` and its periodic events; see
//! `cc::dcqcn_mlx`). It shares this configuration: it ignores `byte_counter`, and only it reads
//! `rate_on_first_cnp`.

use super::{CongestionControl, FlowInfo};
use crate::time::{Rate, Time};
use serde::{Deserialize, Serialize};

/// Alpha before the first CNP. DCQCN §3 starts alpha at 1, and HPCC's `cnp_received_mlx` sets
/// `m_alpha = 1` on a flow's first CNP.
pub const INITIAL_ALPHA: f64 = 1.0;

/// The line rate at which `rai_at_40g` and `rhai_at_40g` apply (the P-PFC paper's links).
pub const REFERENCE_LINE_RATE: Rate = Rate::gbps(40);

/// DCQCN parameters. Times are picoseconds, rates bit/s and sizes bytes, all serialised as plain
/// integers.
///
/// Defaults and their sources (P-PFC = Wu et al., "Predictive PFC", TPDS 2020, Table 2, which takes
/// them from the DCQCN paper; HPCC = alibaba-edu/High-Precision-Congestion-Control):
///
/// | field | default | source |
/// |---|---|---|
/// | `rai_at_40g` | 40 Mb/s | P-PFC Table 2, `R_AI` (40 Gb/s links) |
/// | `rhai_at_40g` | 400 Mb/s | 10 x `R_AI`: ns3-rdma and HPCC `RdmaHw` defaults `RateAI` 5 Mb/s and `RateHAI` 50 Mb/s; HPCC `run.py` `hai = 50*bw/25`, `ai = 5*bw/25` |
/// | `g` | 1/256 | P-PFC Table 2 (HPCC config `EWMA_GAIN 0.00390625`) |
/// | `rate_increase_timer` | 55 us | P-PFC Table 2 "Timer" (HPCC `run.py` `dcqcn_paper`: `t_inc=55`) |
/// | `alpha_timer` | 55 us | DCQCN's K; HPCC `RdmaHw` `AlphaResumInterval` default 55 us |
/// | `byte_counter` | 10 MB (10^7 B) | P-PFC Table 2 "Byte Counter" |
/// | `fast_recovery_stages` | 5 | DCQCN's F; HPCC `FastRecoveryTimes` default 5 (`third.cc` `fast_recovery_times = 5`) |
/// | `rate_decrease_interval` | 4 us | HPCC `RateDecreaseInterval` default 4 us (`config.txt` `RATE_DECREASE_INTERVAL 4`) |
/// | `min_rate` | 100 Mb/s | HPCC `RdmaHw` `MinRate` default, `config.txt` `MIN_RATE 100Mb/s` |
/// | `clamp_target_rate` | false | HPCC `ClampTargetRate` default, `config.txt` `CLAMP_TARGET_RATE 0` |
/// | `model` | `paper` | the model described above; `mlx` = HPCC `CC_MODE 1` (`cc::dcqcn_mlx`) |
/// | `rate_on_first_cnp` | 1 | HPCC `RateOnFirstCnp` default (`mlx` only) |
/// | `rai`, `rhai` | none (scale `rai_at_40g`, `rhai_at_40g`) | HPCC `RATE_AI`, `RATE_HAI`, which it uses unscaled |
///
/// HPCC's own `mix/config.txt` tunes DCQCN for the HPCC paper differently (`RP_TIMER 900`,
/// `FAST_RECOVERY_TIMES 1`, `ALPHA_RESUME_INTERVAL 1`, `RATE_AI 50Mb/s`, `RATE_HAI 100Mb/s`); we
/// follow the P-PFC paper instead.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DcqcnConfig {
    /// Additive-increase step `R_AI` at a 40 Gb/s line rate, scaled in proportion to the flow's line rate.
    pub rai_at_40g: Rate,
    /// Hyper-increase step `R_HAI` at a 40 Gb/s line rate, scaled like `rai_at_40g`.
    pub rhai_at_40g: Rate,
    /// EWMA gain `g` of alpha, in [0, 1].
    pub g: f64,
    /// Period of the rate-increase timer. 0 turns the timer off.
    pub rate_increase_timer: Time,
    /// Alpha decays once per this period without a CNP. 0 turns the decay off.
    pub alpha_timer: Time,
    /// One increase event per this many bytes sent while rate-limited. 0 turns the byte counter off.
    pub byte_counter: u64,
    /// Fast-recovery stages `F`.
    pub fast_recovery_stages: u32,
    /// At most one rate cut per this interval; CNPs within it are ignored.
    pub rate_decrease_interval: Time,
    /// Floor of the current rate (capped at the line rate).
    pub min_rate: Rate,
    /// Always set `Rt = Rc` on a cut. If false, set it only when an increase ran since the last cut.
    pub clamp_target_rate: bool,
    /// Which DCQCN: the paper's (`paper`) or the HPCC simulator's Mellanox model (`mlx`).
    pub model: DcqcnModel,
    /// `mlx` only: on the flow's first CNP, `Rt = Rc = rate_on_first_cnp x Rc`, in (0, 1].
    pub rate_on_first_cnp: f64,
    /// Absolute additive-increase step `R_AI`; replaces the scaled `rai_at_40g` when set.
    pub rai: Option<Rate>,
    /// Absolute hyper-increase step `R_HAI`; replaces the scaled `rhai_at_40g` when set.
    pub rhai: Option<Rate>,
}

/// The DCQCN variant a run uses (serialised in lowercase).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DcqcnModel {
    /// DCQCN §3 with the details listed in the module docs (`Dcqcn`).
    #[default]
    Paper,
    /// The HPCC simulator's `*Mlx` functions, event for event (`dcqcn_mlx::DcqcnMlx`).
    Mlx,
}

impl Default for DcqcnConfig {
    fn default() -> Self {
        DcqcnConfig {
            rai_at_40g: Rate::mbps(40),
            rhai_at_40g: Rate::mbps(400),
            g: 1.0 / 256.0,
            rate_increase_timer: Time::from_us(55),
            alpha_timer: Time::from_us(55),
            byte_counter: 10_000_000,
            fast_recovery_stages: 5,
            rate_decrease_interval: Time::from_us(4),
            min_rate: Rate::mbps(100),
            clamp_target_rate: false,
            model: DcqcnModel::Paper,
            rate_on_first_cnp: 1.0,
            rai: None,
            rhai: None,
        }
    }
}

impl DcqcnConfig {
    /// Checks what the type cannot: `g` must be a number in [0, 1], or alpha leaves [0, 1] and a
    /// cut could raise the rate.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.g.is_finite() && (0.0..=1.0).contains(&self.g)) {
            return Err(format!("dcqcn: g must be in [0, 1], got {}", self.g));
        }
        if !(self.rate_on_first_cnp.is_finite() && self.rate_on_first_cnp > 0.0 && self.rate_on_first_cnp <= 1.0) {
            return Err(format!("dcqcn: rate_on_first_cnp must be in (0, 1], got {}", self.rate_on_first_cnp));
        }
        // The simulator reschedules CheckRateDecreaseMlx every RateDecreaseInterval: 0 would
        // never let time advance.
        if self.model == DcqcnModel::Mlx && self.rate_decrease_interval == Time::ZERO {
            return Err("dcqcn: the mlx model needs a positive rate_decrease_interval".into());
        }
        self.rate_increase_timer.check_setting("dcqcn: rate_increase_timer")?;
        self.alpha_timer.check_setting("dcqcn: alpha_timer")?;
        self.rate_decrease_interval.check_setting("dcqcn: rate_decrease_interval")?;
        Ok(())
    }

    /// `(R_AI, R_HAI)` for a flow at `line_rate`: the absolute `rai`/`rhai` where set, else the
    /// 40 Gb/s values scaled.
    pub fn steps(&self, line_rate: Rate) -> (Rate, Rate) {
        (
            self.rai.unwrap_or_else(|| Self::scale_to_line_rate(self.rai_at_40g, line_rate)),
            self.rhai.unwrap_or_else(|| Self::scale_to_line_rate(self.rhai_at_40g, line_rate)),
        )
    }

    /// `rate_at_40g` scaled to `line_rate` in proportion (see the module docs).
    pub fn scale_to_line_rate(rate_at_40g: Rate, line_rate: Rate) -> Rate {
        let r = rate_at_40g.0 as u128 * line_rate.0 as u128 / REFERENCE_LINE_RATE.0 as u128;
        Rate(r.min(u64::MAX as u128) as u64)
    }
}

/// What triggered a rate-increase event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Trigger {
    Timer,
    Bytes,
}

/// DCQCN sender state of one flow.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    // Parameters, already scaled to this flow's line rate (bit/s).
    line_rate: u64,
    rai: u64,
    rhai: u64,
    min_rate: u64,
    g: f64,
    inc_period: Time,
    alpha_period: Time,
    byte_counter: u64,
    f: u32,
    dec_interval: Time,
    clamp_target: bool,
    // State.
    /// Current rate `Rc` (bit/s).
    rc: u64,
    /// Target rate `Rt` (bit/s); always `rc <= rt <= line_rate`.
    rt: u64,
    alpha: f64,
    /// Timer-driven increase events since the last cut (`T`).
    t_stage: u32,
    /// Byte-counter-driven increase events since the last cut (`BC`).
    bc_stage: u32,
    /// Bytes sent towards the next byte-counter event.
    bytes: u64,
    /// Below line rate: the increase timer and byte counter run, deadlines are reported.
    active: bool,
    inc_next: Time,
    /// Next alpha decay. Kept while inactive so the skipped decays can be applied later.
    alpha_next: Option<Time>,
    last_cut: Option<Time>,
}

impl Dcqcn {
    pub fn new(cfg: &DcqcnConfig, info: &FlowInfo) -> Dcqcn {
        debug_assert!(cfg.validate().is_ok(), "{:?}", cfg.validate());
        let line = info.line_rate.0;
        let (rai, rhai) = cfg.steps(info.line_rate);
        Dcqcn {
            line_rate: line,
            rai: rai.0,
            rhai: rhai.0,
            min_rate: cfg.min_rate.0.min(line),
            g: cfg.g,
            inc_period: cfg.rate_increase_timer,
            alpha_period: cfg.alpha_timer,
            byte_counter: cfg.byte_counter,
            f: cfg.fast_recovery_stages,
            dec_interval: cfg.rate_decrease_interval,
            clamp_target: cfg.clamp_target_rate,
            rc: line,
            rt: line,
            alpha: INITIAL_ALPHA,
            t_stage: 0,
            bc_stage: 0,
            bytes: 0,
            active: false,
            inc_next: Time::ZERO,
            alpha_next: None,
            last_cut: None,
        }
    }

    /// Target rate `Rt`.
    pub fn target_rate(&self) -> Rate {
        Rate(self.rt)
    }
    /// Alpha as last updated (skipped decays are applied at the next CNP or timer).
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    /// `(T, BC)`: timer and byte-counter increase events since the last cut.
    pub fn stages(&self) -> (u32, u32) {
        (self.t_stage, self.bc_stage)
    }
    /// `R_AI`: `rai`, or `rai_at_40g` scaled to this flow's line rate.
    pub fn rai(&self) -> Rate {
        Rate(self.rai)
    }
    /// `R_HAI`: `rhai`, or `rhai_at_40g` scaled to this flow's line rate.
    pub fn rhai(&self) -> Rate {
        Rate(self.rhai)
    }

    /// Handles every deadline at or before `now`: applies the alpha decays (all at once, `k` of
    /// them) and runs the increase timer's events.
    fn advance(&mut self, now: Time) {
        if let Some(next) = self.alpha_next {
            if next <= now && self.alpha_period.0 > 0 {
                let k = (now.0 - next.0) / self.alpha_period.0 + 1;
                self.alpha *= (1.0 - self.g).powi(k.min(i32::MAX as u64) as i32);
                self.alpha_next = Some(Time(next.0.saturating_add(k.saturating_mul(self.alpha_period.0))));
            }
        }
        if self.inc_period.0 > 0 {
            while self.active && self.inc_next <= now {
                self.inc_next += self.inc_period;
                self.increase(Trigger::Timer);
            }
        }
    }

    /// One rate-increase event (fast recovery, additive or hyper increase; see the module docs).
    fn increase(&mut self, by: Trigger) {
        let (t, bc) = (self.t_stage, self.bc_stage);
        if t.max(bc) < self.f {
            // fast recovery: Rt unchanged
        } else if t.min(bc) < self.f {
            self.rt = self.rt.saturating_add(self.rai).min(self.line_rate);
        } else {
            let i = (t.min(bc) - self.f) as u64 + 1;
            self.rt = self.rt.saturating_add(self.rhai.saturating_mul(i)).min(self.line_rate);
        }
        // Ceiling average: rc <= rt, so rc moves up to rt and gets there.
        self.rc = (self.rc + (self.rt - self.rc).div_ceil(2)).min(self.line_rate);
        match by {
            Trigger::Timer => self.t_stage = t.saturating_add(1),
            Trigger::Bytes => self.bc_stage = bc.saturating_add(1),
        }
        if self.rc >= self.line_rate {
            self.go_idle();
        }
    }

    /// Back at line rate: stop the increase timer and the byte counter; alpha goes lazy.
    fn go_idle(&mut self) {
        self.active = false;
        self.rc = self.line_rate;
        self.rt = self.line_rate;
        self.bytes = 0;
    }
}

impl CongestionControl for Dcqcn {
    fn on_cnp(&mut self, now: Time) {
        self.advance(now);
        if let Some(last) = self.last_cut {
            if now < last + self.dec_interval {
                return;
            }
        }
        self.last_cut = Some(now);
        if self.clamp_target || self.t_stage != 0 || self.bc_stage != 0 {
            self.rt = self.rc;
        }
        let cut = (self.rc as f64 * (1.0 - self.alpha / 2.0)) as u64;
        self.rc = cut.max(self.min_rate).min(self.rc);
        self.alpha = (1.0 - self.g) * self.alpha + self.g;
        self.t_stage = 0;
        self.bc_stage = 0;
        self.bytes = 0;
        self.alpha_next = (self.alpha_period.0 > 0).then(|| now + self.alpha_period);
        self.inc_next = now + self.inc_period;
        self.active = true;
        if self.rc >= self.line_rate {
            // Only when min_rate >= line rate: nothing to recover.
            self.go_idle();
        }
    }

    #[inline]
    fn on_send(&mut self, now: Time, bytes: u32) {
        if !self.active || self.byte_counter == 0 {
            return;
        }
        self.advance(now);
        self.bytes += bytes as u64;
        while self.active && self.bytes >= self.byte_counter {
            self.bytes -= self.byte_counter;
            self.increase(Trigger::Bytes);
        }
    }

    fn on_timer(&mut self, now: Time) {
        self.advance(now);
    }

    #[inline]
    fn next_timer(&self) -> Option<Time> {
        if !self.active {
            return None;
        }
        let inc = (self.inc_period.0 > 0).then_some(self.inc_next);
        match (inc, self.alpha_next) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// DCQCN is purely rate-based.
    #[inline]
    fn window(&self) -> Option<u64> {
        None
    }

    #[inline]
    fn rate(&self) -> Rate {
        Rate(self.rc)
    }
}

impl crate::registry::Declared for DcqcnConfig {
    const NAME: &'static str = "dcqcn";
    const ABOUT: &'static str = "DCQCN (Zhu et al., SIGCOMM 2015, §3)";
}

impl super::registry::Algorithm for DcqcnConfig {
    fn validate(&self) -> Result<(), String> {
        DcqcnConfig::validate(self)
    }
    fn build(&self, info: &super::FlowInfo) -> super::AnyCc {
        match self.model {
            DcqcnModel::Paper => super::AnyCc::Dcqcn(Dcqcn::new(self, info)),
            DcqcnModel::Mlx => super::AnyCc::DcqcnMlx(super::dcqcn_mlx::DcqcnMlx::new(self, info)),
        }
    }
    fn transport_needs(&self) -> super::TransportNeeds {
        super::TransportNeeds { cnp: true, ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: f64 = 1.0 / 256.0;

    fn info(line: Rate) -> FlowInfo {
        FlowInfo { line_rate: line, base_rtt: Time::from_us(10), mtu: 1000 }
    }

    fn dcqcn(line: Rate, cfg: DcqcnConfig) -> Dcqcn {
        Dcqcn::new(&cfg, &info(line))
    }

    /// Alpha pinned at 1 (no decay within a test) and no byte counter: round numbers.
    fn quiet_cfg() -> DcqcnConfig {
        DcqcnConfig { alpha_timer: Time::ZERO, byte_counter: 0, ..Default::default() }
    }

    fn us(v: u64) -> Time {
        Time::from_us(v)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
    }

    #[test]
    fn defaults_match_sources() {
        let c = DcqcnConfig::default();
        assert_eq!(c.rai_at_40g, Rate::mbps(40));
        assert_eq!(c.rhai_at_40g, Rate::mbps(400));
        assert_eq!(c.g, 1.0 / 256.0);
        assert_eq!(c.rate_increase_timer, us(55));
        assert_eq!(c.alpha_timer, us(55));
        assert_eq!(c.byte_counter, 10_000_000);
        assert_eq!(c.fast_recovery_stages, 5);
        assert_eq!(c.rate_decrease_interval, us(4));
        assert_eq!(c.min_rate, Rate::mbps(100));
        assert!(!c.clamp_target_rate);
        assert!(c.validate().is_ok());
        assert!(DcqcnConfig { g: 1.5, ..c.clone() }.validate().is_err());
        assert!(DcqcnConfig { g: f64::NAN, ..c }.validate().is_err());
    }

    #[test]
    fn config_serde_defaults_missing_fields_and_rejects_unknown() {
        use serde::de::value::{Error, MapDeserializer};
        let c = DcqcnConfig::deserialize(MapDeserializer::<_, Error>::new(
            vec![("byte_counter", 5u64), ("fast_recovery_stages", 3u64)].into_iter(),
        ))
        .unwrap();
        assert_eq!(c, DcqcnConfig { byte_counter: 5, fast_recovery_stages: 3, ..Default::default() });
        let bad = DcqcnConfig::deserialize(MapDeserializer::<_, Error>::new(vec![("bogus", 1u64)].into_iter()));
        assert!(bad.is_err());
    }

    #[test]
    fn ai_and_hai_scale_with_line_rate() {
        let c = DcqcnConfig::default();
        let at = |g| dcqcn(Rate::gbps(g), c.clone());
        assert_eq!(at(40).rai(), Rate::mbps(40));
        assert_eq!(at(40).rhai(), Rate::mbps(400));
        assert_eq!(at(100).rai(), Rate::mbps(100));
        assert_eq!(at(100).rhai(), Rate::mbps(1000));
        assert_eq!(at(25).rai(), Rate::mbps(25));
        assert_eq!(at(10).rhai(), Rate::mbps(100));
        // Absolute steps replace the scaling (HPCC's RATE_AI/RATE_HAI as written).
        let c = DcqcnConfig { rai: Some(Rate::mbps(20)), rhai: Some(Rate::mbps(200)), ..c };
        let at = |g| dcqcn(Rate::gbps(g), c.clone());
        assert_eq!((at(100).rai(), at(100).rhai()), (Rate::mbps(20), Rate::mbps(200)));
        assert_eq!((at(25).rai(), at(25).rhai()), (Rate::mbps(20), Rate::mbps(200)));
    }

    #[test]
    fn starts_at_line_rate_without_timers() {
        let mut cc = dcqcn(Rate::gbps(40), DcqcnConfig::default());
        cc.on_start(Time::ZERO);
        assert_eq!(cc.rate(), Rate::gbps(40));
        assert_eq!(cc.window(), None);
        assert_eq!(cc.next_timer(), None);
        // Sending and stray timer calls at line rate change nothing.
        for i in 0..100 {
            cc.on_send(us(i), 1000);
        }
        cc.on_timer(us(1000));
        assert_eq!(cc.rate(), Rate::gbps(40));
        assert_eq!(cc.next_timer(), None);
        assert_eq!(cc.alpha(), INITIAL_ALPHA);
    }

    #[test]
    fn first_cnp_halves_rate_and_keeps_alpha_at_one() {
        // DCQCN §3 order: Rc = Rc*(1 - alpha/2) with the alpha from before the CNP (1), then
        // alpha = (1-g)*1 + g, which is exactly 1. The target stays at line rate: no increase ran
        // before this cut, so with clamp_target_rate off HPCC's rule leaves Rt where it was (line
        // rate, the same value Rt = Rc would give).
        let mut cc = dcqcn(Rate::gbps(40), DcqcnConfig::default());
        cc.on_cnp(us(100));
        assert_eq!(cc.rate(), Rate::gbps(20));
        assert_eq!(cc.target_rate(), Rate::gbps(40));
        assert_eq!(cc.alpha(), 1.0);
        assert_eq!(cc.stages(), (0, 0));
        // Both timers armed, 55 us out.
        assert_eq!(cc.next_timer(), Some(us(155)));
    }

    #[test]
    fn cut_uses_alpha_from_before_the_cnp() {
        // Let alpha decay once (a = 1-g), then cut: the cut factor is 1 - a/2, not the factor from
        // the updated alpha (1-g)a + g.
        let mut cc = dcqcn(Rate::gbps(40), DcqcnConfig { rate_increase_timer: Time::ZERO, ..Default::default() });
        cc.on_cnp(Time::ZERO);
        assert_eq!(cc.next_timer(), Some(us(55)));
        cc.on_timer(us(55));
        let a = 1.0 - G;
        assert!(close(cc.alpha(), a));
        cc.on_cnp(us(60));
        let expect = (20e9 * (1.0 - a / 2.0)) as u64;
        assert_eq!(cc.rate(), Rate(expect));
        assert!(close(cc.alpha(), (1.0 - G) * a + G));
        // The alpha timer restarted at the CNP.
        assert_eq!(cc.next_timer(), Some(us(115)));
    }

    #[test]
    fn repeated_cnps_within_decrease_interval_cut_once() {
        let mut cc = dcqcn(Rate::gbps(40), quiet_cfg());
        cc.on_cnp(us(10));
        for t in [Time::from_us(10), us(11), us(12), Time::from_ns(13_999)] {
            cc.on_cnp(t);
        }
        assert_eq!(cc.rate(), Rate::gbps(20));
        assert_eq!(cc.alpha(), 1.0);
        // The increase timer was not restarted by the ignored CNPs.
        assert_eq!(cc.next_timer(), Some(us(65)));
        // Exactly one interval after the cut, the next CNP cuts again.
        cc.on_cnp(us(14));
        assert_eq!(cc.rate(), Rate::gbps(10));
        assert_eq!(cc.next_timer(), Some(us(69)));
    }

    #[test]
    fn alpha_decays_by_one_minus_g_per_quiet_alpha_period() {
        let cfg = DcqcnConfig { rate_increase_timer: Time::ZERO, byte_counter: 0, ..Default::default() };
        let mut cc = dcqcn(Rate::gbps(40), cfg);
        cc.on_cnp(Time::ZERO);
        let mut expect = 1.0;
        for k in 1..=10u64 {
            assert_eq!(cc.next_timer(), Some(us(55 * k)));
            cc.on_timer(us(55 * k));
            expect *= 1.0 - G;
            assert!(close(cc.alpha(), expect), "k={k}: {} vs {expect}", cc.alpha());
        }
        // No rate change from alpha alone.
        assert_eq!(cc.rate(), Rate::gbps(20));
    }

    #[test]
    fn one_on_timer_call_handles_both_due_deadlines() {
        // Default: alpha and increase timers both 55 us after the cut.
        let mut cc = dcqcn(Rate::gbps(40), DcqcnConfig::default());
        cc.on_cnp(Time::ZERO);
        assert_eq!(cc.next_timer(), Some(us(55)));
        cc.on_timer(us(55));
        assert!(close(cc.alpha(), 1.0 - G));
        assert_eq!(cc.rate(), Rate::gbps(30)); // one fast-recovery step
        assert_eq!(cc.stages(), (1, 0));
        assert_eq!(cc.next_timer(), Some(us(110)));
    }

    #[test]
    fn fast_recovery_f_stages_then_additive_increase_scaled() {
        // 100 Gb/s: R_AI = 40 Mb/s * 100/40 = 100 Mb/s. clamp_target_rate so the second cut sets
        // Rt = Rc below line rate and the additive step shows.
        let line = Rate::gbps(100);
        let cfg = DcqcnConfig { clamp_target_rate: true, ..quiet_cfg() };
        let mut cc = dcqcn(line, cfg);
        cc.on_cnp(Time::ZERO);
        assert_eq!((cc.rate(), cc.target_rate()), (Rate::gbps(50), Rate::gbps(100)));
        cc.on_cnp(us(10));
        assert_eq!((cc.rate(), cc.target_rate()), (Rate::gbps(25), Rate::gbps(50)));
        // F = 5 fast-recovery steps, one per 55 us: Rc halves its distance to Rt = 50 Gb/s.
        let mut rc: u64 = 25_000_000_000;
        for k in 1..=5u64 {
            let t = us(10 + 55 * k);
            assert_eq!(cc.next_timer(), Some(t));
            cc.on_timer(t);
            rc = (rc + 50_000_000_000).div_ceil(2);
            assert_eq!(cc.rate(), Rate(rc), "fast recovery step {k}");
            assert_eq!(cc.target_rate(), Rate::gbps(50));
        }
        assert_eq!(cc.stages(), (5, 0));
        // Then additive increase: Rt += R_AI (scaled), Rc = (Rt + Rc)/2, every timer.
        let mut rt: u64 = 50_000_000_000;
        for k in 6..=8u64 {
            cc.on_timer(us(10 + 55 * k));
            rt += 100_000_000;
            rc = (rc + rt).div_ceil(2);
            assert_eq!(cc.target_rate(), Rate(rt));
            assert_eq!(cc.rate(), Rate(rc));
        }
        // BC never reached F, so no hyper increase however long the timer runs.
        assert_eq!(cc.stages(), (8, 0));
    }

    #[test]
    fn target_clamp_follows_hpcc_rule() {
        // clamp_target_rate off: back-to-back cuts with no increase between them keep Rt.
        let mut cc = dcqcn(Rate::gbps(40), quiet_cfg());
        cc.on_cnp(Time::ZERO);
        cc.on_cnp(us(5));
        assert_eq!((cc.rate(), cc.target_rate()), (Rate::gbps(10), Rate::gbps(40)));
        // After an increase, the next cut does set Rt = Rc.
        cc.on_timer(us(60)); // fast recovery: 10 -> 25
        assert_eq!(cc.rate(), Rate::gbps(25));
        cc.on_cnp(us(61));
        assert_eq!((cc.rate(), cc.target_rate()), (Rate(12_500_000_000), Rate::gbps(25)));
    }

    #[test]
    fn byte_counter_triggers_increases() {
        let line = Rate::gbps(40);
        let cfg =
            DcqcnConfig { byte_counter: 3000, rate_increase_timer: Time::ZERO, clamp_target_rate: true, ..quiet_cfg() };
        let mut cc = dcqcn(line, cfg);
        cc.on_cnp(Time::ZERO);
        cc.on_cnp(us(5)); // Rc 10 G, Rt 20 G
        assert_eq!((cc.rate(), cc.target_rate()), (Rate::gbps(10), Rate::gbps(20)));
        assert_eq!(cc.next_timer(), None); // timer off, alpha off: only bytes drive recovery
        cc.on_send(us(6), 1000);
        cc.on_send(us(6), 1000);
        assert_eq!(cc.rate(), Rate::gbps(10));
        cc.on_send(us(6), 1000);
        assert_eq!(cc.rate(), Rate::gbps(15));
        assert_eq!(cc.stages(), (0, 1));
        // A 1500-byte leftover carries over: 1500 + 1500 completes the next 3000.
        cc.on_send(us(7), 1500);
        assert_eq!(cc.rate(), Rate::gbps(15));
        cc.on_send(us(7), 1500);
        assert_eq!(cc.rate(), Rate(17_500_000_000));
        // After F byte events: additive increase with T = 0 < F.
        for _ in 0..3 * 3 {
            cc.on_send(us(8), 1000);
        }
        assert_eq!(cc.stages(), (0, 5));
        assert_eq!(cc.target_rate(), Rate::gbps(20));
        cc.on_send(us(9), 3000);
        assert_eq!(cc.target_rate(), Rate(20_040_000_000));
        assert_eq!(cc.stages(), (0, 6));
    }

    #[test]
    fn hyper_increase_once_both_counters_reach_f() {
        let line = Rate::gbps(40);
        let cfg = DcqcnConfig {
            fast_recovery_stages: 2,
            byte_counter: 1000,
            rate_increase_timer: us(10),
            clamp_target_rate: true,
            ..quiet_cfg()
        };
        let mut cc = dcqcn(line, cfg);
        cc.on_cnp(Time::ZERO);
        cc.on_cnp(us(4)); // Rc 10 G, Rt 20 G; timer at 14, 24, ...
                          // Two byte events (fast recovery, BC 0 -> 2).
        cc.on_send(us(5), 1000);
        cc.on_send(us(5), 1000);
        assert_eq!(cc.stages(), (0, 2));
        assert_eq!(cc.target_rate(), Rate::gbps(20));
        // Timer events: T = 0, 1 -> additive (BC >= F > T); T = 2 -> hyper with i = 1.
        cc.on_timer(us(14));
        cc.on_timer(us(24));
        let rt = 20_000_000_000 + 2 * 40_000_000;
        assert_eq!(cc.target_rate(), Rate(rt));
        assert_eq!(cc.stages(), (2, 2));
        cc.on_timer(us(34));
        let rt = rt + 400_000_000; // i = min(2,2) - 2 + 1 = 1
        assert_eq!(cc.target_rate(), Rate(rt));
        // A byte event with T = 3, BC = 2: i = min(3, 2) - 2 + 1 = 1 again.
        cc.on_send(us(35), 1000);
        let rt = rt + 400_000_000;
        assert_eq!(cc.target_rate(), Rate(rt));
        assert_eq!(cc.stages(), (3, 3));
        // T = 3, BC = 3: i = 2.
        cc.on_timer(us(44));
        let rt = rt + 2 * 400_000_000;
        assert_eq!(cc.target_rate(), Rate(rt));
        assert!(cc.rate() <= cc.target_rate());
    }

    #[test]
    fn rate_stays_between_min_rate_and_line_rate() {
        let line = Rate::gbps(40);
        let mut cc = dcqcn(line, quiet_cfg());
        let mut t = Time::ZERO;
        for _ in 0..40 {
            cc.on_cnp(t);
            assert!(cc.rate() >= Rate::mbps(100));
            t += us(5);
        }
        assert_eq!(cc.rate(), Rate::mbps(100));
        // Hyper increases with a huge R_HAI still cap at line rate.
        let cfg = DcqcnConfig {
            rhai_at_40g: Rate::gbps(400),
            rai_at_40g: Rate::gbps(400),
            fast_recovery_stages: 0,
            ..quiet_cfg()
        };
        let mut cc = dcqcn(line, cfg);
        cc.on_cnp(Time::ZERO);
        while let Some(t) = cc.next_timer() {
            cc.on_timer(t);
            assert!(cc.rate() <= line && cc.target_rate() <= line);
            assert!(cc.rate() <= cc.target_rate());
        }
        assert_eq!(cc.rate(), line);
        // min_rate above line rate is capped at line rate: a cut cannot raise the rate.
        let mut cc = dcqcn(Rate::gbps(10), DcqcnConfig { min_rate: Rate::gbps(20), ..Default::default() });
        cc.on_cnp(Time::ZERO);
        assert_eq!(cc.rate(), Rate::gbps(10));
        assert_eq!(cc.next_timer(), None);
    }

    #[test]
    fn returns_to_line_rate_and_timers_stop() {
        let line = Rate::gbps(40);
        let mut cc = dcqcn(line, DcqcnConfig::default());
        cc.on_cnp(us(3));
        let mut last = us(3);
        let mut n = 0;
        while let Some(t) = cc.next_timer() {
            assert!(t > last, "deadlines move forward");
            last = t;
            cc.on_timer(t);
            n += 1;
            assert!(n < 10_000, "did not converge");
        }
        assert_eq!(cc.rate(), line);
        assert_eq!(cc.target_rate(), line);
        assert_eq!(cc.next_timer(), None);
        // Rt stayed at line rate (no clamp on the first cut), so fast recovery alone closes the
        // 20 Gb/s gap: each 55 us step leaves floor(gap/2), and 2^34 <= 2e10 < 2^35, so 35 steps.
        assert_eq!(cc.stages().0, 35);
        assert_eq!(last, us(3 + 35 * 55));
    }

    #[test]
    fn alpha_keeps_decaying_while_timers_are_stopped() {
        let line = Rate::gbps(40);
        let cfg = DcqcnConfig { rate_increase_timer: us(10), ..Default::default() };
        let mut cc = dcqcn(line, cfg);
        cc.on_cnp(Time::ZERO);
        while let Some(t) = cc.next_timer() {
            cc.on_timer(t);
        }
        assert_eq!(cc.rate(), line);
        // Fast recovery took 35 x 10 us = 350 us; the alpha decays at 55, 110, ..., 330 ran (6).
        assert!(close(cc.alpha(), (1.0 - G).powi(6)));
        // At 10 ms a CNP finds alpha decayed once per 55 us period since the first CNP, as if the
        // alpha timer had kept running while the flow was at line rate.
        let now = us(10_000);
        cc.on_cnp(now);
        let k = 10_000 / 55; // deadlines 55, 110, ..., 9955 us
        let a = (1.0 - G).powi(k);
        assert!(close(cc.alpha(), (1.0 - G) * a + G));
        let expect = (40e9 * (1.0 - a / 2.0)) as u64;
        let got = cc.rate().0;
        assert!(got.abs_diff(expect) <= 4, "{got} vs {expect}");
        // Timers run again: increase every 10 us, alpha 55 us after the CNP.
        assert_eq!(cc.next_timer(), Some(now + us(10)));
        for k in 1..=5 {
            cc.on_timer(now + us(10 * k));
        }
        assert_eq!(cc.next_timer(), Some(now + us(55)));
        let before = cc.alpha();
        cc.on_timer(now + us(55));
        assert!(close(cc.alpha(), before * (1.0 - G)));
    }

    #[test]
    fn due_timer_runs_before_a_cnp_at_the_same_instant() {
        // The host may deliver the CNP first; the increase due at 55 us still happens first and
        // counts as an increase for the target clamp.
        let mut cc = dcqcn(Rate::gbps(40), quiet_cfg());
        cc.on_cnp(Time::ZERO);
        cc.on_cnp(us(55));
        // Fast recovery 20 -> 30 at 55 us, then the cut: Rt = 30 (an increase ran), Rc = 15.
        assert_eq!((cc.rate(), cc.target_rate()), (Rate::gbps(15), Rate::gbps(30)));
        assert_eq!(cc.next_timer(), Some(us(110)));
    }
}
