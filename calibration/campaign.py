"""The measurement campaign of `hopsim calibrate --live --campaign`: a few short live runs
on 2 to 4 hosts, each chosen because it shows a mechanism the joint fit decides
(docs/calibration.md, "The measurement campaign", has the table of which probe
identifies which parameter and why).

    from hopsim.calibration.campaign import probes, measure, simulate
    files = measure(probes(4), out_dir, emulate_cluster=4, link_rate="200mbit")
    files = simulate(probes(4), platform, out_dir)      # the same probes on the engine

Every probe is a workload the engine replays as it is (hopsim's own JSON, with its
placement, sizes, counts and forced collective algorithm recorded), measured through
hopsim.live.mpirun.run_live and fitted by calibrate_files with every other file:
one fitter, one replay.
"""
from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError

# The emulated cluster's names start with this (hopsim.live.cluster).
PREFIX = "camp"
# Campaigns run on 2 to this many hosts (more only lengthen the fan-out probes).
MAX_HOSTS = 4
TRIALS = 3
# Ping-pong sweep: latency-bound sizes, then powers of two and their midpoints up to
# 1 MiB (calibrate --live's sweep), fewer round trips than the single ping-pong's so
# that three trials fit in the campaign's minutes.
PINGPONG_ITERATIONS = 50
# Exchanges and collectives: sizes from latency-bound to well past a tbf's burst.
EXCHANGE_SIZES = (0, 1024, 4096, 16384, 65536, 262144, 1048576)
REPETITIONS = 50
COLLECTIVE_MAX_BYTES = 2**19
# osu_bw: 64 messages in flight per window (its default), sizes 1 KiB to 128 KiB, so a
# window (64 KiB to 8 MiB) runs well past any burst: the sustained rate.
BANDWIDTH_SIZES = tuple(2**k for k in range(10, 18))
BANDWIDTH_WINDOWS = 10
# Round trips per rank of the 0-byte round-trip probe (latency_checker's -exchanges in the
# rigs' runs).
ROUNDTRIP_EXCHANGES = 300


@dataclass(frozen=True)
class Probe:
    name: str                 # its folder under <stem>-live/
    workload: str
    ranks: int
    ranks_per_node: int
    tool: str                 # hopbench, osu or imb
    params: dict = field(default_factory=dict)   # hopsim.simulate's parameter names
    seed: int = 1
    shows: str = ""           # what it identifies (the report's and the docs' table)
    # Sample the NIC queue while it runs (hopsim live --sample-nic-queue), on an emulated
    # cluster with a tbf: network.nic_queue_bytes.
    sample_nic_queue: bool = False
    # A check (checks()): measured with the campaign, then predicted by its fit, never
    # fitted and never used to decide a mechanism.
    held_out: bool = False

    # The emulating machine's capacity (machine_probes()): run on uncapped links, read by
    # --machine-gbps, never fitted.
    machine: bool = False

    @property
    def folder(self) -> str:
        """Its folder under <stem>-live/: a check's or the machine's one level down, so
        that the fitted runs are <stem>-live/*/result.json and nothing else."""
        if self.machine:
            return f"{MACHINE_FOLDER}/{self.name}"
        return f"{CHECK_FOLDER}/{self.name}" if self.held_out else self.name


CHECK_FOLDER = "check"
MACHINE_FOLDER = "machine"
# The machine's probe: 1 MiB, past any cache's help (rig C's 2-host exchange ran 256 KiB
# at twice the rate of 1 MiB).
MACHINE_BYTES = 1048576
MACHINE_REPETITIONS = 20


def probes(hosts: int, trials: int = TRIALS) -> list[Probe]:
    """The campaign on `hosts` hosts (2 to MAX_HOSTS)."""
    from ..workload import imb_sizes
    from .cli import LIVE_SIZES

    if not 2 <= hosts <= MAX_HOSTS:
        raise InputError(f"--campaign: runs on 2 to {MAX_HOSTS} hosts, got {hosts}")
    pp = {"sizes": list(LIVE_SIZES), "iterations": PINGPONG_ITERATIONS}
    ex = {"sizes": list(EXCHANGE_SIZES), "repetitions": REPETITIONS}
    # One host sending to several at once (several to one): every other host at one rank
    # each; on 2 hosts, 2 ranks per host (the root's link then carries 2 connections).
    fan_ranks, fan_rpn = (hosts, 1) if hosts >= 3 else (4, 2)
    fan = f"{fan_ranks // fan_rpn}x{fan_rpn}"

    def coll(kind, algorithm):
        # No 0-byte case (Open MPI returns at once; IMB runs with -zero_size off).
        return {"sizes": [s for s in imb_sizes(kind) if 0 < s <= COLLECTIVE_MAX_BYTES],
                "repetitions": REPETITIONS, "algorithm": algorithm}

    out = [Probe(f"pingpong-2x1-t{t}", "pingpong", 2, 1, "hopbench", pp, seed=t,
                 shows="latency, one-packet rate, paced rate and its step, eager threshold, "
                       "token bucket; with the other trials, the noise")
           for t in range(1, trials + 1)]
    out += [
        Probe("pingpong-1x2", "pingpong", 2, 2, "hopbench", pp,
              shows="intra-node latency and bandwidth"),
        Probe("bandwidth-2x1", "bandwidth", 2, 1, "osu",
              {"sizes": list(BANDWIDTH_SIZES), "iterations": BANDWIDTH_WINDOWS},
              shows="sustained rate behind a token bucket (a window drains it)"),
        Probe("exchange-2x1", "exchange", 2, 1, "hopbench", ex,
              shows="both directions of a link loaded at once (full duplex), a shared "
                    "capacity" + ("" if hosts >= 3 else
                                  "; not its form: on 2 hosts every byte crosses both "
                                  "nodes' limiters and the backbone alike, and the "
                                  "all-hosts alltoall that tells them apart needs 3 or more")
                    + "; on an emulated cluster with a tbf, the NIC queue a rendezvous's "
                      "control message waits behind (sampled)",
              sample_nic_queue=True),
        Probe("exchange-2x2", "exchange", 4, 2, "hopbench", ex,
              shows="per-node NIC message cost, intra- and inter-node paths together"),
        Probe("roundtrip-2x2", "roundtrip", 4, 2, "hopbench",
              {"request_bytes": 0, "reply_bytes": 0, "exchanges": ROUNDTRIP_EXCHANGES},
              shows="0-byte round trips of 4 ranks on 2 hosts: with --machine-cores under "
                    "4 (hosts on one machine), the machine's turn; else the pass and NIC "
                    "costs of polling ranks"),
        Probe("roundtrip-2x2-4000", "roundtrip", 4, 2, "hopbench",
              {"request_bytes": 4000, "reply_bytes": 4000, "exchanges": ROUNDTRIP_EXCHANGES},
              shows="4000-byte round trips of 4 ranks on 2 hosts (latency_checker's size): "
                    "with --machine-cores under 4, the check of the turn on messages it was "
                    "not fitted to; else round trips that load both directions"),
        Probe(f"bcast-linear-{fan}", "bcast", fan_ranks, fan_rpn, "imb",
              coll("bcast", "basic_linear"),
              shows="one host sending to several at once: pacing per connection or the "
                    "paced rate on the link"),
        Probe(f"reduce-linear-{fan}", "reduce", fan_ranks, fan_rpn, "imb", coll("reduce", "linear"),
              shows="several hosts sending to one: the receiving link"),
    ]
    if hosts >= 3:
        # Every host's link loaded at once, both ways: pairwise runs H-1 steps, each a
        # permutation (rank r sends s to r+k, receives s from r-k). A step moves s in and
        # s out of every node, H s over the machine: a per-node limiter D takes 2s/D per
        # step, a backbone B takes H s/B. exchange-2x1 moves 2s each way per node, 4s over
        # the machine: 4s/D or 4s/B, one fitted rate either way; here a backbone of that
        # rate takes H/2 times the limiter's step (4 hosts: twice; 3: 1.5 times; 2: the
        # same, hence not added there). tests/test_campaign.py checks these by hand.
        out.append(Probe(f"alltoall-pairwise-{hosts}x1", "alltoall", hosts, 1, "imb",
                         coll("alltoall", "pairwise"),
                         shows="every host's link loaded at once, both ways: a shared "
                               "capacity's form, a per-node limiter (2s per node and step) "
                               f"or a backbone ({hosts}s per step over the machine)"))
    return out


def checks(hosts: int) -> list[Probe]:
    """What the campaign measures but does not fit: a placement its probes leave out,
    predicted by the platform fitted on them, so that a user sees how far off such runs
    will be before trusting a prediction of them (docs/calibration.md, "The campaign's
    check")."""
    if not 2 <= hosts <= MAX_HOSTS:
        raise InputError(f"--campaign: runs on 2 to {MAX_HOSTS} hosts, got {hosts}")
    return [Probe("exchange-2x2-cyclic", "exchange", 4, 2, "hopbench",
                  {"sizes": list(EXCHANGE_SIZES), "repetitions": REPETITIONS,
                   "placement": "cyclic"},
                  shows="held out: 2 ranks per host placed round-robin (--map-by node), so "
                        "four connections leave each host, which no fitted probe runs (under "
                        "TCP bbr such runs lose time at 64-256 KiB that hopsim does not model)",
                  held_out=True)]


def machine_probes(trials: int = TRIALS) -> list[Probe]:
    """The emulating machine's capacity (calibration/machine_capacity.py): a 2-host
    exchange on uncapped links, `trials` times; measured after the probes when the
    campaign emulates every node on this machine with uncapped links (cli._machine_plan)."""
    return [Probe(f"exchange-2x1-uncapped-t{t}", "exchange", 2, 1, "hopbench",
                  {"sizes": [MACHINE_BYTES], "repetitions": MACHINE_REPETITIONS},
                  shows="the machine's capacity: what 2 uncapped hosts move between them, "
                        "which every emulated host shares (network.backbone_gbps)",
                  machine=True) for t in range(1, trials + 1)]


_BINARIES = {"osu": "osu_bw", "imb": "IMB-MPI1"}


def tool_paths(tools_dir: str | None, needed) -> dict[str, str | None]:
    """Each third-party tool's binary: in tools_dir, else on PATH (None: run_live finds
    it there). One line naming the first one missing."""
    out = {}
    for tool in sorted(set(needed) - {"hopbench"}):
        name = _BINARIES[tool]
        if tools_dir is not None:
            path = Path(tools_dir) / name
            if not path.is_file():
                raise InputError(f"--tools: {tools_dir} holds no {name} (the campaign runs it; "
                                 f"docs/calibration.md says how to build it)")
            out[tool] = str(path.resolve())
        elif shutil.which(name) is None:
            raise InputError(f"--campaign: {name} is not on PATH; give the folder holding it "
                             f"with --tools")
        else:
            out[tool] = None
    return out


def measure(plan: list[Probe], out_dir: Path, *, emulate_cluster: int | None = None,
            link_rate: str | None = None, burst: int | None = None, hostfile: str | None = None,
            tools_dir: str | None = None, prefix: str = PREFIX, progress=None,
            congestion_control: str | None = None) -> list[str]:
    """Run every probe live into out_dir/<probe>/ (run_live's files); the result.json
    paths. An emulated cluster is built once (names from `prefix`) and torn down at the
    end whatever happens; out_dir is the caller's to create and remove."""
    from ..live.mpirun import run_live

    paths = tool_paths(tools_dir, (p.tool for p in plan))
    files = []
    with _cluster(emulate_cluster, link_rate, burst, prefix, progress,
                  congestion_control) as cluster:
        for i, probe in enumerate(plan, 1):
            if progress:
                progress(f"probe {i}/{len(plan)}: {probe.name} ({probe.shows})")
            folder = out_dir / probe.folder
            # oversubscribe: waiting ranks yield their core (mpi_yield_when_idle), as
            # calibrate --live's ping-pong does (docs/validation.md).
            sample = probe.sample_nic_queue and cluster is not None and cluster.burst is not None
            run_live(probe.workload, probe.ranks, probe.ranks_per_node, tool=probe.tool,
                     tool_path=paths.get(probe.tool), hostfile=hostfile, cluster=cluster,
                     oversubscribe=True, seed=probe.seed, out=str(folder),
                     sample_nic_queue=sample, **probe.params)
            files.append(str(folder / "result.json"))
    return files


class _NoCluster:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _cluster(hosts, link_rate, burst, prefix, progress, congestion_control=None):
    if hosts is None:
        return _NoCluster()
    from ..live.cluster import EmulatedCluster, check_available

    check_available()
    if link_rate is None:
        raise InputError("--emulate-cluster needs --link-rate (e.g. 200mbit)")
    cluster = EmulatedCluster(hosts, link_rate, burst, prefix=prefix,
                              congestion_control=congestion_control)
    return _Announced(cluster, progress)


class _Announced:
    """The cluster, up, with its teardown registered with a watcher (hopsim.reaper) in
    case hopsim is killed between two probes."""

    def __init__(self, cluster, progress):
        self.cluster, self.progress = cluster, progress

    def __enter__(self):
        from ..live.cluster import cut_packets_note, teardown_command
        from ..reaper import Reaper

        self.reaper = Reaper()
        try:
            self.reaper.command(teardown_command(self.cluster.tag))
            self.cluster.__enter__()
        except BaseException:
            self.reaper.close()
            raise
        c = self.cluster
        if self.progress:
            self.progress(f"emulated cluster {c.tag}: {c.size} hosts on {c.subnet}, "
                          + (f"links {c.link_rate} (burst {c.burst} B)" if c.burst
                             else "links uncapped (no tbf)") + f", TCP {c.congestion_control}")
            note = cut_packets_note(c.rate_bits, c.burst)
            if note:
                self.progress("note: " + note)
        return c

    def __exit__(self, *exc):
        try:
            self.cluster.__exit__(*exc)
        finally:
            self.reaper.close()
        return False


def simulate(plan: list[Probe], platform, out_dir: Path) -> list[str]:
    """The same probes simulated on `platform` by the engine, written as hopsim JSON
    into out_dir/<probe>/result.json (the files a live campaign would leave): what the
    tests feed to calibrate to check that the campaign recovers a known platform."""
    from ..api import simulate as run

    files = []
    for probe in plan:
        r = run(platform, probe.workload, ranks=probe.ranks, ranks_per_node=probe.ranks_per_node,
                seed=probe.seed, **probe.params)
        folder = Path(out_dir) / probe.folder
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "result.json").write_text(r.to_json() + "\n")
        files.append(str(folder / "result.json"))
    return files


def main(argv=None) -> int:
    """python -m hopsim.calibration.campaign --platform P --hosts H --out DIR: the
    campaign's files as the engine gives them on P (to check what calibrate recovers)."""
    import argparse

    from .. import platforms

    ap = argparse.ArgumentParser(prog="python -m hopsim.calibration.campaign",
                                 description=main.__doc__)
    ap.add_argument("--platform", required=True, help="preset or platform TOML file")
    ap.add_argument("--hosts", type=int, default=MAX_HOSTS, help=f"2 to {MAX_HOSTS} (default {MAX_HOSTS})")
    ap.add_argument("--out", required=True, help="a folder that does not exist yet")
    args = ap.parse_args(argv)
    try:
        out = Path(args.out)
        if out.exists():
            raise InputError(f"--out: {out} exists")
        plan = probes(args.hosts)
        platform = platforms.load(args.platform)
        # The campaign's hosts on that network: as many nodes, two cores each at least.
        platform = platform.replace(nodes=max(platform.nodes, args.hosts),
                                    cores=max(platform.cores, 2))
        out.mkdir(parents=True)
        try:
            for f in simulate(plan, platform, out):
                print(f)
        except BaseException:
            shutil.rmtree(out, ignore_errors=True)
            raise
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
