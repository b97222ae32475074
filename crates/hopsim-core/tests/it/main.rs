//! Scenario tests: whole simulations checked against closed-form results and the papers'
//! defining behaviours. One test binary, one module per concern.

mod common;
mod lone_flow;
mod mdl;
mod incast_pfc;
mod dcqcn_fair;
mod ppfc;
mod conservation;
mod dctcp;
mod timely;
mod hpcc;
mod hpcc_compat;
mod pulser;
mod ictcp;
mod substrate;
mod bfc;
mod bfc_variants;
mod flowsail;
mod watchdog;
mod floodgate;
mod record;
mod spill;
mod footprint;
mod faults;
mod fuzz;
mod latency;
mod rate_cap;
mod nic_sched;
mod tcp;
mod ideal;
mod route_memo;
mod dc_mix;
mod multi_nic;
mod bench_cli;
mod flow_state;
mod lazy_flows;
