"""IMB-MPI1's collectives under SimGrid's SMPI against hopsim, the same algorithm forced
on both sides, on the platform hopsim exports.

    .venv/bin/python bench/smpi_collectives.py --imb PATH/IMB-MPI1 [--ranks 4,16,64]

PATH/IMB-MPI1 is IMB-MPI1 built with smpicc from intel/mpi-benchmarks' src_c
(make TARGET=MPI1 CC=smpicc CFLAGS="-O1 -DSMPI_NO_OVERRIDE_MALLOC -DWITHOUT_GPU"; build it
outside the repository). The platform: 64 single-core nodes on a star, 10 us and
1 Gbit/s, exported with `hopsim platforms export` (its XML and --cfg flags: every send
eager, no host costs, no computation). IMB runs 5 repetitions per size (-iter 5, no
warm-up); hopsim simulates 5. Prints, per case and size, IMB's t_avg under SMPI and
hopsim's, and the difference in percent.

This is a benchmark: it measures and reports, it asserts nothing.
"""
from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

import hopsim
from hopsim.platforms import simgrid
from hopsim.calibration.parsers import imb
from hopsim.platforms import Platform

PLATFORM = Platform(name="cmp64", nodes=64, cores=1, latency_us=10.0, bandwidth_gbps=1.0)
# (collective, SMPI's algorithm name, hopsim's = Open MPI's) with SMPI's MPICH- or
# Open-MPI-derived implementation of the same algorithm.
CASES = [
    ("alltoall", "pair", "pairwise"),
    ("alltoall", "bruck", "modified_bruck"),
    ("alltoall", "basic_linear", "linear"),
    ("allreduce", "rdb", "recursive_doubling"),
    ("allreduce", "lr", "ring"),
    ("allreduce", "rab_rdb", "rabenseifner"),
    ("allgather", "ring", "ring"),
    ("allgather", "rdb", "recursive_doubling"),
    ("allgather", "bruck", "bruck"),
    ("bcast", "binomial_tree", "binomial"),
    ("bcast", "flattree", "basic_linear"),
    ("reduce", "binomial", "binomial"),  # MPICH's binomial: the same tree (SMPI's
                                         # ompi_binomial dies with SIGFPE under IMB)
    ("reduce", "ompi_basic_linear", "linear"),
    ("barrier", "ompi_bruck", "bruck"),
    ("barrier", "ompi_recursivedoubling", "recursive_doubling"),
    ("barrier", "ompi_tree", "tree"),
]
SIZES = (1024, 65536)  # the rows printed (0 B differs by design: Open MPI returns at once)
REPS = 5


def smpi_rows(binary: str, kind: str, algorithm: str, ranks: int) -> dict:
    spec = PLATFORM.to_engine_dict()
    with tempfile.TemporaryDirectory(prefix="hopsim-smpi-coll-") as tmp:
        tmp = Path(tmp)
        (tmp / "p.xml").write_text(simgrid.platform_xml(spec))
        (tmp / "hosts").write_text(simgrid.hostfile(spec, ranks, 1))
        name = {"alltoall": "Alltoall", "allreduce": "Allreduce", "allgather": "Allgather",
                "bcast": "Bcast", "reduce": "Reduce", "barrier": "Barrier"}[kind]
        cmd = ["smpirun", "-platform", str(tmp / "p.xml"), "-hostfile", str(tmp / "hosts"),
               "-np", str(ranks), *simgrid.cfg_flags(spec), f"--cfg=smpi/{kind}:{algorithm}",
               "--cfg=smpi/display-timing:no", "--log=root.thresh:warning", binary, name,
               "-npmin", str(ranks), "-msglog", "0:16", "-iter", str(REPS), "-time", "1000",
               "-warm_up", "0"]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    ms = imb.parse(out.splitlines(), f"smpi {kind} {algorithm}")
    return {m.size: m.value for m in ms if m.statistic == "t_avg_us" and m.ranks == ranks}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--imb", required=True, help="IMB-MPI1 built with smpicc")
    ap.add_argument("--ranks", default="4,16,64", help="rank counts (default 4,16,64)")
    ap.add_argument("--only", metavar="COLLECTIVE", help="only this collective (default: all)")
    args = ap.parse_args()
    print(f"{'collective':<10} {'algorithm':<20} {'ranks':>5} {'bytes':>6} {'SMPI us':>10} "
          f"{'hopsim us':>10} {'diff %':>7}")
    for kind, smpi_alg, alg in CASES:
        if args.only and kind != args.only:
            continue
        for n in map(int, args.ranks.split(",")):
            measured = smpi_rows(args.imb, kind, smpi_alg, n)
            sizes = [0] if kind == "barrier" else list(SIZES)
            params = {} if kind == "barrier" else {"sizes": sizes}
            r = hopsim.simulate(PLATFORM, kind, ranks=n, algorithm=alg, repetitions=REPS, **params)
            for row in r.results["rows"]:
                s, sim = row["bytes"], row["t_avg_us"]
                m = measured[s]
                print(f"{kind:<10} {alg:<20} {n:>5} {s:>6} {m:>10.2f} {sim:>10.2f} "
                      f"{100 * (sim - m) / m:>+7.1f}", flush=True)


if __name__ == "__main__":
    main()
