// TEMPORARY compile placeholder, replaced by the real module before commit.
use serde::{Deserialize, Serialize};
use super::{FlowControl, pfc::{Pfc, PfcConfig}};
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct PpfcConfig {}
pub struct Ppfc(Pfc);
impl Ppfc { pub fn new(_c: PpfcConfig, p: PfcConfig, _n: u32, np: usize, npr: usize, _s: u64) -> Ppfc { Ppfc(Pfc::new(p, np, npr)) } }
impl FlowControl for Ppfc {}
