"""Live runs of the real tools on three emulated rigs, for validation across rigs.

    nice -n -15 python -m hopsim.calibration.rigs --out docs/validation/rigs \\
        --tools DIR [--rigs A,B,C] [--trials 3] [--baseline]

DIR holds the third-party binaries built from their public sources (IMB-MPI1,
osu_latency, osu_bw, latency_checker; docs/validation/rigs/README.md says how);
NPopenmpi comes from Debian's netpipe-openmpi (PATH). On each rig (one emulated
cluster of 4 hosts, kept up for the rig's runs, named 'rigs...'), every case of CASES,
`--trials` times, interleaved (trial 1 of every case, then trial 2, ...). Each run's raw
output, the tool's own text (NetPIPE's -o file), goes to OUT/<rig>/<file> as CASES
names it; OUT/<rig>/runs.json records the exact command, the load average before and
after, the seconds taken and whether hopsim's parser reads the file. A file already
there is kept (delete it to measure it again). With --baseline, OUT/README.md also gets
the table of calibrate-on-2-hosts, validate-the-4-host-files (calibration/rigs_report.py).
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..interrupt import forget_handled_interrupt

HOSTS = 4  # every rig's cluster; 2-host cases use its first two hosts
# hopsim's own 2-host exchange with the NIC queue sampled (live --sample-nic-queue): what a
# rendezvous's control message finds queued ahead of it, which no tool's output shows.
# One run, on its own 2-host cluster with the rig's links; a rig without tbf has no queue.
NIC_QUEUE_PROBE = Path("nic-queue-2x1/result.json")
NIC_QUEUE_SIZES = (65536, 131072, 262144, 524288, 1048576)


@dataclass(frozen=True)
class Rig:
    name: str
    link_rate: str  # tc syntax, or "none": no tbf
    burst: int | None  # tbf burst in bytes (None: uncapped)
    why: str
    # The hosts' TCP congestion control; None: this machine's default (bbr here, which
    # every rig before N ran with).
    congestion_control: str | None = None


# They differ in what the calibration has to decide: a rate a decade apart, a bucket
# smaller than one 16 KiB message against one that holds a whole 1 MiB message, and no
# tbf at all (only this machine's packet processing, shared by every host).
RIGS = {
    "A": Rig("A", "100mbit", 16384, "100 Mbit/s, a burst of 16 KiB (1.3 ms of traffic): "
                                   "every message beyond a few packets runs at the tbf rate"),
    "B": Rig("B", "1gbit", 1048576, "1 Gbit/s, a burst of 1 MiB (8.4 ms): a full bucket "
                                    "passes a whole 1 MiB message at the veth's speed"),
    "C": Rig("C", "none", None, "uncapped: no tbf; the hosts share this machine's 2 cores "
                                "for packet processing"),
    # Added after the calibration's last change (2026-11-27) and measured once, to check
    # it on a rig it was not tuned on: run it explicitly (--rigs D).
    "D": Rig("D", "400mbit", 131072, "400 Mbit/s, a burst of 128 KiB (2.6 ms of traffic), "
                                     "between A and B in both: held out from every change"),
    # Added in the session after D's last change (2026-11-27, 23:30 UTC) and measured once,
    # then fitted and predicted with no calibration change made after seeing them: new
    # pairs of rate and burst inside the range of the rigs users report (100 Mbit/s to
    # 1 Gbit/s). Run them explicitly (--rigs E,F).
    "E": Rig("E", "250mbit", 32768, "250 Mbit/s, a burst of 32 KiB (1.0 ms of traffic): a small "
                                    "burst at a middle rate: held out from every change"),
    "F": Rig("F", "700mbit", 524288, "700 Mbit/s, a burst of 512 KiB (6.0 ms of traffic): a "
                                     "large burst at a high rate: held out from every change"),
    # Added 2026-11-28 after the per-connection NIC queue shares (the engine change that
    # the cyclic runs of A, D and E motivated) and measured once, to check that change on
    # a rig it was not designed on: run it explicitly (--rigs G).
    "G": Rig("G", "500mbit", 65536, "500 Mbit/s, a burst of 64 KiB (1.0 ms of traffic, under "
                                    "the rate/HZ tbf needs): held out from every change"),
    # Added 2026-11-28 (third session) to test why G missed: G's links with a burst a
    # little above one 64 KiB GSO packet (tbf segments every larger packet to MSS size,
    # docs/validation/rigs-idle/README.md "Rig H"); nothing in the calibration changed.
    "H": Rig("H", "500mbit", 72000, "500 Mbit/s, a burst of 72000 B: G's links with a burst "
                                    "just above one 64 KiB GSO packet"),
    # Added 2026-11-29 (eleventh session), measured once and predicted with the calibration
    # as committed before their measurement (bc29b38), nothing changed after seeing them:
    # two more pairs of rate and burst no rig had, a large burst at a low rate and a
    # middle burst at a high rate. Run them explicitly (--rigs I,J).
    "I": Rig("I", "150mbit", 262144, "150 Mbit/s, a burst of 256 KiB (14 ms of traffic): a "
                                     "large burst at a low rate: held out from every change"),
    "J": Rig("J", "800mbit", 163840, "800 Mbit/s, a burst of 160 KiB (1.6 ms of traffic): a "
                                     "middle burst at a high rate: held out from every change"),
    # Added 2026-11-29 (fourteenth session), measured once and predicted with the
    # calibration as committed before its measurement: a rate above every other rig's
    # (B's 1 Gbit/s), outside the range the calibration was developed on. Run it
    # explicitly (--rigs K).
    "K": Rig("K", "1200mbit", 393216, "1.2 Gbit/s, a burst of 384 KiB (2.6 ms of traffic): a "
                                      "rate above every other rig's: held out from every change"),
    # Added the same session, before it is measured, to place the boundary between E
    # (250 Mbit/s, 32 KiB: met) and G (500 Mbit/s, 64 KiB: missed): a burst under one GSO
    # packet at 350 Mbit/s. By machine-cpu/README.md's 10-12 ms of CPU per MiB of cut
    # packets, 4 hosts at the rate need about 1.8 of this machine's 2 cores: expected to
    # miss the way G does. Run it explicitly (--rigs L).
    "L": Rig("L", "350mbit", 49152, "350 Mbit/s, a burst of 48 KiB (1.1 ms of traffic, under "
                                    "one GSO packet): between E and G: held out from every change"),
    # Added 2026-11-29 (fifteenth session), committed before it is measured and predicted
    # with the calibration as committed then: a rate above K's, where 4 hosts together
    # move up to 8 Gbit/s through this machine (C, uncapped, reached about 19 Gbit/s in
    # its 2-host exchange). Expected beforehand: the median target met, the --map-by node
    # IMB files fast at 64-256 KiB as J's and K's are (Open MPI's rendezvous with four
    # connections per node), latency_checker's 4000 B under the ping-pong's n½ (not
    # counted). Run it explicitly (--rigs M).
    "M": Rig("M", "2gbit", 262144, "2 Gbit/s, a burst of 256 KiB (1.0 ms of traffic): a rate "
                                   "above K's: held out from every change"),
    # Added on 2026-11-29 (sixteenth session), after measuring by hand (docs/live.md) that
    # the --map-by node IMB files' misses at 64-256 KiB on the fast rigs are BBR's, this
    # machine's default congestion control, and vanish with cubic (Linux's own default):
    # K's links with cubic. Expected beforehand, with the calibration as committed: the
    # 2-host files as K's (both congestion controls gave the same on 2 hosts of one rank
    # each), so a fit like K's; the --map-by node IMB files within 10% at 64-256 KiB (K's:
    # 36-51% fast), which were measured by hand already; the other 4-host files as K's
    # (2.7% (14.5%)); both targets. Run it explicitly (--rigs N).
    "N": Rig("N", "1200mbit", 393216, "K's links with TCP cubic instead of this machine's bbr: "
                                      "the congestion control alone changed",
             congestion_control="cubic"),
    # Added after N (same session), to check N's result at a rate and burst no rig has:
    # 600 Mbit/s, 192 KiB, cubic. Expected beforehand, with the calibration as committed:
    # the median target met and the --map-by node IMB files within 10% from 64 KiB (as
    # N's); latency_checker's 4000 B above the ping-pong's n½ here (about 2-3 KB at this
    # rate), so counted, and its 8-rank files 6-25% slow as on D, F, H and J (the
    # scheduler's, not TCP's): the per-file target may miss on them. Run it explicitly
    # (--rigs O).
    "O": Rig("O", "600mbit", 196608, "600 Mbit/s, a burst of 192 KiB (2.6 ms of traffic), TCP "
                                     "cubic: N's check at a rate and burst no rig has",
             congestion_control="cubic"),
    # Added 2026-11-29 (seventeenth session), committed before it is measured: a rate and
    # burst no rig has, with this machine's bbr (as a user's emulated rig would run by
    # default), after the header bound. Nearest rig: J (800 Mbit/s, 160 KiB). Expected
    # beforehand, with the calibration as committed: the median target met; the --map-by
    # node IMB files fast at 64-256 KiB under bbr as J's (per-file 1-15%), possibly the
    # worst; latency_checker's 4000 B counted as on J, its 8-rank files 4-15% off (the
    # scheduler's). The per-file target: open. Run it explicitly (--rigs P).
    "P": Rig("P", "900mbit", 98304, "900 Mbit/s, a burst of 96 KiB (0.87 ms of traffic, above "
                                    "one GSO packet), TCP bbr: held out from every change"),
    # Added after P (same session), committed before it is measured: twice M's rate, where
    # 4 hosts together may send 16 Gbit/s, near what this machine moved uncapped (C's
    # 4-host exchanges: 20-28 Gbit/s). Expected beforehand: the 2-host files fitted as M's;
    # where the machine binds, the 4-host IMB files from 256 KiB up to 25% fast (hopsim's
    # hosts each have the fitted rate); the median target held unless it binds from 64 KiB;
    # latency_checker not counted (4000 B under n½ at this rate). Run it explicitly
    # (--rigs Q).
    "Q": Rig("Q", "4gbit", 524288, "4 Gbit/s, a burst of 512 KiB (1.0 ms of traffic), TCP bbr: "
                                   "twice M's rate, near this machine's limit: held out from every change"),
    # Added in the eighteenth session, committed before it is measured: twice Q's rate, to
    # find where this machine stops being a cluster. Expected beforehand: 2 hosts need
    # 16 Gbit/s both ways at most, near what C's 2-host exchange moved uncapped (about
    # 19 Gbit/s at 1 MiB), so the 2-host files fit the tbf's rate or a little under it;
    # 4 hosts would need 32-64 Gbit/s where C's moved 19-28: the machine binds, and
    # hopsim, whose hosts each keep the fitted rate, predicts the 4-host IMB files from
    # 256 KiB 30-60% fast, as on C: neither target. latency_checker not counted (4000 B
    # under n½ at this rate). Run it explicitly (--rigs R).
    "R": Rig("R", "8gbit", 1048576, "8 Gbit/s, a burst of 1 MiB (1.0 ms of traffic), TCP bbr: "
                                    "twice Q's rate, above what this machine moves: held out from every change"),
    # Added in the nineteenth session, committed before it is measured: issue 16's third
    # rig's regime, which no rig here had: a burst under one GSO packet (tbf cuts every
    # packet to MTU size, 10-12 ms of CPU per MiB: machine-cpu/README.md) at a rate where
    # even 2 hosts exchanging need more packet processing than the 2 cores have (about
    # 2.6 cores at 1 Gbit/s each way), so the 2-host exchange shows the machine's limit
    # (the issue: "about 1.4 Gbit/s"). Expected beforehand, with the calibration as
    # committed: the fit finds a shared capacity, per-node limiter or backbone undecided
    # on 2 hosts, and writes the per-node limiter, under which 4 hosts move twice what 2
    # do; live the machine's limit is shared by all 4: the 4-host IMB files from 64 KiB
    # 40-100% fast, neither target; the backbone runner-up closer. Run it explicitly
    # (--rigs S).
    "S": Rig("S", "1gbit", 32768, "1 Gbit/s, a burst of 32 KiB (0.26 ms of traffic, under one "
                                  "GSO packet): 2 hosts exchanging already need more packet "
                                  "processing than this machine has: held out from every change"),
    # Added 2026-11-30 (twenty-sixth session), committed before it is measured and
    # predicted with the calibration as committed (every rig's fit made by today's code):
    # a bucket that holds a whole 1 MiB message at a low rate (B's burst at 0.3 of B's
    # rate: 28 ms of traffic), with cubic. Expected beforehand: a fit like B's (a bucket
    # at about the tbf's rate and size); the IMB files within 10% (B's within 3%); the
    # ping-pong's n½ 1-3 KB, so latency_checker's 4000 B counted and its 8-rank files
    # 10-30% off, the scheduler's (as on D, F, H, I, O): the median target met, the
    # per-file one likely missed on them. Run it explicitly (--rigs T).
    "T": Rig("T", "300mbit", 1048576, "300 Mbit/s, a burst of 1 MiB (28 ms of traffic), TCP cubic: "
                                      "a bucket that holds the largest message, at a low rate: "
                                      "held out from every change",
             congestion_control="cubic"),
    # Added with T, committed before it is measured: between K (1.2 Gbit/s, 384 KiB) and
    # M (2 Gbit/s, 256 KiB) with a smaller bucket (0.7 ms of traffic, above one GSO
    # packet), this machine's bbr. Expected beforehand: a fit like M's; latency_checker's
    # 4000 B under the ping-pong's n½ (about 5-8 KB at this rate), not counted at 8 ranks;
    # the --map-by node IMB files fast at 64-128 KiB under bbr (K's, M's, P's: 15-50%
    # there), per file 5-15%: the median target met, the per-file one open. Run it
    # explicitly (--rigs U).
    "U": Rig("U", "1500mbit", 131072, "1.5 Gbit/s, a burst of 128 KiB (0.7 ms of traffic), TCP "
                                      "bbr: between K and M, a smaller bucket: held out from "
                                      "every change"),
}


@dataclass(frozen=True)
class Case:
    tool: str  # file name's tool part
    fmt: str  # hopsim's parser
    binary: str
    hosts: int
    per_host: int
    placement: str  # block (Open MPI's ppr:K:node) or cyclic (--map-by node)
    args: tuple[str, ...]

    @property
    def ranks(self) -> int:
        return self.hosts * self.per_host

    def file(self, trial: int) -> str:
        place = "block" if self.placement == "block" else "node"
        return f"{self.tool}-{self.hosts}x{self.per_host}-{place}-t{trial}.txt"


# Sizes to 1 MiB (osu_bw to 128 KiB: its 64-message windows are 8 MiB there, 0.7 s each
# at 100 Mbit/s). IMB: at most 200 repetitions and 10 MB per size (-iter 200,10: 10
# repetitions of 1 MiB; `-time 1` made IMB give up mid-table, tests/data/imb/*timeout*);
# -npmin runs only the full communicator.
LC_ARGS = ("-message-size", "4000", "-exchanges", "300")
CASES = (
    Case("imb-pingpong", "imb", "IMB-MPI1", 2, 1, "block", ("PingPong", "-msglog", "0:20", "-iter", "200,10")),
    Case("imb-exchange", "imb", "IMB-MPI1", 2, 1, "block",
         ("Exchange", "-npmin", "2", "-msglog", "0:20", "-iter", "200,10")),
    Case("osu_latency", "osu", "osu_latency", 2, 1, "block", ("-m", "0:1048576", "-i", "50", "-x", "5")),
    Case("osu_bw", "osu", "osu_bw", 2, 1, "block", ("-m", "1:131072", "-i", "20", "-x", "2")),
    Case("latency_checker", "latency_checker", "latency_checker", 2, 1, "block", LC_ARGS),
    Case("netpipe", "netpipe", "NPopenmpi", 2, 1, "block", ("-u", "1048576")),
    # Two ranks per host on the same 2 hosts, both placements (added 2026-11-28): the
    # 2-host runs where a node's link carries two connections (block) and four (cyclic),
    # as in the 4-host runs. From 64 KiB only: smaller sizes with 4 ranks on this
    # machine's 2 cores measure its scheduler (IMB prints size 0 regardless).
    *(Case("imb-exchange", "imb", "IMB-MPI1", 2, 2, placement,
           ("Exchange", "-npmin", "4", "-msglog", "16:20", "-iter", "200,10"))
      for placement in ("block", "cyclic")),
    Case("imb-exchange", "imb", "IMB-MPI1", 4, 1, "block",
         ("Exchange", "-npmin", "4", "-msglog", "0:20", "-iter", "200,10")),
    Case("imb-exchange", "imb", "IMB-MPI1", 4, 2, "block",
         ("Exchange", "-npmin", "8", "-msglog", "0:20", "-iter", "200,10")),
    Case("imb-exchange", "imb", "IMB-MPI1", 4, 2, "cyclic",
         ("Exchange", "-npmin", "8", "-msglog", "0:20", "-iter", "200,10")),
    Case("latency_checker", "latency_checker", "latency_checker", 4, 1, "block", LC_ARGS),
    Case("latency_checker", "latency_checker", "latency_checker", 4, 2, "block", LC_ARGS),
    Case("latency_checker", "latency_checker", "latency_checker", 4, 2, "cyclic", LC_ARGS),
    # Collectives (issue 19): the 2-host files calibrate the reduction's cost, the 4-host
    # ones are predicted. Open MPI's own algorithm choice (coll/tuned's fixed rules).
    *(Case(f"imb-{coll.lower()}", "imb", "IMB-MPI1", hosts, per_host, "block",
           (coll, "-npmin", str(hosts * per_host), "-msglog", "0:20", "-iter", "200,10"))
      for coll in ("Alltoall", "Allreduce") for hosts, per_host in ((2, 1), (4, 1), (4, 2))),
)


def mpirun_command(case: Case, cluster_args: list[str], hostfile: str, binary: str,
                   np_out: str | None = None) -> list[str]:
    """Every rank yields its core while it waits (mpi_yield_when_idle): 8 busy-polling
    ranks on 2 cores would measure the scheduler, and a spinning rank at nice -15
    starves the kernel's packet processing (docs/validation.md)."""
    mapping = f"ppr:{case.per_host}:node" if case.placement == "block" else "node"
    cmd = ["mpirun", "-np", str(case.ranks), *cluster_args, "--mca", "mpi_yield_when_idle", "1",
           "--hostfile", hostfile, "--map-by", mapping, binary, *case.args]
    if case.fmt == "netpipe":
        cmd += ["-o", np_out]
    return cmd


def find_binaries(tools_dir: Path, cases=CASES) -> dict[str, str]:
    found = {}
    for name in sorted({c.binary for c in cases}):
        path = tools_dir / name
        if path.is_file() and os.access(path, os.X_OK):
            found[name] = str(path.resolve())
        elif shutil.which(name):
            found[name] = shutil.which(name)
        else:
            raise InputError(f"--tools: {name} is neither in {tools_dir} nor on PATH")
    return found


def _hostfile(cluster, hosts: int, slots: int) -> str:
    path = cluster.dir / f"hostfile-{hosts}x{slots}"
    path.write_text("".join(f"{addr} slots={slots}\n" for _, addr in cluster.hosts[:hosts]))
    return str(path)


def _kill_group(proc) -> None:
    """mpirun and everything it started on this side (its session)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def _env() -> dict:
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


def placement_check(cluster, out: Path) -> None:
    """Where Open MPI put each rank of the 4x2 cases, both placements: the evidence
    that --map-by node is round-robin."""
    lines = []
    for placement in ("block", "cyclic"):
        case = Case("check", "", "sh", HOSTS, 2, placement, ())
        cmd = mpirun_command(case, cluster.mpirun_args(), _hostfile(cluster, HOSTS, 2), "sh")
        cmd += ["-c", 'echo "rank $OMPI_COMM_WORLD_RANK on $(hostname)"']
        p = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=60)
        lines.append(f"# {placement}: {shlex.join(cmd)}")
        lines += sorted(p.stdout.splitlines(), key=lambda l: int(l.split()[1]) if l.split()[1:2]
                        and l.split()[1].isdigit() else -1)
    (out / "placement-check.txt").write_text("\n".join(lines) + "\n")


def run_case(case: Case, trial: int, cluster, binaries, out: Path, timeout: float) -> dict:
    from .parsers import parse_text

    target = out / case.file(trial)
    np_out = str(cluster.dir / "np.out")
    cmd = mpirun_command(case, cluster.mpirun_args(), _hostfile(cluster, case.hosts, case.per_host),
                         binaries[case.binary], np_out)
    cmd[0] = shutil.which("mpirun") or "mpirun"
    if os.path.exists(np_out):
        os.unlink(np_out)
    load = os.getloadavg()
    start = time.time()
    status, stdout, stderr = None, "", ""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(), start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
        status = proc.returncode
    except subprocess.TimeoutExpired:
        stderr = f"timeout after {timeout:g} s"
    finally:
        _kill_group(proc)
    seconds = time.time() - start
    text = Path(np_out).read_text() if case.fmt == "netpipe" and os.path.exists(np_out) else stdout
    entry = {"file": target.name, "trial": trial, "command": shlex.join(cmd),
             "load_before": [round(x, 2) for x in load],
             "load_after": [round(x, 2) for x in os.getloadavg()],
             "seconds": round(seconds, 1), "status": status,
             "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start))}
    if status == 0 and text.strip():
        target.write_text(text)
        try:
            entry["parsed"] = len(parse_text(text, target.name, case.fmt))
        except InputError as e:
            entry["parse_error"] = str(e)
    else:
        entry["stderr_tail"] = stderr.strip()[-600:]
    return entry


def measure(rig: Rig, out: Path, binaries, trials: int, timeout: float, log=sys.stderr,
            only: str = "*", cases=CASES) -> list[dict]:
    """only: a glob on the file names (trial part included): the cases to run when missing;
    cases: which (rigs_collectives measures its own into another folder)."""
    from ..live.cluster import EmulatedCluster

    out.mkdir(parents=True, exist_ok=True)
    runs_path = out / "runs.json"
    runs = json.loads(runs_path.read_text()) if runs_path.is_file() else []
    todo = [(t, c) for t in range(1, trials + 1) for c in cases
            if not (out / c.file(t)).is_file() and fnmatch.fnmatch(c.file(t), only)]
    if not todo:
        return runs
    with EmulatedCluster(HOSTS, rig.link_rate, rig.burst, prefix="rigs",
                         congestion_control=rig.congestion_control) as cluster:
        log.write(f"rig {rig.name}: cluster {cluster.tag}, {rig.link_rate}, burst {rig.burst}, "
                  f"TCP {cluster.congestion_control}\n")
        placement_check(cluster, out)
        for trial, case in todo:
            entry = run_case(case, trial, cluster, binaries, out, timeout)
            runs = [r for r in runs if r["file"] != entry["file"]] + [entry]
            runs_path.write_text(json.dumps(runs, indent=1) + "\n")
            log.write(f"[{entry['started_utc']} load {entry['load_before'][0]:.2f}] {rig.name} "
                      f"{entry['file']}: status {entry['status']}, {entry['seconds']} s"
                      f"{', PARSE ERROR ' + entry['parse_error'] if 'parse_error' in entry else ''}\n")
            log.flush()
    return runs


def measure_campaign(rig: Rig, out: Path, tools_dir: Path, log=sys.stderr) -> None:
    """calibrate --live --campaign's probes on 3 of the rig's hosts (its own cluster, the
    same link shaping), into OUT/<rig>/campaign-3hosts/<probe>/: among them the pairwise
    alltoall that tells a per-node limiter from a backbone (rigs_report.ALLTOALL). Kept
    when there; written under a .partial name until every probe has run, removed if one
    fails or is interrupted."""
    from .campaign import probes
    from .campaign import measure as run_probes

    done = out / "campaign-3hosts"
    if done.is_dir():
        return
    partial = done.with_name(done.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        run_probes(probes(3), partial, emulate_cluster=3, link_rate=rig.link_rate,
                   burst=rig.burst, tools_dir=str(tools_dir), prefix="rigc",
                   congestion_control=rig.congestion_control,
                   progress=lambda m: (log.write(f"{rig.name} campaign: {m}\n"), log.flush()))
    except BaseException:
        # Unlike the rig's own files (each kept, a rerun measures the rest), the probes
        # are kept only as a whole.
        shutil.rmtree(partial, ignore_errors=True)
        raise
    partial.rename(done)


def measure_nic_queue(rig: Rig, out: Path, log=sys.stderr) -> None:
    """OUT/<rig>/nic-queue-2x1/: hopsim live's exchange on 2 hosts of the rig's links with
    the NIC queue sampled (kept when there; none for a rig without tbf)."""
    from ..live.mpirun import run_live

    done = out / NIC_QUEUE_PROBE
    if rig.burst is None or done.is_file():
        return
    log.write(f"{rig.name}: 2-host exchange, NIC queue sampled\n")
    log.flush()
    run_live("exchange", 2, emulate_cluster=2, link_rate=rig.link_rate, burst=rig.burst,
             out=str(done.parent), sizes=list(NIC_QUEUE_SIZES), sample_nic_queue=True,
             congestion_control=rig.congestion_control)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def rig_names(spec: str, trials: int) -> list[str]:
    """--rigs and --trials as the rigs tools take them (InputError when bad)."""
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not names or any(n not in RIGS for n in names):
        raise InputError(f"--rigs: expected names among {','.join(RIGS)}, got {spec!r}")
    if trials < 1:
        raise InputError(f"--trials: expected at least 1, got {trials}")
    return names


def run_guarded(prog: str, body) -> int:
    """body() with the rigs tools' contract: bad input one line and status 2; Ctrl-C or
    kill tear the cluster down (a background shell ignores SIGINT) and give 130."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        body()
    except InputError as e:
        sys.stderr.write(f"{prog}: {e}\n")
        return 2
    except KeyboardInterrupt:
        forget_handled_interrupt()
        sys.stderr.write(f"{prog}: interrupted\n")
        return 130
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hopsim.calibration.rigs",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, metavar="DIR")
    ap.add_argument("--tools", default=".", metavar="DIR",
                    help="folder of IMB-MPI1, osu_latency, osu_bw, latency_checker (default: "
                         "the current folder, then PATH)")
    ap.add_argument("--rigs", default="A,B,C", help="which rigs (default A,B,C; D to M, each added "
                    "later and held out from the calibration's changes, only when named)")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--only", default="*", metavar="GLOB",
                    help="measure only the missing files whose name matches, e.g. "
                         "'imb-exchange-2x2-*' (default: every missing file)")
    ap.add_argument("--timeout", type=float, default=300, metavar="S", help="per run (default 300)")
    ap.add_argument("--baseline", action="store_true",
                    help="then calibrate on each rig's 2-host files, validate its 4-host files "
                         "and write OUT/README.md")
    ap.add_argument("--no-measure", action="store_true", help="only the baseline and README")
    ap.add_argument("--campaign", action="store_true",
                    help="also run calibrate --live --campaign's probes on 3 of each rig's hosts "
                         "(OUT/<rig>/campaign-3hosts); the baseline then adds a fit with its "
                         "pairwise alltoall")
    ap.add_argument("--cores", type=int, default=os.cpu_count(), metavar="N",
                    help="the measuring machine's cores: latency-bound cases with more ranks "
                         "are left out of the targets (default: this machine's)")
    ap.add_argument("--refit-stale", action="store_true",
                    help="redo the fits made by other code than today's (each fit's stamp records "
                         "the sources that made it; 10-30 minutes a rig)")
    ap.add_argument("--closed-form", action="store_true",
                    help="the baseline's calibrate with --closed-form (the fitters without the "
                         "joint fit: the comparison before it)")
    args = ap.parse_args(argv)

    def body() -> None:
        names = rig_names(args.rigs, args.trials)
        if args.cores is None or args.cores < 1:
            raise InputError(f"--cores: expected at least 1, got {args.cores}")
        out = Path(args.out)
        if not args.no_measure:
            binaries = find_binaries(Path(args.tools))
            for name in names:
                measure(RIGS[name], out / name, binaries, args.trials, args.timeout, only=args.only)
                measure_nic_queue(RIGS[name], out / name)
                if args.campaign:
                    measure_campaign(RIGS[name], out / name, Path(args.tools))
        if args.baseline:
            from .rigs_report import write_report
            write_report(out, [RIGS[n] for n in names], args.trials, args.closed_form, args.cores,
                         args.refit_stale)

    return run_guarded("rigs", body)


if __name__ == "__main__":
    sys.exit(main())
