//! The core's default settings as JSON: the one reference for every default a scenario can leave
//! out. The Python front's schema writes its defaults out again (so that a run folder records
//! every value in human units), and its test suite checks each one against this
//! (`tests/test_defaults.py`), so a default changed on one side only fails a test instead of
//! silently changing results.

use crate::cc::CcConfig;
use crate::config::NetConfig;
use crate::fc::FcConfig;
use serde_json::json;

/// `{"net": NetConfig::default(), "flow_control": {scheme: ...}, "congestion_control":
/// {algorithm: ...}}`: the whole default network, then every flow-control scheme and every
/// congestion control with its default parameters as it would be selected (tag included), so that
/// the defaults of the schemes a default run does not select are published too; under
/// `"record"` the settings of the recorders that are off by default; and under `"faults"` the
/// faults table's (off, so absent from `net`). Field names are
/// the scenario's (see `config`), values in the core's units (bytes, bits/s, picoseconds).
pub fn defaults_json() -> String {
    let fc = FcConfig::all_defaults();
    let cc = CcConfig::all_defaults();
    // Keyed by the tag each one serialises with. One left out here fails tests/test_defaults.py,
    // which wants one for every scheme and algorithm the scenario schema offers.
    fn by_tag<T: serde::Serialize>(tag: &str, all: &[T]) -> serde_json::Map<String, serde_json::Value> {
        all.iter()
            .map(|c| {
                let v = json!(c);
                (v[tag].as_str().expect("tagged enum").to_string(), v)
            })
            .collect()
    }
    // the recorders that are off by default (absent from `net.record`), with the settings a
    // scenario that turns one on gets
    let record = json!({
        "qlen_monitor": crate::stats::record::QlenMonitorConfig::default(),
        "trace": crate::stats::record::TraceConfig::default(),
        "latency": crate::stats::latency::LatencyConfig::default(),
    });
    // faults are off by default and then absent from `net` (scenario hashes stay): their defaults
    // are published on their own
    let faults = crate::params::FaultsConfig::default();
    // the TCP transport is off by default (`transport.tcp` absent from `net`): its settings are
    // published on their own
    let tcp = crate::params::TcpConfig::default();
    // the registries: every scheme and algorithm with its defaults, units and counters, from which
    // the front takes its lists of allowed values and the tables it has no model of its own for
    let registry = json!({"flow_control": FcConfig::registry(), "congestion_control": CcConfig::registry()});
    json!({"registry": registry, "net": NetConfig::default(), "flow_control": by_tag("scheme", &fc), "congestion_control": by_tag("algorithm", &cc), "record": record, "faults": faults, "tcp": tcp})
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn defaults_use_the_scenario_names_and_read_back() {
        let v: Value = serde_json::from_str(&defaults_json()).unwrap();
        let net = &v["net"];
        assert_eq!(net["switch"]["size"], 12_000_000);
        assert_eq!(net["switch"]["count"], 8);
        assert_eq!(net["switch"]["headroom"], "auto");
        assert_eq!(net["switch"]["ecn"]["kmax"], 1_600_000);
        assert_eq!(net["transport"]["header"], 48);
        assert_eq!(net["transport"]["window"], "bdp");
        assert_eq!(net["flow_control"], json!({"scheme": "pfc"}));
        assert_eq!(net["congestion_control"], json!({"algorithm": "none"}));
        assert_eq!(net["duration"], Value::Null);
        assert!(net.get("faults").is_none(), "off: left out of the net, so scenario hashes stay");
        assert_eq!(v["faults"], json!({"loss_rate": 0.0, "link_loss": [], "link_events": []}));
        // recorders off by default are left out of `net.record` (scenario hashes stay), and
        // published on their own
        assert!(net["record"].get("qlen_monitor").is_none() && net["record"].get("trace").is_none());
        assert_eq!(v["record"]["qlen_monitor"]["interval"], 100_000);
        assert_eq!(v["record"]["qlen_monitor"]["end"], Value::Null);
        let ppfc = &v["flow_control"]["ppfc"];
        assert_eq!(
            (&ppfc["scheme"], &ppfc["kmax"], &ppfc["T"], &ppfc["R"], &ppfc["pause"]),
            (&json!("ppfc"), &Value::Null, &json!(100_000_000), &json!(0.8), &json!("predicted"))
        );
        assert_eq!(v["flow_control"]["capfc"]["warn"], Value::Null);
        assert_eq!(v["congestion_control"]["hpcc"]["int_header"]["max_hops"], 5);
        // What is published is what the core reads back.
        let back: NetConfig = serde_json::from_value(net.clone()).unwrap();
        assert_eq!(back, NetConfig::default());
        for (k, c) in v["congestion_control"].as_object().unwrap() {
            assert_eq!(
                &serde_json::to_value(serde_json::from_value::<CcConfig>(c.clone()).unwrap()).unwrap(),
                c,
                "{k}"
            );
        }
        for (k, c) in v["flow_control"].as_object().unwrap() {
            assert_eq!(
                &serde_json::to_value(serde_json::from_value::<FcConfig>(c.clone()).unwrap()).unwrap(),
                c,
                "{k}"
            );
        }
    }

    #[test]
    fn byte_counts_are_plain_numbers_beside_the_keywords() {
        use crate::params::{Headroom, WindowConfig};
        assert_eq!(serde_json::from_str::<Headroom>("290000").unwrap(), Headroom::Bytes(290_000));
        assert_eq!(serde_json::from_str::<Headroom>(r#""auto""#).unwrap(), Headroom::Auto);
        assert_eq!(serde_json::from_str::<Headroom>(r#""floodgate""#).unwrap(), Headroom::Floodgate);
        assert_eq!(serde_json::from_str::<WindowConfig>("64000").unwrap(), WindowConfig::Bytes(64_000));
        assert_eq!(serde_json::from_str::<WindowConfig>(r#""off""#).unwrap(), WindowConfig::Off);
        assert!(serde_json::from_str::<WindowConfig>(r#""bytes""#).is_err());
        assert_eq!(serde_json::to_string(&WindowConfig::Bytes(7)).unwrap(), "7");
    }
}
