// TEMPORARY compile placeholder, replaced by the real module before commit.
use serde::{Deserialize, Serialize};
use super::{FlowControl, pfc::{Pfc, PfcConfig}};
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct CapfcConfig {}
pub struct Capfc(Pfc);
impl Capfc { pub fn new(_c: CapfcConfig, p: PfcConfig, np: usize, npr: usize) -> Capfc { Capfc(Pfc::new(p, np, npr)) } }
impl FlowControl for Capfc {}
