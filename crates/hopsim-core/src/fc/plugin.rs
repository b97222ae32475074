//! Flow-control schemes from outside the crate, selectable by name like the built-in ones.
//!
//! A crate that depends on `hopsim-core` declares its scheme as a built-in one does
//! ([`Declared`]: name, table, defaults, units, counters) and implements [`External`] (its switch
//! half as a boxed module, its NIC half if it has one); then [`register`] makes its name valid in
//! a scenario's `flow_control.scheme`, its table readable (strictly), its defaults published with
//! the registry (`FcConfig::registry`), so that the Python front builds its table's model and
//! `hopsim run` selects it. `crates/hopsim-py`'s `plugins.rs` calls the `register` of every
//! plugin crate its features include (`examples/buffer-pause-plugin` is one, built and run by the
//! test suite).
//!
//! Why a process-wide list, against the "no globals" rule: it holds code, not simulation state,
//! is written once when the extension loads (before any scenario is read) and only read after;
//! two runs never see different lists. Why dynamic dispatch here: a plugin's module is compiled
//! after the core, so the static enum cannot name it; it runs in `AnyFc::Custom`, whose cold,
//! out-of-line arm costs the built-in schemes nothing.

use super::nic::{AnyNic, NicFc};
use super::registry::{BuildAt, Declared, Scheme};
use super::{AnyFc, FlowControl};
use crate::registry::Entry;
use std::sync::{Arc, RwLock};

/// A flow-control scheme from outside the crate: what [`Scheme`] asks of a built-in one, with
/// the modules boxed.
pub trait External: Declared + Send + Sync + 'static {
    /// Whether it pauses senders before the buffer overflows (the front's default for
    /// `buffer.lossless`).
    fn pauses(&self) -> bool;
    /// Its switch half.
    fn module(&self, at: &BuildAt) -> Box<dyn FlowControl + Send>;
    /// Its NIC half; `None`: the standard NIC.
    fn nic(&self) -> Option<Box<dyn NicFc + Send>> {
        None
    }
    /// Whether its switch half reads the upstreamQ tag: then its NIC half must write it
    /// (`Scheme::reads_upstream_q`; the run refuses the scheme otherwise).
    fn reads_upstream_q(&self) -> bool {
        false
    }
    /// Checks its parameters against the run; errors name the field.
    fn validate(&self, _net: &super::registry::CheckAt) -> Result<(), String> {
        Ok(())
    }
    /// Bytes of state per switch port, for the memory estimate.
    fn bytes_per_port(&self, _nqueues: u64, _upq: u64) -> u64 {
        0
    }
}

/// A registered scheme with its type erased: what the registry keeps.
trait Erased: Send + Sync {
    fn name(&self) -> &'static str;
    fn entry(&self) -> Entry;
    /// Its configuration read from a table (fields beside the tag), strictly.
    fn read(&self, table: serde_json::Value) -> Result<Box<dyn Configured>, String>;
}

/// One plugin scheme's configuration, read.
trait Configured: Send + Sync {
    fn pauses(&self) -> bool;
    fn module(&self, at: &BuildAt) -> Box<dyn FlowControl + Send>;
    fn nic(&self) -> Option<Box<dyn NicFc + Send>>;
    fn reads_upstream_q(&self) -> bool;
    fn validate(&self, net: &super::registry::CheckAt) -> Result<(), String>;
    fn bytes_per_port(&self, nqueues: u64, upq: u64) -> u64;
}

impl<E: External> Configured for E {
    fn pauses(&self) -> bool {
        External::pauses(self)
    }
    fn module(&self, at: &BuildAt) -> Box<dyn FlowControl + Send> {
        External::module(self, at)
    }
    fn nic(&self) -> Option<Box<dyn NicFc + Send>> {
        External::nic(self)
    }
    fn reads_upstream_q(&self) -> bool {
        External::reads_upstream_q(self)
    }
    fn validate(&self, net: &super::registry::CheckAt) -> Result<(), String> {
        External::validate(self, net)
    }
    fn bytes_per_port(&self, nqueues: u64, upq: u64) -> u64 {
        External::bytes_per_port(self, nqueues, upq)
    }
}

struct Registered<E>(std::marker::PhantomData<fn() -> E>);

impl<E: External> Erased for Registered<E> {
    fn name(&self) -> &'static str {
        E::NAME
    }
    fn entry(&self) -> Entry {
        Entry::of::<E>()
    }
    fn read(&self, table: serde_json::Value) -> Result<Box<dyn Configured>, String> {
        let c: E = crate::registry::read_table(table, "flow_control", E::NAME)?;
        Ok(Box::new(c))
    }
}

static PLUGINS: RwLock<Vec<Arc<dyn Erased>>> = RwLock::new(Vec::new());

/// Makes scheme `E` selectable by its name. A name a built-in scheme or an earlier plugin has
/// is refused (the first one stays).
pub fn register<E: External>() -> Result<(), String> {
    if super::FcConfig::NAMES.contains(&E::NAME) {
        return Err(format!("flow-control plugin `{}`: a built-in scheme has that name", E::NAME));
    }
    let mut list = PLUGINS.write().expect("plugin list");
    if list.iter().any(|p| p.name() == E::NAME) {
        return Err(format!("flow-control plugin `{}`: registered twice", E::NAME));
    }
    list.push(Arc::new(Registered::<E>(std::marker::PhantomData)));
    Ok(())
}

/// The registered plugins' entries, in registration order.
pub(crate) fn entries() -> Vec<Entry> {
    PLUGINS.read().expect("plugin list").iter().map(|p| p.entry()).collect()
}

/// The registered plugins at their default parameters.
pub(crate) fn all_defaults() -> Vec<PluginTable> {
    // the list copied out first: `lookup` takes the lock again, and a second read lock taken
    // while a `register` on another thread waits to write blocks behind it for ever
    let list: Vec<Arc<dyn Erased>> = PLUGINS.read().expect("plugin list").clone();
    list.iter()
        .map(|p| {
            let e = p.entry();
            lookup(e.name, e.defaults).expect("registered").expect("defaults read back")
        })
        .collect()
}

/// The names of the registered plugins.
pub fn names() -> Vec<&'static str> {
    PLUGINS.read().expect("plugin list").iter().map(|p| p.name()).collect()
}

/// The table of plugin scheme `name`, read strictly; `None` if no plugin has that name.
pub(crate) fn lookup(name: &str, table: serde_json::Value) -> Option<Result<PluginTable, String>> {
    let plugin = PLUGINS.read().expect("plugin list").iter().find(|p| p.name() == name).cloned()?;
    Some(plugin.read(table.clone()).map(|cfg| PluginTable { name: plugin.name(), table, cfg: Arc::from(cfg) }))
}

/// A plugin scheme as a scenario selected it: its name, its table as given (what is written
/// back) and its configuration as read.
#[derive(Clone)]
pub struct PluginTable {
    pub name: &'static str,
    pub table: serde_json::Value,
    cfg: Arc<dyn Configured>,
}

impl std::fmt::Debug for PluginTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PluginTable({}, {})", self.name, self.table)
    }
}

impl PartialEq for PluginTable {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.table == other.table
    }
}

impl PluginTable {
    pub fn name(&self) -> &'static str {
        self.name
    }
}

impl serde::Serialize for PluginTable {
    /// The table's fields (the tag goes in front, `crate::registry::SchemeTagged`).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.table.serialize(s)
    }
}

impl Scheme for PluginTable {
    fn pauses(&self) -> bool {
        self.cfg.pauses()
    }
    fn validate(&self, net: &super::registry::CheckAt) -> Result<(), String> {
        self.cfg.validate(net)
    }
    fn build(&self, at: &BuildAt) -> AnyFc {
        AnyFc::Custom(self.cfg.module(at))
    }
    fn nic(&self) -> AnyNic {
        self.cfg.nic().map_or_else(AnyNic::default, AnyNic::Custom)
    }
    fn reads_upstream_q(&self) -> bool {
        self.cfg.reads_upstream_q()
    }
    fn bytes_per_port(&self, nqueues: u64, upq: u64) -> u64 {
        self.cfg.bytes_per_port(nqueues, upq)
    }
}
