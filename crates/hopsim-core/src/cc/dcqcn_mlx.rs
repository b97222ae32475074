//! DCQCN reaction point as the HPCC ns-3 simulator's Mellanox model runs it
//! (alibaba-edu/High-Precision-Congestion-Control, `simulation/src/point-to-point/model/rdma-hw.cc`,
//! `CC_MODE 1`), chosen by `DcqcnConfig::model = "mlx"`. The `paper` model (`cc::dcqcn`) cuts
//! when a CNP arrives. Here a CNP only raises flags, and three periodic events per flow do the
//! work, as in the NIC firmware the simulator imitates. The state is the simulator's
//! `RdmaQueuePair::mlx`: current rate `Rc` (`m_rate`), target rate `Rt`, `alpha`, a "CNP came"
//! flag for alpha and one for the decrease, and the stage count `m_rpTimeStage`.
//!
//! **CNP** (`cnp_received_mlx`): sets both flags. The flow's first CNP starts everything instead:
//! alpha = 1 with its flag cleared, the alpha event `alpha_timer` later, the decrease check
//! `rate_decrease_interval + 1 ns` later (the simulator adds the 1 ns so that the check runs
//! after the alpha event of the same period), and `Rt = Rc = rate_on_first_cnp x Rc`. It cuts
//! nothing: the first cut comes at the first decrease check.
//!
//! **Alpha event**, every `alpha_timer` for the rest of the flow (`UpdateAlphaMlx`):
//! `alpha = (1-g) alpha + g` if the flag is set, else `(1-g) alpha`; then clears the flag.
//!
//! **Decrease check**, every `rate_decrease_interval` for the rest of the flow
//! (`CheckRateDecreaseMlx`). If the decrease flag is set: `Rt = Rc`, except when
//! `clamp_target_rate` is off and no increase ran since the last cut (`m_rpTimeStage == 0`); then
//! `Rc = max(min_rate, Rc (1 - alpha/2))`, stage = 0, the flag is cleared, and the rate-increase
//! timer restarts from now. So CNPs give at most one cut per interval, with the alpha of that
//! instant.
//!
//! **Rate-increase event**, every `rate_increase_timer` after the last cut, for the rest of the
//! flow (`RateIncEventTimerMlx`, `RateIncEventMlx`):
//! - stage < F: fast recovery, `Rc = Rc/2 + Rt/2` (`FastRecoveryMlx`);
//! - stage == F: `Rt += R_AI`, capped at line rate, then the same average (`ActiveIncreaseMlx`);
//! - stage > F: `Rt += R_HAI`, capped, then the average (`HyperIncreaseMlx`);
//!
//! then stage++. There is no byte counter, and `R_AI`/`R_HAI` are fixed steps (`rai`/`rhai` import
//! the simulator's `RATE_AI`/`RATE_HAI` as they are).
//!
//! **Arithmetic** is `DataRate`'s (`cc::datarate`): the cut and both halves truncate. The average
//! of `Rc` below an even `Rt` stops at `Rt - 1` (`(Rt-1)/2 + Rt/2 = Rt - 1`), so a flow that was
//! cut once never returns to exactly line rate. That is the simulator's behaviour, and we keep it.
//!
//! **Lazy events.** The simulator schedules every one of these events for as long as the flow
//! lives; HPCC's config runs the alpha event every microsecond. We schedule none. We keep each
//! chain's next due time, its phase, and whenever a hook runs at `now` we first apply every event
//! due at or before `now`, in the simulator's order. Most of them can be skipped:
//! - alpha events between CNPs only multiply alpha by `1-g`. We multiply them out when alpha is
//!   next read (a decrease check, or the next hook), one product per event in the simulator's
//!   order, so alpha is the same `f64`. `(1-g)^k` in one power would round differently. Once
//!   alpha is below `alpha_floor`, `1 - alpha/2` is exactly 1 and `(1-g) alpha + g` is exactly
//!   `g`. Further decays then cannot change any rate, so they are skipped. This bounds the work
//!   of one catch-up by the decays from 1 down to that floor (about 11,000 for g = 1/256).
//! - a decrease check does something only while the flag is set: at most once after each CNP;
//! - increase events stop mattering once `(Rc, Rt)` is a fixed point of the hyper step and the
//!   stage is past `F`. Until then each one is applied.
//!
//! `next_timer` reports only the deadlines that can change the rate: the next decrease check
//! while the flag is set, and the next increase event until the fixed point.
//!
//! **Order at equal times.** ns-3 runs events due at the same instant in the order they were
//! scheduled (`EventKey` `m_ts`, then `m_uid`). Each chain schedules its next event when the
//! current one runs, one period ahead; the first decrease check is scheduled one period and 1 ns
//! ahead. So of two events due together, the one with the longer period (counting that 1 ns) was
//! scheduled first and runs first. With equal periods the decrease check runs first: it
//! reschedules itself before it restarts the increase timer. Where the chains first coincide, the
//! first check was already scheduled at the first CNP, before any other event that could tie
//! with it. The one exception: an alpha event and the first check, both scheduled by the first
//! CNP. Alpha was scheduled first there, so it runs first. The alpha and increase chains share
//! no state, so their relative order does not matter. A hook at the same instant as a due event
//! runs after it, whatever order the host calls them in.

use super::datarate;
use super::dcqcn::DcqcnConfig;
use super::{CongestionControl, FlowInfo};
use crate::time::{Rate, Time};

const NS: Time = Time::from_ns(1);

/// Mellanox-model DCQCN sender state of one flow.
#[derive(Clone, Debug)]
pub struct DcqcnMlx {
    // Parameters (bit/s, picoseconds).
    line_rate: u64,
    rai: u64,
    rhai: u64,
    min_rate: u64,
    g: f64,
    /// Below this, alpha's exact value can no longer change a rate (see the module docs).
    alpha_floor: f64,
    alpha_period: Time,
    dec_period: Time,
    inc_period: Time,
    f: u32,
    clamp_target: bool,
    /// `rate_on_first_cnp x Rc` at the first CNP; `Rc` is still the line rate then.
    first_rate: u64,
    // `RdmaQueuePair::mlx`.
    rc: u64,
    rt: u64,
    alpha: f64,
    alpha_cnp: bool,
    dec_cnp: bool,
    stage: u32,
    /// The first CNP came (`!m_first_cnp`); the periodic events run.
    started: bool,
    // The periodic events: the next one of each chain.
    /// `None` while not started, or with `alpha_timer` 0 (alpha updates off).
    next_alpha: Option<Time>,
    next_check: Time,
    /// `next_check` is the first check (scheduled at the first CNP, 1 ns late).
    first_check: bool,
    /// `None` until the first cut, or with `rate_increase_timer` 0 (increase off).
    next_inc: Option<Time>,
    /// `(Rc, Rt)` is a fixed point and the stage is past `F`: increase events change nothing.
    settled: bool,
}

/// The largest alpha whose exact value still matters. If `a < floor`, then `1 - a/2 == 1` and
/// `(1-g) a + g == g` in `f64`: half the gap to the next double above `g` absorbs `(1-g) a`, and
/// `a/2 < 2^-55` vanishes beside 1. With `g = 0` alpha never changes, and no decay is skipped.
fn alpha_floor(g: f64) -> f64 {
    if g > 0.0 {
        let ulp = f64::from_bits(g.to_bits() + 1) - g;
        (ulp / 4.0).min(2f64.powi(-54))
    } else {
        0.0
    }
}

/// The first due time of a chain (`next`, `next + period`, ...) after `now`, and how many were
/// due at or before it.
fn skip_past(next: Time, period: Time, now: Time) -> (Time, u64) {
    if next > now {
        return (next, 0);
    }
    let k = (now.0 - next.0) / period.0 + 1;
    (Time(next.0 + k * period.0), k)
}

impl DcqcnMlx {
    pub fn new(cfg: &DcqcnConfig, info: &FlowInfo) -> DcqcnMlx {
        debug_assert!(cfg.validate().is_ok(), "{:?}", cfg.validate());
        let line = info.line_rate.0;
        let (rai, rhai) = cfg.steps(info.line_rate);
        DcqcnMlx {
            line_rate: line,
            rai: rai.0,
            rhai: rhai.0,
            min_rate: cfg.min_rate.0.min(line),
            g: cfg.g,
            alpha_floor: alpha_floor(cfg.g),
            alpha_period: cfg.alpha_timer,
            dec_period: cfg.rate_decrease_interval.max(Time(1)),
            inc_period: cfg.rate_increase_timer,
            f: cfg.fast_recovery_stages,
            clamp_target: cfg.clamp_target_rate,
            first_rate: datarate::mul(line, cfg.rate_on_first_cnp),
            rc: line,
            rt: line,
            alpha: super::dcqcn::INITIAL_ALPHA,
            alpha_cnp: false,
            dec_cnp: false,
            stage: 0,
            started: false,
            next_alpha: None,
            next_check: Time::ZERO,
            first_check: false,
            next_inc: None,
            settled: false,
        }
    }

    /// Target rate `Rt`.
    pub fn target_rate(&self) -> Rate {
        Rate(self.rt)
    }
    /// Alpha as of the last catch-up; once below the floor, decays are no longer applied to it.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    /// `m_rpTimeStage`: increase events since the last cut. Not counted on at the fixed point.
    pub fn stage(&self) -> u32 {
        self.stage
    }

    /// Does an alpha event run before the pending decrease check when both are due together?
    /// The one scheduled earlier runs first, so the longer period wins (see the module docs).
    fn alpha_before_check(&self) -> bool {
        let d = if self.first_check { self.dec_period + NS } else { self.dec_period };
        self.alpha_period > d || (self.alpha_period == d && self.first_check)
    }

    /// Does an increase event run before a decrease check due at the same time? No increase is
    /// pending before the first check, so only the plain period counts.
    fn inc_before_check(&self) -> bool {
        self.inc_period > self.dec_period
    }

    /// Applies every periodic event due at or before `now`, in the simulator's order.
    fn advance(&mut self, now: Time) {
        if !self.started {
            return;
        }
        loop {
            let check = (self.dec_cnp && self.next_check <= now).then_some(self.next_check);
            let inc = self.next_inc.filter(|&t| t <= now && !self.settled);
            match (check, inc) {
                (None, None) => break,
                (Some(c), Some(i)) if i < c || (i == c && self.inc_before_check()) => self.rate_inc_event(i),
                (Some(c), _) => self.check_rate_decrease(c),
                (None, Some(i)) => self.rate_inc_event(i),
            }
        }
        // What is left due by now changes no rate: checks without the flag, increases at the
        // fixed point, and alpha events.
        let (next, k) = skip_past(self.next_check, self.dec_period, now);
        if k > 0 {
            self.next_check = next;
            self.first_check = false;
        }
        if let Some(t) = self.next_inc {
            let (next, k) = skip_past(t, self.inc_period, now);
            self.next_inc = Some(next);
            self.stage = self.stage.saturating_add(k.min(u32::MAX as u64) as u32);
        }
        self.update_alpha(now, true);
    }

    /// The alpha events (`UpdateAlphaMlx`) due before `limit`, and those due at it too if
    /// `inclusive`.
    fn update_alpha(&mut self, limit: Time, inclusive: bool) {
        let Some(next) = self.next_alpha else { return };
        let last = if inclusive { limit } else { Time(limit.0.saturating_sub(1)) };
        let (after, mut k) = skip_past(next, self.alpha_period, last);
        if k == 0 {
            return;
        }
        self.next_alpha = Some(after);
        if self.alpha_cnp {
            self.alpha = (1.0 - self.g) * self.alpha + self.g;
            self.alpha_cnp = false;
            k -= 1;
        }
        if self.g > 0.0 {
            let keep = 1.0 - self.g;
            while k > 0 && self.alpha >= self.alpha_floor {
                self.alpha *= keep;
                k -= 1;
            }
        }
    }

    /// `CheckRateDecreaseMlx` at `t`, with the decrease flag set.
    fn check_rate_decrease(&mut self, t: Time) {
        self.update_alpha(t, self.alpha_before_check());
        self.next_check = t + self.dec_period;
        self.first_check = false;
        if self.clamp_target || self.stage != 0 {
            self.rt = self.rc;
        }
        self.rc = datarate::mul(self.rc, 1.0 - self.alpha / 2.0).max(self.min_rate);
        self.stage = 0;
        self.dec_cnp = false;
        self.next_inc = (self.inc_period > Time::ZERO).then(|| t + self.inc_period);
        self.settled = false;
    }

    /// `(Rc, Rt)` after one increase event at `stage` (`RateIncEventMlx`).
    fn increase(&self, rc: u64, rt: u64, stage: u32) -> (u64, u64) {
        let rt = match stage.cmp(&self.f) {
            std::cmp::Ordering::Less => rt,
            std::cmp::Ordering::Equal => rt.saturating_add(self.rai).min(self.line_rate),
            std::cmp::Ordering::Greater => rt.saturating_add(self.rhai).min(self.line_rate),
        };
        (datarate::div(rc, 2.0) + datarate::div(rt, 2.0), rt)
    }

    /// `RateIncEventTimerMlx` at `t`.
    fn rate_inc_event(&mut self, t: Time) {
        self.next_inc = Some(t + self.inc_period);
        (self.rc, self.rt) = self.increase(self.rc, self.rt, self.stage);
        self.stage = self.stage.saturating_add(1);
        self.settled = self.stage > self.f && self.increase(self.rc, self.rt, self.stage) == (self.rc, self.rt);
    }
}

impl CongestionControl for DcqcnMlx {
    /// `cnp_received_mlx`, after every event due by `now`.
    fn on_cnp(&mut self, now: Time) {
        self.advance(now);
        self.alpha_cnp = true;
        self.dec_cnp = true;
        if !self.started {
            self.started = true;
            self.alpha = 1.0;
            self.alpha_cnp = false;
            self.next_alpha = (self.alpha_period > Time::ZERO).then(|| now + self.alpha_period);
            self.next_check = now + self.dec_period + NS;
            self.first_check = true;
            self.rc = self.first_rate;
            self.rt = self.first_rate;
        }
    }

    fn on_timer(&mut self, now: Time) {
        self.advance(now);
    }

    #[inline]
    fn next_timer(&self) -> Option<Time> {
        let check = self.dec_cnp.then_some(self.next_check);
        let inc = self.next_inc.filter(|_| !self.settled);
        match (check, inc) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    #[inline]
    fn rate(&self) -> Rate {
        Rate(self.rc)
    }
}

#[cfg(test)]
mod tests {
    use super::super::dcqcn::DcqcnModel;
    use super::*;
    use crate::rng::Rng;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    const G: f64 = 1.0 / 256.0;

    fn us(v: u64) -> Time {
        Time::from_us(v)
    }

    /// HPCC's `run.py` DCQCN settings at 100 Gb/s, with `alpha_timer` 1 us, a 4 us decrease
    /// interval and the steps as absolute rates (`ai = 5 * bw / 25`, `hai = 50 * bw / 25` Mb/s).
    fn hpcc_cfg(t_inc: Time, f: u32) -> DcqcnConfig {
        DcqcnConfig {
            model: DcqcnModel::Mlx,
            g: G,
            alpha_timer: us(1),
            rate_decrease_interval: us(4),
            rate_increase_timer: t_inc,
            fast_recovery_stages: f,
            rai: Some(Rate::mbps(20)),
            rhai: Some(Rate::mbps(200)),
            min_rate: Rate::mbps(100),
            ..Default::default()
        }
    }

    fn mlx(line: Rate, cfg: &DcqcnConfig) -> DcqcnMlx {
        assert!(cfg.validate().is_ok());
        DcqcnMlx::new(cfg, &FlowInfo { line_rate: line, base_rtt: us(10), mtu: 1000 })
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
    enum Ev {
        UpdateAlpha,
        CheckRateDecrease,
        /// `RateIncEventTimerMlx`, tagged with the generation of `m_rpTimer` it belongs to (a
        /// cancelled one is skipped).
        RateIncTimer(u64),
    }

    /// The simulator's `*Mlx` functions written out one by one, on an explicit event queue
    /// ordered like ns-3's (time, then scheduling order). Every periodic event is scheduled and
    /// run. A CNP at time t is handled after the events due at t.
    struct Reference {
        line: u64,
        rai: u64,
        rhai: u64,
        min_rate: u64,
        g: f64,
        first_factor: f64,
        clamp: bool,
        f: u32,
        alpha_iv: Time,
        dec_iv: Time,
        inc_iv: Time,
        queue: BinaryHeap<Reverse<(Time, u64, Ev)>>,
        uid: u64,
        rp_timer: u64,
        // RdmaQueuePair: m_rate and mlx
        rate: u64,
        target: u64,
        alpha: f64,
        alpha_cnp_arrived: bool,
        first_cnp: bool,
        decrease_cnp_arrived: bool,
        rp_time_stage: u32,
    }

    impl Reference {
        fn new(line: Rate, c: &DcqcnConfig) -> Reference {
            let (rai, rhai) = c.steps(line);
            Reference {
                line: line.0,
                rai: rai.0,
                rhai: rhai.0,
                min_rate: c.min_rate.0,
                g: c.g,
                first_factor: c.rate_on_first_cnp,
                clamp: c.clamp_target_rate,
                f: c.fast_recovery_stages,
                alpha_iv: c.alpha_timer,
                dec_iv: c.rate_decrease_interval,
                inc_iv: c.rate_increase_timer,
                queue: BinaryHeap::new(),
                uid: 0,
                rp_timer: 0,
                rate: line.0,
                target: line.0,
                alpha: 1.0,
                alpha_cnp_arrived: false,
                first_cnp: true,
                decrease_cnp_arrived: false,
                rp_time_stage: 0,
            }
        }

        fn schedule(&mut self, at: Time, ev: Ev) {
            self.uid += 1;
            self.queue.push(Reverse((at, self.uid, ev)));
        }

        fn run_until(&mut self, t: Time) {
            while let Some(&Reverse((at, _, ev))) = self.queue.peek() {
                if at > t {
                    break;
                }
                self.queue.pop();
                match ev {
                    Ev::UpdateAlpha => self.update_alpha_mlx(at),
                    Ev::CheckRateDecrease => self.check_rate_decrease_mlx(at),
                    Ev::RateIncTimer(gen) if gen == self.rp_timer => self.rate_inc_event_timer_mlx(at),
                    Ev::RateIncTimer(_) => {} // cancelled
                }
            }
        }

        fn cnp_received_mlx(&mut self, now: Time) {
            self.run_until(now);
            self.alpha_cnp_arrived = true;
            self.decrease_cnp_arrived = true;
            if self.first_cnp {
                self.alpha = 1.0;
                self.alpha_cnp_arrived = false;
                self.schedule(now + self.alpha_iv, Ev::UpdateAlpha);
                self.schedule(now + self.dec_iv + NS, Ev::CheckRateDecrease);
                self.rate = (self.rate as f64 * self.first_factor) as u64;
                self.target = self.rate;
                self.first_cnp = false;
            }
        }

        fn update_alpha_mlx(&mut self, now: Time) {
            if self.alpha_cnp_arrived {
                self.alpha = (1.0 - self.g) * self.alpha + self.g;
            } else {
                self.alpha *= 1.0 - self.g;
            }
            self.alpha_cnp_arrived = false;
            self.schedule(now + self.alpha_iv, Ev::UpdateAlpha);
        }

        fn check_rate_decrease_mlx(&mut self, now: Time) {
            self.schedule(now + self.dec_iv, Ev::CheckRateDecrease);
            if self.decrease_cnp_arrived {
                let clamp = self.clamp || self.rp_time_stage != 0;
                if clamp {
                    self.target = self.rate;
                }
                self.rate = self.min_rate.max((self.rate as f64 * (1.0 - self.alpha / 2.0)) as u64);
                self.rp_time_stage = 0;
                self.decrease_cnp_arrived = false;
                self.rp_timer += 1; // Simulator::Cancel(m_rpTimer)
                self.schedule(now + self.inc_iv, Ev::RateIncTimer(self.rp_timer));
            }
        }

        fn rate_inc_event_timer_mlx(&mut self, now: Time) {
            self.schedule(now + self.inc_iv, Ev::RateIncTimer(self.rp_timer));
            if self.rp_time_stage < self.f {
                // FastRecoveryMlx
            } else if self.rp_time_stage == self.f {
                self.target = (self.target + self.rai).min(self.line); // ActiveIncreaseMlx
            } else {
                self.target = (self.target + self.rhai).min(self.line); // HyperIncreaseMlx
            }
            self.rate = (self.rate as f64 / 2.0) as u64 + (self.target as f64 / 2.0) as u64;
            self.rp_time_stage += 1;
        }
    }

    /// CNP arrival times from `t0` to `end`: bursts, medium gaps and long quiet spells (gaps
    /// with means `unit`, 30 `unit` and 1000 `unit`), some at the same instant as the last one,
    /// some snapped onto the grid of the periodic events (`t0 + k grid`, and 1 ns after it, where
    /// the decrease checks fall).
    fn cnp_times(rng: &mut Rng, t0: Time, end: Time, unit: f64, grid: Time) -> Vec<Time> {
        let mut out = vec![t0];
        let mut t = t0;
        while t < end {
            let r = rng.uniform();
            let gap = if r < 0.03 {
                0.0
            } else if r < 0.6 {
                rng.exponential(unit)
            } else if r < 0.93 {
                rng.exponential(30.0 * unit)
            } else {
                rng.exponential(1000.0 * unit)
            };
            t += Time(gap as u64);
            let snap = rng.uniform();
            if snap < 0.2 {
                t = Time(t0.0 + (t.0 - t0.0).div_ceil(grid.0) * grid.0);
            } else if snap < 0.3 {
                t = Time(t0.0 + (t.0 - t0.0).div_ceil(grid.0) * grid.0) + NS;
            }
            out.push(t);
        }
        out
    }

    /// Drives `DcqcnMlx` as the host does (hooks, and `on_timer` only at `next_timer`) beside
    /// the reference, and compares `Rc` and `Rt` at random sample times. Returns how many cuts the
    /// reference made, so a caller can check that the run did exercise the model.
    fn compare(line: Rate, cfg: &DcqcnConfig, seed: u64, unit: f64, grid: Time, end: Time) -> usize {
        let mut rng = Rng::stream(seed, 7, 0);
        let t0 = Time(grid.0 * rng.range_inclusive(1, 20));
        let cnps = cnp_times(&mut rng, t0, end, unit, grid);
        let mut samples = vec![];
        let mut t = Time::ZERO;
        while t < end + Time(200 * unit as u64) {
            t += Time(rng.exponential(unit / 2.0) as u64);
            samples.push(t);
        }
        samples.extend(cnps.iter().copied());
        samples.sort();
        let mut cc = mlx(line, cfg);
        let mut rf = Reference::new(line, cfg);
        let (mut ci, mut cuts, mut last_rate) = (0, 0, line.0);
        let mut last_deadline = Time::ZERO;
        for &s in &samples {
            loop {
                let deadline = cc.next_timer().filter(|&d| d <= s);
                let cnp = cnps.get(ci).copied().filter(|&c| c <= s);
                let now = match (deadline, cnp) {
                    (None, None) => break,
                    (Some(d), Some(c)) => d.min(c),
                    (d, c) => d.or(c).unwrap(),
                };
                // The host may deliver a CNP before or after a deadline of the same instant.
                if cnp == Some(now) && (deadline != Some(now) || rng.uniform() < 0.5) {
                    cc.on_cnp(now);
                    rf.cnp_received_mlx(now);
                    ci += 1;
                } else {
                    assert!(now >= last_deadline, "deadlines move forward");
                    last_deadline = now;
                    cc.on_timer(now);
                }
            }
            rf.run_until(s);
            if rf.rate < last_rate {
                cuts += 1;
            }
            last_rate = rf.rate;
            assert_eq!(
                (cc.rate().0, cc.target_rate().0),
                (rf.rate, rf.target),
                "seed {seed} at {s}: (Rc, Rt) differ ({:?})",
                (cfg.rate_increase_timer, cfg.fast_recovery_stages)
            );
        }
        cuts
    }

    #[test]
    fn mlx_matches_an_explicit_event_loop() {
        // HPCC's settings: g = 1/256, alpha every 1 us, decrease checks every 4 us, RP timer
        // 300 us (run.py) and 900 us (config.txt), F = 1 (both) and 5 (RdmaHw default). With a
        // 300 us timer the increase events coincide with decrease checks (300 = 75 x 4).
        for t_inc in [us(300), us(900)] {
            for f in [1, 5] {
                for seed in 1..=4 {
                    let cfg = hpcc_cfg(t_inc, f);
                    let cuts = compare(Rate::gbps(100), &cfg, seed, 2e6, us(1), Time::from_ms(30));
                    assert!(cuts > 10, "seed {seed}: only {cuts} cuts");
                }
            }
        }
        // 25 Gb/s with big steps: flows get back to their fixed point between CNPs.
        let cfg = DcqcnConfig { rhai: Some(Rate::gbps(2)), clamp_target_rate: true, ..hpcc_cfg(us(55), 5) };
        for seed in 1..=3 {
            compare(Rate::gbps(25), &cfg, seed, 2e6, us(1), Time::from_ms(30));
        }
    }

    #[test]
    fn mlx_same_instant_events_run_in_ns3_order() {
        // Periods chosen so that the chains keep coinciding:
        // - alpha 4 us + 1 ns: the first alpha event and the first check are both due at the same
        //   instant, and both were scheduled by the first CNP (alpha first);
        // - increase timer = decrease interval: the check runs before the increase it cancels;
        // - alpha = check = 1 ns, increase 3 ns: ties at every nanosecond.
        let base = hpcc_cfg(us(4), 1);
        let cases = [
            (DcqcnConfig { alpha_timer: Time::from_ns(4001), ..base.clone() }, 2e6, us(1), Time::from_ms(10)),
            (DcqcnConfig { rate_increase_timer: us(4), ..base.clone() }, 2e6, us(1), Time::from_ms(10)),
            (
                DcqcnConfig {
                    alpha_timer: NS,
                    rate_decrease_interval: NS,
                    rate_increase_timer: Time::from_ns(3),
                    ..base.clone()
                },
                2e3,
                NS,
                us(20),
            ),
            (
                DcqcnConfig { alpha_timer: Time::from_ns(2), rate_decrease_interval: Time::from_ns(2), ..base.clone() },
                2e3,
                NS,
                us(20),
            ),
        ];
        for (cfg, unit, grid, end) in cases {
            for seed in 1..=3 {
                compare(Rate::gbps(100), &cfg, seed, unit, grid, end);
            }
        }
    }

    #[test]
    fn mlx_first_cnp_cuts_only_at_the_first_decrease_check() {
        let cfg = hpcc_cfg(us(300), 5);
        let mut cc = mlx(Rate::gbps(100), &cfg);
        assert_eq!(cc.next_timer(), None);
        let t0 = us(10);
        cc.on_cnp(t0);
        // No cut at the first CNP (rate_on_first_cnp = 1).
        assert_eq!((cc.rate(), cc.target_rate()), (Rate::gbps(100), Rate::gbps(100)));
        assert_eq!(cc.alpha(), 1.0);
        // The first check is 4 us + 1 ns later, after the alpha event at 4 us.
        assert_eq!(cc.next_timer(), Some(t0 + us(4) + NS));
        cc.on_timer(t0 + us(4));
        assert_eq!(cc.rate(), Rate::gbps(100));
        cc.on_timer(t0 + us(4) + NS);
        // Alpha decayed 4 times (events at 1, 2, 3, 4 us; the first CNP cleared its flag).
        let mut a = 1.0f64;
        for _ in 0..4 {
            a *= 1.0 - G;
        }
        assert_eq!(cc.alpha(), a);
        assert_eq!(cc.rate().0, (100e9 * (1.0 - a / 2.0)) as u64);
        // No increase ran before this cut and clamp_target_rate is off: Rt stays at line rate.
        assert_eq!(cc.target_rate(), Rate::gbps(100));
        // Next deadline: the increase timer, 300 us after the cut (the flag is clear).
        assert_eq!(cc.next_timer(), Some(t0 + us(304) + NS));
        // rate_on_first_cnp sets both rates at the first CNP.
        let mut cc = mlx(Rate::gbps(100), &DcqcnConfig { rate_on_first_cnp: 0.5, ..cfg });
        cc.on_cnp(t0);
        assert_eq!((cc.rate(), cc.target_rate()), (Rate::gbps(50), Rate::gbps(50)));
    }

    #[test]
    fn mlx_cuts_once_per_decrease_interval_under_a_cnp_stream() {
        let mut cc = mlx(Rate::gbps(100), &hpcc_cfg(us(300), 5));
        let t0 = us(1);
        let mut rates = vec![];
        for k in 0..40u64 {
            // a CNP every 500 ns for 20 us
            cc.on_cnp(t0 + Time::from_ns(500 * k));
            rates.push(cc.rate().0);
        }
        rates.dedup();
        // checks at 4 us + 1 ns, 8 us + 1 ns, ..., 20 us + 1 ns after t0: 5 cuts by t0 + 19.5 us
        assert_eq!(rates.len(), 5, "{rates:?}");
        // alpha rose with the CNPs: every cut is deeper than a cut at alpha 1 - g would be
        assert!(rates.windows(2).all(|w| w[1] < w[0]));
    }

    #[test]
    fn mlx_recovers_to_one_below_line_rate_and_settles() {
        // DataRate's truncating halves stop Rc at Rt - 1 when Rt is even: the simulator never
        // brings a cut flow back to exactly line rate.
        let cfg = DcqcnConfig { rhai: Some(Rate::gbps(5)), ..hpcc_cfg(us(55), 1) };
        let mut cc = mlx(Rate::gbps(100), &cfg);
        cc.on_cnp(Time::ZERO);
        let mut n = 0;
        let mut last = Time::ZERO;
        while let Some(t) = cc.next_timer() {
            assert!(t > last);
            last = t;
            cc.on_timer(t);
            n += 1;
            assert!(n < 10_000, "did not settle");
        }
        assert_eq!(cc.target_rate(), Rate::gbps(100));
        assert_eq!(cc.rate().0, 100_000_000_000 - 1);
        assert!(cc.stage() > 1);
        // A later CNP raises the flags: one cut at the next check (50 ms + 4 us + 1 ns). Alpha
        // decayed to nothing over the quiet 50 ms (and stopped below the floor), and the alpha
        // event at 50 ms + 3 us, which sees the flag, makes it exactly g; the one at 4 us decays
        // it once before the check.
        let now = Time::from_ms(50) + us(2);
        cc.on_cnp(now);
        assert!(cc.alpha() < alpha_floor(G));
        assert_eq!(cc.next_timer(), Some(Time::from_ms(50) + us(4) + NS));
        cc.on_timer(Time::from_ms(50) + us(4) + NS);
        let a = (1.0 - G) * G;
        assert_eq!(cc.alpha(), a);
        assert_eq!(cc.rate().0, datarate::mul(100_000_000_000 - 1, 1.0 - a / 2.0));
    }

    #[test]
    fn mlx_alpha_floor_keeps_the_rates_exact() {
        for g in [1.0 / 256.0, 1.0 / 16.0, 0.3, 1.0] {
            let floor = alpha_floor(g);
            assert!(floor > 0.0);
            for a in [floor / 2.0, floor * 0.999, floor / 1e6, 0.0] {
                assert_eq!((1.0 - g) * a + g, g, "g {g}, a {a}");
                assert_eq!(1.0 - a / 2.0, 1.0);
            }
        }
        assert_eq!(alpha_floor(0.0), 0.0);
    }

    #[test]
    fn mlx_is_selected_by_the_model_and_keeps_the_paper_default() {
        use super::super::{AnyCc, CcConfig};
        let info = FlowInfo { line_rate: Rate::gbps(100), base_rtt: us(10), mtu: 1000 };
        let c: CcConfig = serde_json::from_str(r#"{"algorithm":"dcqcn","model":"mlx","rai":20000000}"#).unwrap();
        let CcConfig::Dcqcn(d) = &c else { panic!() };
        assert_eq!((d.model, d.rai, d.rhai, d.rate_on_first_cnp), (DcqcnModel::Mlx, Some(Rate::mbps(20)), None, 1.0));
        assert!(matches!(AnyCc::build(&c, &info), AnyCc::DcqcnMlx(_)));
        assert!(c.transport_needs().cnp);
        let c: CcConfig = serde_json::from_str(r#"{"algorithm":"dcqcn"}"#).unwrap();
        assert!(matches!(AnyCc::build(&c, &info), AnyCc::Dcqcn(_)));
        assert!(serde_json::from_str::<CcConfig>(r#"{"algorithm":"dcqcn","model":"Mlx"}"#).is_err());
        let bad = DcqcnConfig { model: DcqcnModel::Mlx, rate_decrease_interval: Time::ZERO, ..Default::default() };
        assert!(bad.validate().is_err());
        assert!(DcqcnConfig { rate_on_first_cnp: 0.0, ..Default::default() }.validate().is_err());
    }
}
