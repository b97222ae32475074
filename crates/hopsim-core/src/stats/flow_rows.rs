//! Rows of the flows table: written one per flow, at the end of the run in flow-id order, or
//! as flows are freed in a run with a sink (`net::flow_store`), whose rows come in release
//! order, in chunks; `append` and `sort_by_flow` put such chunks back into the table an
//! unwatched run returns.

use super::FlowTable;

/// Apply `$m!(column)` to every column of the flows table.
macro_rules! each_column {
    ($m:ident) => {
        $m!(flow_id, src, dst, size_bytes, start_ps, finish_ps, fct_ps, ideal_fct_ps, ack_finish_ps, ack_fct_ps, hpcc_standalone_fct_ps, sport, dport, slowdown, incast, retx_bytes, dropped_bytes, delivered_bytes)
    };
}

impl FlowTable {
    pub fn len(&self) -> usize {
        self.flow_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flow_id.is_empty()
    }

    /// Add `other`'s rows after these (a sink's chunks, then the rows left at the end).
    pub fn append(&mut self, other: &FlowTable) {
        // every column is named in `each_column` (a column missing there fails to compile here)
        macro_rules! all {
            ($($c:ident),*) => { let FlowTable { $($c: _),* } = other; };
        }
        each_column!(all);
        macro_rules! ext {
            ($($c:ident),*) => { $( self.$c.extend_from_slice(&other.$c); )* };
        }
        each_column!(ext);
    }

    /// Put the rows in flow-id order (the order of a run without a sink).
    pub fn sort_by_flow(&mut self) {
        let mut order: Vec<usize> = (0..self.len()).collect();
        order.sort_by_key(|&i| self.flow_id[i]);
        macro_rules! perm {
            ($($c:ident),*) => { $( self.$c = order.iter().map(|&i| self.$c[i]).collect(); )* };
        }
        each_column!(perm);
    }
}
