"""Writes the FlowSail paper's §VI-B fabric as an HPCC-simulator topology file (hopsim's
`topology.kind = "hpcc"` reads it and infers the tiers: ToR 0, spine 1, core 2).

The paper: "a 3-layer fat-tree topology, composed of 64 ToR switches, 64 Spine switches, 64 Core
switches, and 1024 servers, with an over-subscription ratio of 2:1. Each link is 100Gbps and has
a propagation delay of 1us." hopsim's `fat_tree` builder cannot give it (a k = 16 fat-tree has 128
ToRs), so this is the shape those counts imply: 8 pods of 8 ToRs and 8 spines, every ToR linked
to every spine of its pod (8 uplinks for 16 hosts: 2:1), spine j of every pod linked to the
cores j*8 .. j*8+7 (1:1 at the spines), each core reaching every pod once.

    python make_fabric.py 8 8 16 > fabric-1024.txt   # the paper's 1024 hosts
    python make_fabric.py 4 4 8 > fabric-128.txt     # the same shape at 128 hosts (quick runs)

Arguments: pods, ToRs (= spines) per pod, hosts per ToR. Hosts are numbered first, then ToRs,
spines and cores, pod by pod.
"""

import sys


def fabric(pods: int, tors: int, hosts: int, rate: str = "100Gbps", delay: str = "0.001ms") -> str:
    n_hosts = pods * tors * hosts
    tor0 = n_hosts
    spine0 = tor0 + pods * tors
    core0 = spine0 + pods * tors
    n = core0 + tors * tors
    links = []
    for p in range(pods):
        for t in range(tors):
            tor = tor0 + p * tors + t
            for h in range(hosts):
                links.append((p * tors * hosts + t * hosts + h, tor))
    for p in range(pods):
        for t in range(tors):
            for s in range(tors):
                links.append((tor0 + p * tors + t, spine0 + p * tors + s))
    for p in range(pods):
        for s in range(tors):
            for c in range(tors):
                links.append((spine0 + p * tors + s, core0 + s * tors + c))
    out = [f"{n} {n - n_hosts} {len(links)}", " ".join(str(i) for i in range(n_hosts, n))]
    out += [f"{a} {b} {rate} {delay} 0" for a, b in links]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    pods, tors, hosts = (int(x) for x in sys.argv[1:4])
    sys.stdout.write(fabric(pods, tors, hosts))
