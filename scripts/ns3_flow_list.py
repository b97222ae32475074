"""The flow list an ns-3 RDMA simulator run (Floodgate-NS3) drew, as an HPCC flow file, so that
hopsim can run the very flows of a reference run (`workload.kind = "hpcc_flows"`) and the two be
compared without the arrival draw between them.

    python scripts/ns3_flow_list.py SIMULATOR_STDOUT > flows.txt

Why from its standard output: Floodgate-NS3's third.cc draws its flows itself (FLOW_FROM_FILE 0)
and writes no flow file, but prints each flow as it installs it, `flow_id src dst size_bytes
start_seconds qp_id msg_seq`, in the order it hands out source ports (`portNumder[src]++`, from
10000 per source host). That order is kept and each flow's port written with it, as
`import-floodgate` writes them (`hopsim.interop.floodgate.files.source_ports`).
Output: the flow count, then `src dst 3 100 size start_seconds 0 sport` (priority 3 and dport 100,
as third.cc sets them; hopsim's seventh field, a priority group of 0, then the source port).
"""

from __future__ import annotations

import sys

# flow_id src dst size start qp_id msg_seq; the start is printed with 10 significant digits
from hopsim.interop.floodgate.files import drawn_flows, hpcc_flows, source_ports


def flows(stdout: str) -> list[tuple[int, int, int, str]]:
    """(src, dst, size, start as printed) of every installed flow, in installation order."""
    return drawn_flows(stdout)


def flow_file(fl: list[tuple[int, int, int, str]]) -> str:
    return hpcc_flows(fl, sports=source_ports(fl))


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        sys.stdout.write(flow_file(flows(f.read())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
