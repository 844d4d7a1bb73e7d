"""The calibration demonstration, end to end, on this machine's emulated cluster.

    nice -n -15 python -m hopsim.calibration.demo --out DIR [--trials 3] [--link-rate 200mbit]

1. `hopsim calibrate --live --emulate-cluster 2` fits a platform to a two-host ping-pong
   only (hopbench), and again to NetPIPE's ping-pong alone (`--tool netpipe`).
2. Live runs the fit never saw, `--trials` times each, interleaved: IMB-style exchange on
   4 ranks (1 per host) and 8 ranks (2 per host), latency_checker-style round trips on 2,
   4 and 8 ranks. The load average is recorded before every run.
3. `hopsim validate` of every run on both fitted platforms; the same cases under SMPI
   (`hopsim.live.smpi.run_smpi`) on the platform as exported for SMPI users (the
   .xml network and the .smpi per-size factors: SMPI has no token bucket).
4. DIR/table.md (measured vs hopsim vs SMPI, error per case, median and worst), DIR/plot.png,
   DIR/summary.json, every raw live output under DIR/runs/, the fits under DIR/fit-*.

Needs root (network namespaces), Open MPI and SimGrid's smpirun. Takes several minutes.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

HOSTS = 4
# Exchange sizes: from latency-bound to well past the tbf burst.
EXCHANGE_SIZES = [0, 1024, 16384, 65536, 262144, 1048576]
EXCHANGE_REPETITIONS = 20
# latency_checker's defaults but fewer exchanges: 4000-byte request and reply.
ROUNDTRIP = {"request_bytes": 4000, "reply_bytes": 4000, "exchanges": 200,
             "destinations": "shared"}
# (label, workload, ranks, ranks per host)
CASES = [("exchange-4x1", "exchange", 4, 1), ("exchange-8x2", "exchange", 8, 2),
         ("roundtrip-2x1", "roundtrip", 2, 1), ("roundtrip-4x1", "roundtrip", 4, 1),
         ("roundtrip-8x2", "roundtrip", 8, 2)]
# The intra-node path (Open MPI's shared memory between two ranks of one host) is not
# measured by a two-host ping-pong: it comes from --base, a fit of the shared-memory
# ping-pong in tests/data (docs/calibration.md), with 4 nodes of 2 cores for the runs.
SHM_FILE = "tests/data/osu/osu_latency-7.4-shm.txt"
# SMPI's polling loop needs a positive pass cost to advance its clock (docs/live.md).
SMPI_PASS_US = 1.0


def hopsim_cmd(*args) -> list[str]:
    return [sys.executable, "-m", "hopsim", *map(str, args)]


def run(cmd, log, **kw) -> subprocess.CompletedProcess:
    load = os.getloadavg()[0]
    start = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    log.append({"cmd": shlex.join(cmd), "load_before": round(load, 2),
                "load_after": round(os.getloadavg()[0], 2), "seconds": round(time.time() - start, 1),
                "status": p.returncode})
    sys.stderr.write(f"[{time.strftime('%H:%M:%S')} load {load:.2f}] {shlex.join(cmd[2:])} "
                     f"-> {p.returncode} ({time.time() - start:.0f} s)\n")
    if p.returncode != 0:
        raise SystemExit(f"demo: failed: {shlex.join(cmd)}\n{p.stderr.strip()[-600:]}")
    return p


def live_args(label, workload, ranks, rpn, out: Path, link_rate: str) -> list[str]:
    args = ["live", "--emulate-cluster", HOSTS, "--link-rate", link_rate, "--workload", workload,
            "--ranks", ranks, "--ranks-per-node", rpn, "--out", out, "--json"]
    if workload == "exchange":
        args += ["--sizes", ",".join(map(str, EXCHANGE_SIZES)), "--repetitions", EXCHANGE_REPETITIONS]
    else:
        args += ["--request-bytes", ROUNDTRIP["request_bytes"], "--reply-bytes",
                 ROUNDTRIP["reply_bytes"], "--exchanges", ROUNDTRIP["exchanges"],
                 "--destinations", ROUNDTRIP["destinations"], "--reception", "any-source"]
        # Always: it makes a waiting rank yield its core (mpi_yield_when_idle). Spinning
        # at nice -15, a 2-rank run starved the kernel's packet processing (round trips
        # of milliseconds, dropped by latency_checker's 1000 us cut; docs/validation.md).
        args += ["--oversubscribe"]
    return args


def smpi_cases(platform, smpi_flags: str, runs_dir: Path, log) -> dict:
    """Each case once under SMPI: the platform without the token bucket and the pacing,
    plus the flags calibrate exported (.smpi): SimGrid's per-flow TCP window bound at the
    paced rate, and the per-size factors of the sustained rate."""
    from ..live.smpi import run_smpi

    extra = [f for f in smpi_flags.split() if f.split(":")[0] in (
        "--cfg=smpi/bw-factor", "--cfg=smpi/lat-factor", "--cfg=network/model", "--cfg=network/TCP-gamma",
        "--cfg=smpi/async-small-thresh", "--cfg=smpi/send-is-detached-thresh")]
    plat = platform.replace(bucket_gbps=0.0, bucket_burst_bytes=0.0, pacing_gbps=0.0,
                            pacing_above_bytes=0, eager_threshold_bytes=None,
                            noise_scope="off", noise_median_us=0.0, noise_sigma=0.0,
                            pass_us=SMPI_PASS_US, provenance={})
    out = {}
    for label, workload, ranks, rpn in CASES:
        params = ({"sizes": EXCHANGE_SIZES, "repetitions": EXCHANGE_REPETITIONS}
                  if workload == "exchange" else dict(ROUNDTRIP, reception="any-source"))
        load = os.getloadavg()[0]
        start = time.time()
        doc, _ = run_smpi(plat, workload, ranks, rpn, extra_cfg=extra, timeout=900,
                          out=str(runs_dir / f"smpi-{label}"), **params)
        log.append({"cmd": f"run_smpi({label})", "load_before": round(load, 2),
                    "seconds": round(time.time() - start, 1), "status": 0})
        sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] smpi {label} ({time.time() - start:.0f} s)\n")
        out[label] = doc
    return out, extra


def stat_of(doc: dict, workload: str) -> dict:
    """{bytes: value} for exchange (t_avg_us), {request bytes: lc average} for roundtrip."""
    if workload == "exchange":
        return {r["bytes"]: r["t_avg_us"] for r in doc["results"]["rows"]}
    return {ROUNDTRIP["request_bytes"]: doc["results"]["lc_average_of_averages_us"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hopsim.calibration.demo", description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, metavar="DIR")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--link-rate", default="200mbit")
    ap.add_argument("--skip-smpi", action="store_true")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    runs = out / "runs"
    runs.mkdir(exist_ok=True)
    log: list[dict] = []
    repo = Path(__file__).resolve().parents[1]
    shm = Path(SHM_FILE) if Path(SHM_FILE).is_file() else repo / SHM_FILE

    # 0. The base: the intra-node path from the shared-memory ping-pong.
    base = out / "base-shm.toml"
    if not base.exists():
        run(hopsim_cmd("calibrate", shm, "--ranks-per-node", 2, "--base", "two-nodes",
                       "--nodes", HOSTS, "--closed-form", "--out", base), log)
    # 1. The fits: hopbench's ping-pong, NetPIPE's ping-pong, each on 2 hosts only.
    fits = {}
    for tool in ("hopbench", "netpipe"):
        toml = out / f"fit-{tool}.toml"
        fits[tool] = toml
        if toml.exists():   # a rerun reuses the measurements already made
            continue
        raw = out / f"fit-{tool}-live" / ("np.out" if tool == "netpipe" else "result.json")
        if raw.exists():    # measured before: fit the same file again
            p = run(hopsim_cmd("calibrate", raw, "--base", base, "--nodes", HOSTS, "--closed-form",
                               "--out", toml, "--plot", out / f"fit-{tool}.png"), log)
            (out / f"fit-{tool}.txt").write_text(p.stdout)
            continue
        p = run(hopsim_cmd("calibrate", "--live", "--tool", tool, "--emulate-cluster", 2,
                           "--link-rate", args.link_rate, "--base", base, "--nodes", HOSTS,
                           "--closed-form", "--out", toml, "--plot", out / f"fit-{tool}.png"), log)
        (out / f"fit-{tool}.txt").write_text(p.stdout)

    # 2. The unseen live runs, trials interleaved so that load changes hit every case.
    files: dict[str, list[Path]] = {label: [] for label, *_ in CASES}
    loads: dict[str, list[float]] = {label: [] for label, *_ in CASES}
    for t in range(1, args.trials + 1):
        for label, workload, ranks, rpn in CASES:
            d = runs / f"{label}-t{t}"
            if not (d / "result.json").exists():
                run(hopsim_cmd(*live_args(label, workload, ranks, rpn, d, args.link_rate)), log)
                (d / "load.json").write_text(json.dumps(log[-1]) + "\n")
            files[label].append(d / "result.json")
            loads[label].append(json.loads((d / "load.json").read_text())["load_before"])

    # 3. Validation on both fits, and SMPI on the hopbench fit.
    from .. import platforms
    from .calibrate import calibrate_files
    from .validate import validate

    reports = {}
    for tool, toml in fits.items():
        all_files = [str(f) for fs in files.values() for f in fs]
        p = run(hopsim_cmd("validate", "--platform", toml, "--nodes", HOSTS, *all_files, "--json"), log)
        (out / f"validate-{tool}.json").write_text(p.stdout)
        reports[tool] = json.loads(p.stdout)
    smpi = {}
    smpi_extra = []
    if not args.skip_smpi:
        fitted = platforms.load(str(fits["hopbench"]))
        flags = (fits["hopbench"].with_suffix(".smpi")).read_text()
        smpi, smpi_extra = smpi_cases(fitted, flags, runs, log)

    # 4. The table: one row per case and size; measured = median over trials.
    rows = []
    for label, workload, ranks, rpn in CASES:
        measured_by_size: dict[int, list[float]] = {}
        for f in files[label]:
            for size, v in stat_of(json.loads(f.read_text()), workload).items():
                measured_by_size.setdefault(size, []).append(v)
        sims = {}
        for tool, rep in reports.items():
            for c in rep["cases"]:
                if Path(c["file"]).parent.name.startswith(label + "-t"):
                    sims.setdefault(tool, {})[c["bytes"]] = c["simulated_us"]
        smpi_vals = stat_of(smpi[label], workload) if label in smpi else {}
        for size, vals in sorted(measured_by_size.items()):
            m = statistics.median(vals)
            row = {"case": label, "workload": workload, "ranks": ranks, "ranks_per_host": rpn,
                   "bytes": size, "measured_us": m, "measured_min_us": min(vals),
                   "measured_max_us": max(vals), "trials": len(vals),
                   "load": [min(loads[label]), max(loads[label])]}
            for tool in reports:
                s = sims.get(tool, {}).get(size)
                row[f"hopsim_{tool}_us"] = s
                row[f"error_{tool}_pct"] = None if s is None else 100 * (s - m) / m
            if size in smpi_vals:
                row["smpi_us"] = smpi_vals[size]
                row["error_smpi_pct"] = 100 * (smpi_vals[size] - m) / m
            rows.append(row)

    def summary(key):
        e = [abs(r[key]) for r in rows if r.get(key) is not None]
        return (statistics.median(e), max(e)) if e else (None, None)

    summ = {k: summary(k) for k in ("error_hopbench_pct", "error_netpipe_pct", "error_smpi_pct")}
    fit_values = {}
    for tool, toml in fits.items():
        p = platforms.load(str(toml))
        fit_values[tool] = {k: getattr(p, k) for k in (
            "latency_us", "bandwidth_gbps", "bucket_gbps", "bucket_burst_bytes",
            "eager_threshold_bytes", "noise_scope")}
    doc = {"rows": rows, "median_and_worst_abs_error_pct": summ, "fits": fit_values,
           "smpi_extra_cfg": smpi_extra, "smpi_pass_us": SMPI_PASS_US, "runs": log,
           "nice": os.nice(0), "cores": os.cpu_count()}
    (out / "summary.json").write_text(json.dumps(doc, indent=1) + "\n")
    (out / "table.md").write_text(table_md(rows, summ, fit_values))
    plot(rows, out / "plot.png")
    sys.stdout.write((out / "table.md").read_text())
    return 0


def _f(x, fmt="{:.1f}"):
    return "-" if x is None else fmt.format(x)


def table_md(rows, summ, fits) -> str:
    lines = ["| case | bytes | measured us (median of trials) | min..max | load | hopsim us | error | "
             "hopsim (NetPIPE fit) us | error | SMPI us | error |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['case']} | {r['bytes']} | {r['measured_us']:.1f} | {r['measured_min_us']:.1f}.."
            f"{r['measured_max_us']:.1f} | {r['load'][0]:.1f}-{r['load'][1]:.1f} | "
            f"{_f(r.get('hopsim_hopbench_us'))} | {_f(r.get('error_hopbench_pct'), '{:+.1f}%')} | "
            f"{_f(r.get('hopsim_netpipe_us'))} | {_f(r.get('error_netpipe_pct'), '{:+.1f}%')} | "
            f"{_f(r.get('smpi_us'))} | {_f(r.get('error_smpi_pct'), '{:+.1f}%')} |")
    lines.append("")
    for key, name in (("error_hopbench_pct", "hopsim, hopbench fit"),
                      ("error_netpipe_pct", "hopsim, NetPIPE fit"), ("error_smpi_pct", "SMPI")):
        med, worst = summ[key]
        if med is not None:
            lines.append(f"- {name}: median absolute error {med:.1f}%, worst {worst:.1f}%")
    lines.append("")
    lines.append("| fit | latency_us | bandwidth_gbps | bucket_gbps | bucket_burst_bytes | eager threshold |")
    lines.append("|---|---|---|---|---|---|")
    for tool, v in fits.items():
        lines.append(f"| {tool} | {v['latency_us']} | {v['bandwidth_gbps']} | {v['bucket_gbps']} | "
                     f"{v['bucket_burst_bytes']} | {v['eager_threshold_bytes']} |")
    return "\n".join(lines) + "\n"


def plot(rows, path: Path) -> None:
    from .plots import _pyplot

    plt = _pyplot()
    ex = [c for c in dict.fromkeys(r["case"] for r in rows) if c.startswith("exchange")]
    fig, axes = plt.subplots(1, len(ex) + 1, figsize=(5 * (len(ex) + 1), 4.2))
    for ax, case in zip(axes, ex):
        rs = [r for r in rows if r["case"] == case and r["bytes"] > 0]
        x = [r["bytes"] for r in rs]
        ax.errorbar(x, [r["measured_us"] for r in rs],
                    yerr=[[r["measured_us"] - r["measured_min_us"] for r in rs],
                          [r["measured_max_us"] - r["measured_us"] for r in rs]],
                    fmt="o", color="k", label="live (median, min..max)")
        for key, style, name in (("hopsim_hopbench_us", "-", "hopsim (hopbench fit)"),
                                 ("hopsim_netpipe_us", ":", "hopsim (NetPIPE fit)"),
                                 ("smpi_us", "--", "SMPI")):
            ys = [r.get(key) for r in rs]
            if all(y is not None for y in ys):
                ax.plot(x, ys, style, label=name)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("bytes per message")
        ax.set_ylabel("t_avg per repetition (us)")
        ax.set_title(f"{case} (ranks x per host)")
        ax.legend(fontsize=7)
    ax = axes[-1]
    rs = [r for r in rows if r["workload"] == "roundtrip"]
    xs = list(range(len(rs)))
    ax.errorbar(xs, [r["measured_us"] for r in rs],
                yerr=[[r["measured_us"] - r["measured_min_us"] for r in rs],
                      [r["measured_max_us"] - r["measured_us"] for r in rs]],
                fmt="o", color="k", label="live (median, min..max)")
    for key, marker, name in (("hopsim_hopbench_us", "s", "hopsim (hopbench fit)"),
                              ("hopsim_netpipe_us", "^", "hopsim (NetPIPE fit)"),
                              ("smpi_us", "x", "SMPI")):
        ys = [r.get(key) for r in rs]
        if all(y is not None for y in ys):
            ax.plot(xs, ys, marker, label=name)
    ax.set_xticks(xs, [r["case"].replace("roundtrip-", "") for r in rs])
    ax.set_xlabel("ranks x per host")
    ax.set_ylabel("latency_checker average of averages (us)")
    ax.set_title("round trips, 4000 B request and reply")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


if __name__ == "__main__":
    sys.exit(main())
