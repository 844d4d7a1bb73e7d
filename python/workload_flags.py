"""The workload flags shared by `hopsim simulate`, `hopsim live` and `hopsim smpi`: one
definition, so the three commands take the same names, units and defaults (they are also
hopsim.simulate's keywords and scenario keys)."""
from __future__ import annotations

import argparse

# Overlay families a run can route over; live runs (hopbench) and SMPI follow a fixed
# route table, so the load-balanced families (polytope, torus) are the simulator's only.
ALL_FAMILIES = "complete, debruijn, kautz, random, group, polytope, hypercube, torus"
TABLE_FAMILIES = "complete, debruijn, kautz, random, group"

# The keyword parameters these flags set (None: not given, the workload's default).
PARAMS = ("request_bytes", "reply_bytes", "exchanges", "destinations", "sizes", "iterations",
          "warmup", "repetitions", "window", "overlay", "degree", "algorithm")
WORKLOADS = ("pingpong", "roundtrip", "exchange", "bandwidth", "pingping", "sendrecv",
             "alltoall", "allreduce", "allgather", "bcast", "reduce", "barrier")


def int_list(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated byte counts like 0,1024,4096, got {text!r}") from None


def add(p, *, ranks_per_node_help: str, reception_default: str, families: str, seed_type=int,
        seed_help: str = "random seed of destinations and overlay, an integer 0..2^64-1 "
                         "(default 1)") -> None:
    """Add --workload, --ranks, --ranks-per-node and every workload parameter to parser p."""
    p.add_argument("--workload", required=True, choices=WORKLOADS,
                   help="required: pingpong (osu_latency, 2 ranks), roundtrip "
                        "(latency_checker / Ray's network test), exchange (IMB Exchange), "
                        "bandwidth (osu_bw, 2 ranks), pingping (IMB PingPing, 2 ranks), "
                        "sendrecv (IMB Sendrecv), or IMB's collectives alltoall, allreduce, "
                        "allgather, bcast, reduce, barrier; docs/workloads.md")
    p.add_argument("--ranks", required=True, type=int, metavar="N",
                   help="required: number of MPI ranks (pingpong, bandwidth, pingping: "
                        "exactly 2)")
    p.add_argument("--ranks-per-node", type=int, default=1, metavar="K", help=ranks_per_node_help)
    add_placement(p)
    p.add_argument("--request-bytes", type=int, metavar="B",
                   help="roundtrip: request size in bytes (default 4000)")
    p.add_argument("--reply-bytes", type=int, metavar="B",
                   help="roundtrip: reply size in bytes (default 4000; Ray's test uses 0)")
    p.add_argument("--exchanges", type=int, metavar="R",
                   help="roundtrip: round trips per rank (default 1000)")
    p.add_argument("--destinations", choices=("independent", "shared"),
                   help="roundtrip: per-rank random streams, or one sequence shared by all "
                        "ranks as latency_checker's seeding gives (default independent)")
    p.add_argument("--sizes", type=int_list, metavar="0,1024,...",
                   help="pingpong/exchange/bandwidth/pingping/sendrecv: message sizes in "
                        "bytes, comma-separated (default 0 and the powers of two up to 4 MiB, "
                        "as the tools sweep; bandwidth from 1 byte, as osu_bw)")
    p.add_argument("--iterations", type=int, metavar="N",
                   help="pingpong: timed round trips per size (default: osu_latency's, 10000 "
                        "up to 8192 bytes and 1000 above); bandwidth: timed windows per "
                        "size (default: osu_bw's, 100 up to 8192 bytes and 20 above)")
    p.add_argument("--warmup", type=int, metavar="N",
                   help="pingpong/bandwidth: untimed round trips (windows) before each size's "
                        "timed ones, osu_latency's and osu_bw's -x (default: theirs, 100 and "
                        "10 up to 8192 bytes, 10 and 2 above, with their own counts; none with "
                        "--iterations)")
    p.add_argument("--repetitions", type=int, metavar="N",
                   help="exchange/pingping/sendrecv and the collectives: repetitions per "
                        "size (default: IMB's, 1000 or 40 MiB / size, whichever is smaller; "
                        "collectives also at most 1 + 10 s / the first repetition's time)")
    p.add_argument("--algorithm", metavar="NAME",
                   help="collectives: run this Open MPI coll/tuned algorithm (e.g. alltoall "
                        "linear, pairwise, modified_bruck; allreduce recursive_doubling, ring, "
                        "rabenseifner; docs/workloads.md lists them; default: Open MPI 4.1's "
                        "fixed decision rules by message and communicator size)")
    p.add_argument("--window", type=int, metavar="W",
                   help="bandwidth: non-blocking sends per window before the 4-byte "
                        "acknowledgement (default 64 messages, osu_bw's -W)")
    p.add_argument("--reception", choices=("any-source", "round-robin"),
                   help=f"roundtrip: how a rank probes for messages (default: {reception_default})")
    p.add_argument("--overlay", metavar="FAMILY",
                   help=f"roundtrip: route over a software overlay: {families} (default: none, "
                        "every message goes straight to its destination)")
    p.add_argument("--degree", type=int, metavar="D",
                   help="with --overlay: the family's parameter (de Bruijn base b, Kautz d, "
                        "polytope alphabet size, torus radix). Default: RayPlatform's rule, "
                        "which for de Bruijn is Ray's default degree 2 (1024 ranks: "
                        "B(2,10)), for Kautz the largest d that fits, for polytope and torus "
                        "2; a degree that does not fit the ranks is an error "
                        "(docs/overlays.md)")
    p.add_argument("--seed", type=seed_type, default=1, metavar="S", help=seed_help)


PLACEMENT_HELP = ("where ranks run: block (Open MPI's default --map-by slot: --ranks-per-node "
                  "consecutive ranks per node), cyclic (--map-by node, SLURM's cyclic: rank r "
                  "on node r mod nodes), an Open MPI rankfile, or a hostfile read as "
                  "--map-by slot (FILE or block:FILE) or --map-by node (cyclic:FILE); "
                  "default block (docs/model.md, Placement)")


def add_placement(p, help_text: str = PLACEMENT_HELP) -> None:
    p.add_argument("--placement", metavar="block|cyclic|FILE", help=help_text)


def params(args) -> dict:
    """The workload parameters the user gave, as hopsim.simulate keywords."""
    out = {k: getattr(args, k) for k in PARAMS if getattr(args, k) is not None}
    if getattr(args, "placement", None) is not None:
        out["placement"] = args.placement
    return out
