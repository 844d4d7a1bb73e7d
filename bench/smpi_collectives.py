"""IMB-MPI1's collectives under SimGrid's SMPI against hopsim, the same algorithm forced
on both sides, on the platform hopsim exports.

    .venv/bin/python bench/smpi_collectives.py --imb PATH/IMB-MPI1 [--ranks 4,16,64]
    .venv/bin/python bench/smpi_collectives.py --imb PATH/IMB-MPI1 --selector [--ranks 4,8,16,32,64]

--selector leaves the choice to each side: `smpi/coll-selector:ompi` (SimGrid's copy of
Open MPI's fixed rules) under SMPI, Open MPI 4.1.4's rules in hopsim; it prints the
algorithm hopsim ran and the implementation SimGrid's selector maps that number to.

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
# SimGrid 3.32's smpi_openmpi_selector.cpp: the function each Open MPI algorithm number
# runs under `smpi/coll-selector:ompi` (its thresholds for a commutative op are Open MPI
# 4.1's; the implementations are not always Open MPI's, nor unsegmented).
SMPI_RUNS = {
    "alltoall": {"linear": "basic_linear", "pairwise": "pair", "modified_bruck": "bruck",
                 "linear_sync": "basic_linear", "two_proc": "basic_linear"},
    "allreduce": {"basic_linear": "redbcast", "nonoverlapping": "redbcast", "recursive_doubling": "rdb",
                  "ring": "lr", "segmented_ring": "ompi_ring_segmented (1 MiB segments)",
                  "rabenseifner": "rab_rdb"},
    "allgather": {"bruck": "bruck", "recursive_doubling": "rdb", "ring": "ring",
                  "neighbor": "ompi_neighborexchange", "two_proc": "pair"},
    "bcast": {"basic_linear": "NTSL (8 KiB segments)", "chain": "ompi_pipeline (segmented)",
              "pipeline": "ompi_pipeline (segmented)", "split_binary_tree": "ompi_split_bintree (segmented)",
              "binary_tree": "NTSB (8 KiB segments)", "binomial": "binomial_tree",
              "knomial": "mvapich2_knomial_intra_node", "scatter_allgather": "scatter_rdb_allgather"},
    "reduce": {"linear": "ompi_basic_linear", "chain": "ompi_chain (64 KiB segments, fanout n/2)",
               "pipeline": "ompi_pipeline (segmented)", "binary": "ompi_binary (32 KiB segments)",
               "binomial": "ompi_binomial", "in-order_binary": "ompi_in_order_binary",
               "rabenseifner": "ompi_basic_linear"},
    "barrier": {"linear": "ompi_basic_linear", "recursive_doubling": "ompi_recursivedoubling",
                "bruck": "ompi_bruck", "two_proc": "ompi_two_procs", "tree": "ompi_tree"},
}
SELECTOR_SIZES = (4, 1024, 65536, 1048576)
# IMB allocates every rank's buffers in SMPI's one process: n x n x 1 MiB is too much for
# Alltoall and Allgather at 64 ranks, which stop at 64 KiB.
SELECTOR_LARGEST = {"alltoall": 65536, "allgather": 65536}
SIZES = (1024, 65536)  # the rows printed (0 B differs by design: Open MPI returns at once)
REPS = 5


def smpi_rows(binary: str, kind: str, algorithm: str | None, ranks: int, sizes=None, barrier=None) -> dict:
    """IMB's t_avg per size under SMPI (sizes: IMB's -msglen list, else 0 to 64 KiB);
    algorithm None: the ompi selector decides."""
    spec = PLATFORM.to_engine_dict()
    with tempfile.TemporaryDirectory(prefix="hopsim-smpi-coll-") as tmp:
        tmp = Path(tmp)
        (tmp / "p.xml").write_text(simgrid.platform_xml(spec))
        (tmp / "hosts").write_text(simgrid.hostfile(list(range(ranks))))  # one rank per node
        (tmp / "lengths").write_text("".join(f"{s}\n" for s in sizes or ()))
        lengths = ["-msglen", str(tmp / "lengths")] if sizes else ["-msglog", "0:16"]
        name = {"alltoall": "Alltoall", "allreduce": "Allreduce", "allgather": "Allgather",
                "bcast": "Bcast", "reduce": "Reduce", "barrier": "Barrier"}[kind]
        cmd = ["smpirun", "-platform", str(tmp / "p.xml"), "-hostfile", str(tmp / "hosts"),
               "-np", str(ranks), *simgrid.cfg_flags(spec),
               "--cfg=smpi/coll-selector:ompi" if algorithm is None else f"--cfg=smpi/{kind}:{algorithm}",
               *([f"--cfg=smpi/barrier:{barrier}"] if barrier else []),
               "--cfg=smpi/display-timing:no", "--log=root.thresh:warning", binary, name,
               "-npmin", str(ranks), *lengths, "-iter", str(REPS), "-time", "1000"]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return t_avg_by_size(out)


def t_avg_by_size(text: str) -> dict:
    """IMB's t_avg per size from its block (read here, not by hopsim's IMB parser, which
    refuses the 0.00 t_min a root whose sends are all eager prints under SMPI)."""
    rows, cols = {}, None
    for line in text.splitlines():
        words = line.split()
        if words and words[0] in ("#bytes", "#repetitions"):
            cols = words
        elif cols and words and words[0].isdigit():
            row = dict(zip(cols, words))
            rows[int(row.get("#bytes", 0))] = float(row["t_avg[usec]"])
        else:
            cols = None
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--imb", required=True, help="IMB-MPI1 built with smpicc")
    ap.add_argument("--ranks", default="4,16,64", help="rank counts (default 4,16,64)")
    ap.add_argument("--only", metavar="COLLECTIVE", help="only this collective (default: all)")
    ap.add_argument("--selector", action="store_true",
                    help="each side's own decision (SMPI: smpi/coll-selector:ompi), not a forced algorithm")
    ap.add_argument("--barrier", metavar="SMPI_NAME",
                    help="with --selector: SMPI's barrier for IMB's barrier between repetitions (e.g. "
                         "ompi_basic_linear), the measured collective still chosen by the selector")
    args = ap.parse_args()
    if args.selector:
        selector(args)
        return
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


def selector(args) -> None:
    print(f"{'collective':<10} {'ranks':>5} {'bytes':>8} {'SMPI us':>11} {'hopsim us':>11} {'diff %':>7}  "
          "hopsim (Open MPI 4.1.4) / SMPI runs")
    for kind in SMPI_RUNS:
        if args.only and kind != args.only:
            continue
        for n in map(int, args.ranks.split(",")):
            sizes = [s for s in SELECTOR_SIZES if s <= SELECTOR_LARGEST.get(kind, 1 << 20)]
            if kind == "barrier":
                sizes = []
            try:
                barrier = args.barrier if kind != "barrier" else None
                measured = smpi_rows(args.imb, kind, None, n, sizes, barrier)
            except subprocess.CalledProcessError:  # one size at a time: which one SMPI fails
                measured = {}
                for s in sizes:
                    try:
                        measured.update(smpi_rows(args.imb, kind, None, n, [s], barrier))
                    except subprocess.CalledProcessError as e:
                        print(f"{kind:<10} {n:>5} {s:>8}  SMPI failed (status {e.returncode})", flush=True)
            params = {} if kind == "barrier" else {"sizes": [s for s in sizes if s in measured]}
            if not params.get("sizes", [0]):
                continue
            r = hopsim.simulate(PLATFORM, kind, ranks=n, repetitions=REPS, **params)
            for row in r.results["rows"]:
                s, sim, alg = row["bytes"], row["t_avg_us"], row["algorithm"]
                m = measured[s]
                print(f"{kind:<10} {n:>5} {s:>8} {m:>11.2f} {sim:>11.2f} {100 * (sim - m) / m:>+7.1f}  "
                      f"{alg} / {SMPI_RUNS[kind][alg]}", flush=True)


if __name__ == "__main__":
    main()
