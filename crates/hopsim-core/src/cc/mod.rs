//! End-host congestion control, one instance per flow at its sender.
//!
//! The shape follows smoltcp's `Controller`: every hook has a no-op default and receives `now`
//! from the caller; no algorithm reads a clock or touches the simulator. The host asks
//! [`CongestionControl::rate`] for the pacing rate and [`CongestionControl::window`] for the cap
//! on bytes in flight. An algorithm that needs timers (DCQCN's rate-increase and alpha timers)
//! reports its next deadline in `next_timer`; the host keeps one pending timer per flow and calls
//! `on_timer` when it is due.
//!
//! Two transport modes share the host (`net::host`):
//! - **rate-based** (RoCE: none, DCQCN, TIMELY, rate-based DCTCP): `window()` is `None`, the flow is paced at `rate()`
//!   and the host's in-flight cap (`transport.window`, one BDP by default) bounds it;
//! - **window-based** (DCTCP, Pulser, ICTCP, and HPCC, which has both): `window()` is the
//!   congestion window in payload bytes and ACKs clock the data out; TCP-style growth and loss
//!   reactions live in `window` (see there). The host's cap still applies on top, so the RDMA
//!   papers' "1 BDP in flight" variant is the default and `transport.window = "off"` gives plain
//!   TCP windows.
//!
//! Switch-side halves live in `aqm` (ECN marking, Pulser's EIN, HPCC's INT); ICTCP's receiver half
//! is driven by the host on data arrival (`ictcp::Ictcp::on_receive`).

pub mod datarate;
pub mod dcqcn_mlx;
pub mod registry;
pub mod window;

pub use registry::Algorithm;
use crate::packet::int::IntHop;
use crate::time::{Rate, Time};

/// What the sender learns from one ACK (or NACK).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckInfo<'a> {
    /// Cumulative: every byte below `ack_seq` has been received.
    pub ack_seq: u64,
    /// Bytes this ACK newly acknowledged.
    pub newly_acked: u64,
    /// The data packet it acknowledges carried an ECN mark (ECN-Echo).
    pub ecn_echo: bool,
    /// The data packet it acknowledges carried Pulser's Explicit Incast Notification.
    pub ein_echo: bool,
    /// Round-trip time sample: now minus the send time of the acknowledged packet.
    pub rtt: Time,
    /// The sender's next new byte when the ACK arrived (before any go-back-N rewind): window
    /// boundaries ("once per window of data") are measured against it.
    pub snd_nxt: u64,
    /// The receive window the receiver advertised (ICTCP), bytes.
    pub adv_window: Option<u64>,
    /// HPCC's INT records echoed by the receiver, one per switch on the path.
    pub int: &'a [IntHop],
}

impl<'a> AckInfo<'a> {
    /// The same ACK with `snd_nxt` rewound to `ack_seq`: what the HPCC simulator's congestion
    /// controls see on a NACK, because `ReceiveAck` runs `RecoverQueue` (`snd_nxt = snd_una`)
    /// before it calls them. The algorithms that follow `rdma-hw.cc` use it in `on_nack`.
    pub fn after_go_back_n(&self) -> AckInfo<'a> {
        AckInfo { snd_nxt: self.ack_seq, ..*self }
    }
}

/// Static facts about the flow's path, given once at the flow's start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowInfo {
    /// Rate of the sender's NIC.
    pub line_rate: Rate,
    /// Unloaded round-trip time over the flow's path (one MTU out, one ACK back).
    pub base_rtt: Time,
    /// Payload bytes per packet.
    pub mtu: u32,
}

/// A data packet as the receiving host's congestion control sees it.
#[derive(Clone, Copy, Debug)]
pub struct RxPacket {
    pub now: Time,
    /// Bytes on the wire and payload bytes.
    pub wire: u32,
    pub payload: u32,
    /// It completes the flow.
    pub finishing: bool,
    /// Line rate of the receiving host's interface.
    pub capacity: Rate,
    /// An RTT sample the receiver took from this packet's timestamp echo (`net::timestamps`),
    /// in runs whose receivers measure one (ICTCP).
    pub rtt: Option<Time>,
}

/// Receiver-side state shared by every flow into one host's interface (ICTCP's interface-level
/// measurement of incoming throughput, §4). One per host; untouched by sender-side algorithms.
#[derive(Default)]
pub struct RxIface {
    pub ictcp: ictcp::IctcpHost,
}

pub trait CongestionControl {
    /// The flow starts sending.
    fn on_start(&mut self, _now: Time) {}
    /// A data packet of `bytes` wire bytes was handed to the NIC.
    fn on_send(&mut self, _now: Time, _bytes: u32) {}
    fn on_ack(&mut self, _now: Time, _ack: &AckInfo) {}
    /// A go-back-N NACK arrived (loss detected by the receiver); `ack` describes it.
    fn on_nack(&mut self, _now: Time, _ack: &AckInfo) {}
    /// A congestion notification packet (DCQCN's CNP) arrived.
    fn on_cnp(&mut self, _now: Time) {}
    /// The retransmission timer expired.
    fn on_timeout(&mut self, _now: Time) {}
    /// The deadline reported by `next_timer` has come.
    fn on_timer(&mut self, _now: Time) {}
    fn next_timer(&self) -> Option<Time> {
        None
    }
    /// Cap on bytes in flight from congestion control (the host also applies its own cap).
    fn window(&self) -> Option<u64> {
        None
    }
    /// Pacing rate.
    fn rate(&self) -> Rate;
    /// Counters worth a line in the run summary (summed over flows), by name.
    fn counters(&self, _out: &mut Vec<(&'static str, u64)>) {}
    /// Receiver side: a data packet of this flow arrived; the receive window to advertise in its
    /// ACK, if the algorithm controls one (ICTCP).
    fn on_data_received(&mut self, _iface: &mut RxIface, _rx: &RxPacket) -> Option<u64> {
        None
    }
}

/// What a run's congestion control asks of the hosts' transport.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransportNeeds {
    /// Extra header bytes on every data packet (HPCC's INT header).
    pub data_header: u32,
    /// Extra bytes on every ACK and NACK (HPCC's echoed INT header).
    pub ack_header: u32,
    /// Receivers send DCQCN's CNPs for ECN-marked packets.
    pub cnp: bool,
    /// Data packets collect INT records.
    pub int: bool,
}

// The algorithms, each declared in its own file (`Algorithm`); this list is the only place that
// names them all. A new congestion control is one file and one line here.
crate::registry::registry! {
    config CcConfig, any AnyCc, tag algorithm, table "congestion_control", tagged AlgorithmTagged, default None;
    unit {
        none::None(NoAlgorithm) => [None(none::LineRate)],
        ideal::Ideal(IdealAlgorithm) => [],
    }
    configured {
        dcqcn::Dcqcn(DcqcnConfig) => [Dcqcn(dcqcn::Dcqcn), DcqcnMlx(dcqcn_mlx::DcqcnMlx)],
        dctcp::Dctcp(DctcpConfig) => [Dctcp(Box<dctcp::Dctcp>)],
        dctcp_rate::DctcpRate(DctcpRateConfig) => [DctcpRate(dctcp_rate::DctcpRate)],
        timely::Timely(TimelyConfig) => [Timely(timely::Timely)],
        hpcc::Hpcc(HpccConfig) => [Hpcc(Box<hpcc::Hpcc>)],
        pulser::Pulser(PulserConfig) => [Pulser(Box<pulser::Pulser>)],
        ictcp::Ictcp(IctcpConfig) => [Ictcp(Box<ictcp::Ictcp>)],
        aimd::Aimd(AimdConfig) => [Aimd(aimd::Aimd)],
    }
}

pub use none::LineRate;

impl CcConfig {
    /// The header sizes and receiver duties this algorithm needs.
    pub fn transport_needs(&self) -> TransportNeeds {
        with_entry!(self, |c| Algorithm::transport_needs(c))
    }

    /// Checks the parameters' ranges (the Python front checks them too).
    pub fn validate(&self) -> Result<(), String> {
        with_entry!(self, |c| Algorithm::validate(c))
    }

    /// The AQM the algorithm is designed with: EIN for Pulser (§III-A), INT for HPCC (§3.2).
    pub fn aqm(&self) -> crate::aqm::AqmConfig {
        with_entry!(self, |c| Algorithm::aqm(c))
    }

    /// Whether it runs over the TCP transport.
    pub fn runs_over_tcp(&self) -> bool {
        with_entry!(self, |c| Algorithm::runs_over_tcp(c))
    }

    /// The names of the algorithms that run over TCP (for error messages).
    pub fn tcp_names() -> Vec<&'static str> {
        Self::all_defaults().iter().filter(|c| c.runs_over_tcp()).map(|c| c.name()).collect()
    }

    /// Whether its receivers advertise windows (ICTCP).
    pub fn receiver_window(&self) -> bool {
        with_entry!(self, |c| Algorithm::receiver_window(c))
    }

    /// Whether one oracle paces every sender (Pulser's Ideal).
    pub fn oracle(&self) -> bool {
        with_entry!(self, |c| Algorithm::oracle(c))
    }
}

impl CongestionControl for AnyCc {
    fn on_start(&mut self, now: Time) {
        dispatch!(self, on_start(now))
    }
    #[inline]
    fn on_send(&mut self, now: Time, bytes: u32) {
        dispatch!(self, on_send(now, bytes))
    }
    #[inline]
    fn on_ack(&mut self, now: Time, ack: &AckInfo) {
        dispatch!(self, on_ack(now, ack))
    }
    fn on_nack(&mut self, now: Time, ack: &AckInfo) {
        dispatch!(self, on_nack(now, ack))
    }
    fn on_cnp(&mut self, now: Time) {
        dispatch!(self, on_cnp(now))
    }
    fn on_timeout(&mut self, now: Time) {
        dispatch!(self, on_timeout(now))
    }
    fn on_timer(&mut self, now: Time) {
        dispatch!(self, on_timer(now))
    }
    #[inline]
    fn next_timer(&self) -> Option<Time> {
        dispatch!(self, next_timer())
    }
    #[inline]
    fn window(&self) -> Option<u64> {
        dispatch!(self, window())
    }
    #[inline]
    fn rate(&self) -> Rate {
        dispatch!(self, rate())
    }
    fn counters(&self, out: &mut Vec<(&'static str, u64)>) {
        dispatch!(self, counters(out))
    }
    #[inline]
    fn on_data_received(&mut self, iface: &mut RxIface, rx: &RxPacket) -> Option<u64> {
        dispatch!(self, on_data_received(iface, rx))
    }
}

impl AnyCc {
    /// The sender's state of one flow.
    pub fn build(cfg: &CcConfig, info: &FlowInfo) -> AnyCc {
        with_entry!(cfg, |c| Algorithm::build(c, info))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> FlowInfo {
        FlowInfo { line_rate: Rate::gbps(100), base_rtt: Time::from_us(8), mtu: 1000 }
    }

    #[test]
    fn config_json_is_tagged_by_algorithm_with_defaults() {
        for (json, name) in [
            (r#"{"algorithm":"dctcp"}"#, "dctcp"),
            (r#"{"algorithm":"dctcp_rate","g":0.0625}"#, "dctcp_rate"),
            (r#"{"algorithm":"dcqcn","model":"mlx"}"#, "dcqcn"),
            (r#"{"algorithm":"timely","beta":0.5}"#, "timely"),
            (r#"{"algorithm":"hpcc","eta":0.9,"int_header":{"max_hops":6}}"#, "hpcc"),
            (r#"{"algorithm":"pulser","cwnd_safe":2,"ein":{"n":10}}"#, "pulser"),
            (r#"{"algorithm":"ictcp","slow_start":false}"#, "ictcp"),
        ] {
            let c: CcConfig = serde_json::from_str(json).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(c.validate().is_ok(), "{name}");
            let back = serde_json::to_string(&c).unwrap();
            assert!(back.contains(&format!(r#""algorithm":"{name}""#)));
            assert_eq!(serde_json::from_str::<CcConfig>(&back).unwrap(), c);
        }
        assert!(serde_json::from_str::<CcConfig>(r#"{"algorithm":"dctcp","bogus":1}"#).is_err());
        let CcConfig::Pulser(p) = serde_json::from_str(r#"{"algorithm":"pulser","ein":{"n":10}}"#).unwrap() else { panic!() };
        assert_eq!((p.ein.n, p.ein.threshold, p.cwnd_safe), (10, 0.25, 4));
    }

    #[test]
    fn window_and_rate_modes() {
        let w = |c: CcConfig| AnyCc::build(&c, &info()).window();
        assert_eq!(w(CcConfig::None), None);
        assert_eq!(w(CcConfig::Dcqcn(Default::default())), None);
        assert_eq!(w(CcConfig::Dcqcn(dcqcn::DcqcnConfig { model: dcqcn::DcqcnModel::Mlx, ..Default::default() })), None);
        assert_eq!(w(CcConfig::DctcpRate(Default::default())), None);
        assert_eq!(w(CcConfig::Timely(Default::default())), None);
        assert_eq!(w(CcConfig::Dctcp(Default::default())), Some(100_000));
        assert_eq!(w(CcConfig::Pulser(Default::default())), Some(100_000));
        assert_eq!(w(CcConfig::Hpcc(Default::default())), Some(100_000));
        assert_eq!(w(CcConfig::Ictcp(Default::default())), Some(2_000));
        // HPCC alone adds header bytes; RoCE modes alone send CNPs
        assert_eq!(CcConfig::Hpcc(Default::default()).transport_needs().data_header, 42);
        assert!(CcConfig::Dcqcn(Default::default()).transport_needs().cnp);
        assert!(!CcConfig::Dctcp(Default::default()).transport_needs().cnp);
        // AnyCc stays as small as DCQCN's state
        assert!(std::mem::size_of::<AnyCc>() <= std::mem::size_of::<dcqcn::Dcqcn>().max(std::mem::size_of::<timely::Timely>()) + 8);
    }
}
