"""hopsim's speed and size, in one run (docs/performance.md).

    .venv/bin/python bench/speed.py [--quick] [--repeats K] [--json FILE]

Sections, each a table:

1. Against the bare S4U program (bench/bare_s4u.cpp), contended placements included:
   any-to-any roundtrip (4000-byte request and reply, 2 us and 32 Gbit/s NICs, the
   intra-node link the same, zero host costs, any-source) at 1024, 4096 and 16384 ranks
   and 1, 4 and 16 ranks per node. The same messages in hopsim's two transports
   (network.transport "queue" and "flow") and in the bare program, 32768 messages a row
   (--messages). "x bare" is messages per wall second over the bare program's, "cpu x"
   the same per CPU second (less disturbed by other jobs on a shared machine). "sim
   diff" compares simulated times: the flow transport and the bare program share the
   physics (fair sharing), the queue transport does not under contention. Flow and bare
   runs are stopped after --timeout seconds (a rate below messages / timeout, a ratio
   over it a lower bound, marked ">"); the flow transport is not run on shared NICs
   above --flow-contended-up-to ranks (SimGrid's solver: tens of minutes).
2. The queue transport alone at 1024 to 16384 ranks and 1 to 32 ranks per node, 32
   messages per rank: messages per wall second, and each placement's throughput over
   one rank per node.
3. Routed runs at scale on the queue transport: de Bruijn B(16,4) at 65536 ranks and
   B(32,4) at 2^20 ranks, one rank per node, 5 us and 10 Gbit/s, a 1 us pass, Ray's
   sizes (4000-byte request, 0-byte reply): wall time, transfers per second, peak memory
   and bytes per rank (the engine process's whole peak over the ranks: an upper bound).
4. IMB Exchange (4000 bytes, 20 repetitions) at 1024 to 65536 ranks, one rank per node:
   messages per wall second, queue transport (and flow up to 4096 ranks).

Every row is timed around the call (fork, start-up, teardown and the JSON included);
the fastest of K runs is kept (noise only ever adds time). --quick: a small check
(1024 ranks at 1 and 4 per node, 4096-rank routed and exchange rows, one repeat).

This is a benchmark: it measures and reports, it asserts no speed.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LATENCY_US, BANDWIDTH_GBPS, BYTES = 2.0, 32.0, 4000


def find_bare(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    candidates = []
    try:
        from hopsim.built import built_path
        candidates.append(built_path("bin", "bare_s4u"))
    except ImportError:
        pass
    candidates += [Path(p) for p in sorted(glob.glob(str(REPO / "build" / "*" / "bench" / "bare_s4u")))]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    sys.exit("speed.py: bare_s4u not found (install hopsim with `.venv/bin/pip install ./` "
             "or pass --bare PATH)")


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def own_rss_kib() -> int:
    """This process's resident memory: hopsim's forked engine starts with these pages."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def engine_run(platform: dict, workload: dict) -> dict:
    from hopsim import _engine

    rss = own_rss_kib()
    cpu = children_cpu_seconds()
    start = time.perf_counter()
    out = _engine.simulate(platform, workload)
    wall = time.perf_counter() - start
    return {"wall_seconds": wall, "cpu_seconds": children_cpu_seconds() - cpu, "messages": out["messages"],
            "simulated_seconds": out["simulated_seconds"], "peak_rss_kib": out["peak_rss_kib"],
            "parent_rss_kib": rss, "results": out["results"]}


def star(nodes: int, cores: int, transport: str, latency_us=LATENCY_US, bandwidth_gbps=BANDWIDTH_GBPS,
         **extra) -> dict:
    from hopsim.platforms import Platform

    p = Platform(name="bench", nodes=nodes, cores=cores, latency_us=latency_us,
                 bandwidth_gbps=bandwidth_gbps, transport=transport, **extra)
    return p.to_engine_dict()


def roundtrip(ranks: int, per_node: int, round_trips: int, seed: int, **extra) -> dict:
    return dict(kind="roundtrip", ranks=ranks, ranks_per_node=per_node, seed=seed, request_bytes=BYTES,
                reply_bytes=BYTES, exchanges=round_trips, **extra)


def bare_command(bare: Path, ranks: int, per_node: int, round_trips: int, seed: int) -> list[str]:
    return [str(bare), str(ranks), str(round_trips), str(BYTES), repr(LATENCY_US), repr(BANDWIDTH_GBPS),
            str(BYTES), str(seed), str(per_node)]


_CHILD = """
import json, resource, sys, time
from hopsim import _engine
def cpu():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime
start, cpu0 = time.perf_counter(), cpu()
out = _engine.simulate(json.loads(sys.argv[1]), json.loads(sys.argv[2]))
out["own_wall_seconds"] = time.perf_counter() - start
out["own_cpu_seconds"] = cpu() - cpu0
out.pop("per_rank", None)
print(json.dumps(out))
"""


def timed_out(timeout: float) -> dict:
    return {"timed_out": True, "wall_seconds": float(timeout)}


def engine_run_limited(platform: dict, workload: dict, timeout: float) -> dict:
    """engine_run in a child process that is stopped after `timeout` seconds.

    Timed inside the child around the engine call, so that the interpreter's start-up is
    not counted (it is not counted in-process either).
    """
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(platform), json.dumps(workload)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return timed_out(timeout)
    if done.returncode != 0:
        sys.exit(f"speed.py: engine run failed ({done.returncode}): {done.stderr.strip()}")
    out = json.loads(done.stdout)
    return {"wall_seconds": out["own_wall_seconds"], "cpu_seconds": out["own_cpu_seconds"],
            "messages": out["messages"], "simulated_seconds": out["simulated_seconds"],
            "peak_rss_kib": out["peak_rss_kib"], "results": out["results"]}


def bare_run(cmd: list[str], timeout: float) -> dict:
    cpu = children_cpu_seconds()
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return timed_out(timeout)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"speed.py: bare_s4u failed ({done.returncode}): {done.stderr.strip()}")
    out = json.loads(done.stdout)
    return {"wall_seconds": wall, "cpu_seconds": children_cpu_seconds() - cpu, "messages": out["messages"],
            "simulated_seconds": out["simulated_seconds"], "peak_rss_kib": out["peak_rss_kib"]}


def best(runs: list[dict]) -> dict:
    if all(r.get("timed_out") for r in runs):
        return dict(runs[0])
    fastest = dict(min((r for r in runs if not r.get("timed_out")), key=lambda r: r["wall_seconds"]))
    results = fastest.pop("results", {})
    if "rows" in results:  # exchange: the time per repetition (L + 2s/R = 4 us on single-rank nodes)
        fastest["t_max_us"] = results["rows"][0]["t_max_us"]
    fastest["min_cpu_seconds"] = min(r["cpu_seconds"] for r in runs)
    fastest["messages_per_second"] = fastest["messages"] / fastest["wall_seconds"]
    fastest["messages_per_cpu_second"] = fastest["messages"] / max(fastest["min_cpu_seconds"], 1e-9)
    fastest["all_wall_seconds"] = [round(r["wall_seconds"], 3) for r in runs]
    return fastest


def repeat(k: int, fn) -> dict:
    return best([fn() for _ in range(k)])


def rel(a: float, b: float) -> str:
    d = abs(a - b) / b if b else 0.0
    return "0" if d == 0 else f"{d:.0e}" if d < 1e-3 else f"{d:+.1%}".replace("+", "") if a >= b else f"-{d:.1%}"


def section_bare(args, bare: Path, sizes, placements) -> list[dict]:
    print(f"\n1. any-to-any roundtrip, {BYTES}-byte request and reply, {LATENCY_US:g} us, "
          f"{BANDWIDTH_GBPS:g} Gbit/s, {args.messages} messages a row; best of {args.repeats}", flush=True)
    print(f"{'ranks':>6} {'per node':>8} | {'queue msg/s':>10} {'x bare':>7} {'cpu x':>7} | "
          f"{'flow msg/s':>10} {'x bare':>7} {'cpu x':>7} | {'bare msg/s':>10} {'bare s':>7} | "
          f"{'sim diff queue':>14} {'flow':>6} | {'MiB q/f/bare':>13}", flush=True)
    rows = []
    for n in sizes:
        for k in placements:
            trips = max(1, args.messages // (2 * n))
            messages = 2 * n * trips
            cmd = bare_command(bare, n, k, trips, args.seed)
            q = repeat(args.repeats, lambda: engine_run(star(n // k, k, "queue"), roundtrip(n, k, trips, args.seed)))
            if k == 1 or n <= args.flow_contended_up_to:
                f = repeat(args.repeats, lambda: engine_run_limited(star(n // k, k, "flow"),
                                                                    roundtrip(n, k, trips, args.seed), args.timeout))
            else:
                f = {"skipped": True}
            b = repeat(args.repeats, lambda: bare_run(cmd, args.timeout))
            row = {"ranks": n, "ranks_per_node": k, "round_trips_per_rank": trips, "messages": messages,
                   "queue": q, "flow": f, "bare": b, "bare_command": shlex.join(cmd)}
            # A run stopped at the time limit moved fewer than all messages in that time:
            # its rate is below messages / limit, and a ratio over it is a lower bound.
            b_rate = messages / b["wall_seconds"]
            b_cpu = b.get("messages_per_cpu_second", b_rate)
            cells = []
            for name, h in (("queue", q), ("flow", f)):
                if h.get("skipped") or h.get("timed_out"):
                    cells.append("-" if h.get("skipped") else f"> {args.timeout:.0f} s")
                    continue
                row[f"{name}_over_bare"] = h["messages_per_second"] / b_rate
                if b.get("timed_out"):  # a lower bound on the wall ratio; none on CPU time
                    cells.append(f"{h['messages_per_second']:>10,.0f} {'>' + format(row[name + '_over_bare'], '.0f'):>7} "
                                 f"{'-':>7}")
                    continue
                row[f"{name}_over_bare_cpu"] = h["messages_per_cpu_second"] / b_cpu
                cells.append(f"{h['messages_per_second']:>10,.0f} {row[name + '_over_bare']:>7.2f} "
                             f"{row[name + '_over_bare_cpu']:>7.2f}")
            bare_cell = (f"{'< ' + format(b_rate, ',.0f'):>10} {'> ' + format(args.timeout, '.0f'):>7}"
                         if b.get("timed_out") else f"{b_rate:>10,.0f} {b['wall_seconds']:>7.2f}")
            sim = lambda h: (rel(h["simulated_seconds"], b["simulated_seconds"])
                             if "simulated_seconds" in h and "simulated_seconds" in b else "-")
            mem = lambda h: str(h["peak_rss_kib"] // 1024) if "peak_rss_kib" in h else "-"
            rows.append(row)
            print(f"{n:>6} {k:>8} | {cells[0]} | {cells[1]:>26} | {bare_cell} | {sim(q):>14} {sim(f):>6} | "
                  f"{mem(q)}/{mem(f)}/{mem(b)}", flush=True)
    return rows


def section_queue(args, sizes, placements) -> list[dict]:
    print(f"\n2. queue transport, any-to-any roundtrip, 16 round trips per rank; best of {args.repeats}",
          flush=True)
    print(f"{'ranks':>6} {'per node':>8} {'messages':>9} {'wall s':>7} {'msg/s':>10} {'msg/cpu s':>10} "
          f"{'vs 1/node':>9} {'sim us/trip':>11}", flush=True)
    rows = []
    for n in sizes:
        base = None
        for k in placements:
            r = repeat(args.repeats, lambda: engine_run(star(n // k, k, "queue"), roundtrip(n, k, 16, args.seed)))
            base = base or r["messages_per_second"]
            row = {"ranks": n, "ranks_per_node": k, "queue": r, "over_one_per_node": r["messages_per_second"] / base}
            rows.append(row)
            print(f"{n:>6} {k:>8} {r['messages']:>9} {r['wall_seconds']:>7.2f} {r['messages_per_second']:>10,.0f} "
                  f"{r['messages_per_cpu_second']:>10,.0f} {row['over_one_per_node']:>9.2f} "
                  f"{r['simulated_seconds'] * 1e6 / 16:>11.2f}", flush=True)
    return rows


def section_routed(args, cases) -> list[dict]:
    print("\n3. routed roundtrip at scale, queue transport, one rank per node, 5 us, 10 Gbit/s, "
          "pass 1 us, 4000-byte request, 0-byte reply", flush=True)
    print(f"{'overlay':<16} {'ranks':>8} {'round trips':>11} {'transfers':>10} {'wall s':>7} {'transfers/s':>11} "
          f"{'peak MiB':>8} {'bytes/rank':>10} {'hops':>5}", flush=True)
    rows = []
    for label, n, degree, trips in cases:
        platform = star(n, 1, "queue", latency_us=5.0, bandwidth_gbps=10.0, intra_latency_us=1.0,
                        intra_bandwidth_gbps=50.0, pass_us=1.0)
        work = dict(kind="roundtrip", ranks=n, ranks_per_node=1, seed=args.seed, request_bytes=4000,
                    reply_bytes=0, exchanges=trips, overlay="debruijn", degree=degree)
        r = engine_run(platform, work)
        # The whole engine process's peak over the ranks: an upper bound (it includes the
        # interpreter's pages the fork shares, the platform, the overlay and the JSON).
        per_rank = r["peak_rss_kib"] * 1024 / n
        row = {"overlay": label, "ranks": n, "round_trips_per_rank": trips, "wall_seconds": r["wall_seconds"],
               "cpu_seconds": r["cpu_seconds"], "transfers": r["messages"],
               "transfers_per_second": r["messages"] / r["wall_seconds"], "peak_rss_kib": r["peak_rss_kib"],
               "parent_rss_kib": r["parent_rss_kib"], "bytes_per_rank": per_rank,
               "hops_mean": r["results"]["hops"]["mean"]}
        rows.append(row)
        print(f"{label:<16} {n:>8} {trips:>11} {r['messages']:>10} {r['wall_seconds']:>7.1f} "
              f"{row['transfers_per_second']:>11,.0f} {r['peak_rss_kib'] / 1024:>8.0f} {per_rank:>10.0f} "
              f"{row['hops_mean']:>5.2f}", flush=True)
    return rows


def section_exchange(args, sizes, flow_up_to: int) -> list[dict]:
    print(f"\n4. IMB Exchange, {BYTES} bytes, 20 repetitions, one rank per node, {LATENCY_US:g} us, "
          f"{BANDWIDTH_GBPS:g} Gbit/s", flush=True)
    print(f"{'ranks':>6} {'transport':>9} {'messages':>9} {'wall s':>7} {'msg/s':>10} {'msg/cpu s':>10} "
          f"{'t_max us':>9}", flush=True)
    rows = []
    for n in sizes:
        for transport in ("queue", "flow"):
            if transport == "flow" and n > flow_up_to:
                continue
            work = dict(kind="exchange", ranks=n, ranks_per_node=1, seed=args.seed, sizes=[BYTES], repetitions=20)
            r = repeat(args.repeats, lambda: engine_run(star(n, 1, transport), work))
            rows.append({"ranks": n, "transport": transport, "run": r})
            print(f"{n:>6} {transport:>9} {r['messages']:>9} {r['wall_seconds']:>7.2f} "
                  f"{r['messages_per_second']:>10,.0f} {r['messages_per_cpu_second']:>10,.0f} "
                  f"{r['t_max_us']:>9.3f}", flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a small check (a minute or two)")
    ap.add_argument("--repeats", type=int, default=None, help="runs per row, fastest kept "
                    "(default 2, 1 with --quick)")
    ap.add_argument("--messages", type=int, default=32768, help="messages per row of section 1 "
                    "(default: %(default)s)")
    ap.add_argument("--timeout", type=float, default=150.0, help="seconds after which a flow or "
                    "bare run of section 1 is stopped and reported as a bound (default: %(default)s)")
    ap.add_argument("--flow-contended-up-to", type=int, default=4096, help="largest rank count "
                    "at which section 1 runs the flow transport on shared NICs (default: %(default)s)")
    ap.add_argument("--sections", default="1,2,3,4", help="which tables to print "
                    "(default: %(default)s)")
    ap.add_argument("--sizes", help="section 1's rank counts, comma-separated (default "
                    "1024,4096,16384)")
    ap.add_argument("--placements", help="section 1's ranks per node, comma-separated "
                    "(default 1,4,16)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bare", help="path of the bare_s4u program (default: the installed one)")
    ap.add_argument("--json", metavar="FILE", help="also write every measurement as JSON to FILE")
    args = ap.parse_args(argv)
    args.repeats = args.repeats or (1 if args.quick else 2)
    if args.repeats < 1 or args.messages < 2:
        ap.error("--repeats must be at least 1 and --messages at least 2")
    bare = find_bare(args.bare)
    load = os.getloadavg()
    print(f"hopsim speed: {os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
          flush=True)
    want = {int(x) for x in args.sections.split(",") if x.strip()}
    ints = lambda text, default: [int(x) for x in text.split(",")] if text else default
    doc = {}
    if args.quick:
        plan = {1: lambda: section_bare(args, bare, ints(args.sizes, [1024]), ints(args.placements, [1, 4])),
                2: lambda: section_queue(args, [1024], [1, 4, 16, 32]),
                3: lambda: section_routed(args, [("de Bruijn B(16,3)", 4096, 16, 2)]),
                4: lambda: section_exchange(args, [1024, 4096], 1024)}
    else:
        plan = {1: lambda: section_bare(args, bare, ints(args.sizes, [1024, 4096, 16384]),
                                        ints(args.placements, [1, 4, 16])),
                2: lambda: section_queue(args, [1024, 4096, 16384], [1, 4, 8, 16, 32]),
                3: lambda: section_routed(args, [("de Bruijn B(16,4)", 65536, 16, 4),
                                                 ("de Bruijn B(32,4)", 1 << 20, 32, 1)]),
                4: lambda: section_exchange(args, [1024, 4096, 16384, 65536], 4096)}
    for number, name in ((1, "bare"), (2, "queue"), (3, "routed"), (4, "exchange")):
        if number in want:
            doc[name] = plan[number]()
    end = os.getloadavg()
    print(f"load average at the end {end[0]:.2f} {end[1]:.2f} {end[2]:.2f}")
    if args.json:
        doc.update(command=shlex.join([sys.executable, *(sys.argv if argv is None else [__file__, *argv])]),
                   bare_program=str(bare), loadavg_start=load, loadavg_end=end)
        Path(args.json).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
