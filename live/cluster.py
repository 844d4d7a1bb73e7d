"""A small real cluster on this machine: network namespaces, a bridge, tbf-capped veths.

Each emulated host is a network namespace with one veth into a bridge of the root
namespace; the bridge holds an address on the hosts' subnet so that mpirun's daemons can
call home. Each host's link is capped in both directions with tbf (its egress inside the
namespace, its ingress on the bridge side), like the full-duplex NIC of hopsim's
platforms. Open MPI reaches the hosts through an rsh agent that enters the namespace
and a fresh UTS namespace carrying the host's own name (without it every rank would see
the same hostname and Open MPI would treat them as co-located).

Everything is named from one random tag (concurrent runs do not collide), recorded as it
is created, and removed by teardown() whatever happened: processes in the namespaces,
namespaces (with their veth ends), the bridge, the agent's folder. No /etc/hosts entry
is needed: hosts are addressed by IP.
"""
from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..errors import InputError

PREFIX = "hsm"  # every name this module creates starts with it
_RATE = re.compile(r"^(\d+(?:\.\d+)?)(bit|kbit|mbit|gbit|tbit|bps|kbps|mbps|gbps)$", re.I)
_BITS = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12,
         "bps": 8, "kbps": 8e3, "mbps": 8e6, "gbps": 8e9}


UNCAPPED = "none"  # --link-rate none: no tbf, only the machine's packet processing limits


def rate_bits(text: str) -> float | None:
    """A tc rate ("200mbit", "1gbit", "25mbps": bytes) in bits per second; None for
    "none" (an uncapped link)."""
    if str(text).strip().lower() == UNCAPPED:
        return None
    m = _RATE.match(str(text).strip())
    if not m:
        raise InputError(f"--link-rate: expected a tc rate like 200mbit or 1gbit, or none, got {text!r}")
    bits = float(m.group(1)) * _BITS[m.group(2).lower()]
    if bits < 8000:
        raise InputError(f"--link-rate: {text} is below 8 kbit/s")
    return bits


def default_burst(bits_per_s: float) -> int:
    """10 ms of traffic, at least 16 KiB: tbf needs a burst of at least rate/HZ bytes
    to reach its rate."""
    return max(16384, int(bits_per_s / 8 / 100))


# The longest packet TCP hands a veth as tbf counts it, at most: 64 KiB (the GSO limit)
# plus the headers (14 + 20 + 32 bytes) of each MTU-size segment after the first, 45 at
# most (qdisc_pkt_len). tbf cuts a packet longer than its burst into those segments
# (tbf_segment), and the receiving host then processes each on its own.
GSO_PACKET_BYTES = 65536 + 45 * 66


def cut_packets_note(bits_per_s: float | None, burst: int | None) -> str | None:
    """What a burst below one GSO packet costs an emulated cluster, or None when the
    burst passes whole packets. Measured on this machine kind
    (docs/validation/rigs-idle/gso-burst/README.md): the cut packets cost the emulated
    hosts' shared packet processing, which grows with the hosts sending at once and
    shows on no 2-host run."""
    if bits_per_s is None or burst is None or burst >= GSO_PACKET_BYTES:
        return None
    return (f"a burst of {burst} B is below one 64 KiB TCP packet (up to {GSO_PACKET_BYTES} B "
            f"as tbf counts it): tbf cuts such packets to MTU size, which costs this "
            f"machine's shared packet processing when several hosts send at once (measured: "
            f"4 hosts 1.6-2.2x slower at 1 MiB than with a 72000 B burst, 2 hosts no slower; "
            f"docs/live.md)")


_CC = Path("/proc/sys/net/ipv4")


def check_congestion_control(name: str | None) -> str | None:
    """name, if this kernel has that TCP congestion control loaded; InputError (one
    line, the loaded ones named) if not."""
    if name is None:
        return None
    loaded = (_CC / "tcp_available_congestion_control").read_text().split()
    if name not in loaded:
        raise InputError(f"--congestion-control: {name!r} is not loaded in this kernel "
                         f"(loaded: {', '.join(loaded)})")
    return name


def check_available() -> None:
    """InputError (one line) unless this process can build namespaces."""
    if os.geteuid() != 0:
        raise InputError("--emulate-cluster needs root (network namespaces, veth, tc)")
    for tool in ("ip", "tc", "unshare"):
        if shutil.which(tool) is None:
            raise InputError(f"--emulate-cluster needs the '{tool}' command (iproute2, util-linux)")


def _run(*cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {p.stderr.strip() or p.returncode}")
    return p


def _subnet_in_use() -> set[str]:
    out = _run("ip", "-4", "-o", "addr", check=False).stdout
    nets = set()
    for m in re.finditer(r"inet (\d+\.\d+\.\d+)\.\d+/", out):
        nets.add(m.group(1))
    return nets


def our_names(tag: str = PREFIX) -> dict[str, list[str]]:
    """Namespaces and links whose names start with `tag` (for teardown and tests)."""
    ns = [line.split()[0] for line in _run("ip", "netns", "list", check=False).stdout.splitlines()
          if line.startswith(tag)]
    links = re.findall(r"^\d+: (" + re.escape(tag) + r"[^:@\s]*)", _run("ip", "-o", "link", check=False).stdout,
                       re.M)
    return {"namespaces": ns, "links": links}


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def _wait_gone(pids, seconds: float) -> None:
    """SIGKILL is asynchronous: wait until the processes are dead, then reap the ones
    that were reparented to us (see become_subreaper)."""
    deadline = time.monotonic() + seconds
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def become_subreaper() -> None:
    """Ranks whose orted died are reparented to the nearest subreaper, else to PID 1,
    which in a container may never reap them (zombies would outlive the run)."""
    import ctypes

    PR_SET_CHILD_SUBREAPER = 36
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def teardown_tag(tag: str) -> None:
    """Remove what an emulated cluster tagged `tag` left (hopsim.reaper runs this when
    hopsim is killed before its own teardown): its processes, namespaces, links, folder."""
    if not re.fullmatch(r"[a-z]{1,5}[0-9a-f]{6}", tag):   # a tag EmulatedCluster made
        return
    c = EmulatedCluster.__new__(EmulatedCluster)
    c.tag, c.namespaces, c.links, c._up = tag, [], [], True
    c.dir = None
    c.teardown()
    for leftover in Path(tempfile.gettempdir()).glob(f"{tag}-*"):
        shutil.rmtree(leftover, ignore_errors=True)


def teardown_command(tag: str) -> list[str]:
    """The command a watcher (hopsim.reaper) runs to remove the cluster tagged `tag` if
    hopsim dies before its own teardown."""
    return [sys.executable, "-c", "import sys; from hopsim.live.cluster import teardown_tag; "
            "teardown_tag(sys.argv[1])", tag]


class EmulatedCluster:
    """`with EmulatedCluster(4, "200mbit") as c:` ... c.hosts, c.mpirun_args()."""

    def __init__(self, hosts: int, link_rate: str, burst: int | None = None,
                 prefix: str = PREFIX, congestion_control: str | None = None):
        """link_rate "none": no tbf at all. `prefix` starts every name (at most 5
        lowercase letters: interface names allow 15 characters). congestion_control:
        the TCP congestion control of every connection between the hosts (a route
        attribute in each namespace, `ip route ... congctl`); None leaves the kernel's
        default, which a new namespace takes from this machine's. Either way
        self.congestion_control says which, once up."""
        if not isinstance(hosts, int) or hosts < 1 or hosts > 64:
            raise InputError(f"--emulate-cluster: expected 1 to 64 hosts, got {hosts!r}")
        if not re.fullmatch(r"[a-z]{1,5}", prefix):
            raise InputError(f"cluster name prefix: expected 1 to 5 lowercase letters, got {prefix!r}")
        self.rate_bits = rate_bits(link_rate)
        self.link_rate = link_rate
        if burst is not None and (not isinstance(burst, int) or burst < 1500):
            raise InputError(f"--burst: expected at least 1500 bytes, got {burst!r}")
        if self.rate_bits is None:
            if burst is not None:
                raise InputError("--burst: an uncapped link (--link-rate none) has no tbf burst")
            self.burst = None
        else:
            self.burst = burst if burst is not None else default_burst(self.rate_bits)
        self._congestion_control = check_congestion_control(congestion_control)
        self.congestion_control: str | None = None
        check_available()
        become_subreaper()
        self.tag = prefix + secrets.token_hex(3)  # at most 11 characters, 14 with suffixes
        self.size = hosts
        self.bridge = f"{self.tag}br"
        self.namespaces: list[str] = []
        self.links: list[str] = []
        self.hosts: list[tuple[str, str]] = []  # (name, address)
        self.dir: Path | None = None
        self.subnet = ""
        self._up = False

    # -- set-up -------------------------------------------------------------------
    def __enter__(self):
        try:
            self.up()
        except BaseException:
            self.teardown()
            raise
        return self

    def __exit__(self, *exc):
        self.teardown()
        return False

    def up(self):
        used = _subnet_in_use()
        for _ in range(64):
            base = f"10.{200 + secrets.randbelow(50)}.{secrets.randbelow(250) + 1}"
            if base not in used:
                break
        else:
            raise RuntimeError("no free 10.x.y.0/24 subnet for the emulated cluster")
        self.subnet = f"{base}.0/24"
        self.dir = Path(tempfile.mkdtemp(prefix=f"{self.tag}-"))
        _run("ip", "link", "add", self.bridge, "type", "bridge")
        self.links.append(self.bridge)
        _run("ip", "addr", "add", f"{base}.254/24", "dev", self.bridge)
        _run("ip", "link", "set", self.bridge, "up")
        for i in range(self.size):
            ns, outside, inside = f"{self.tag}-h{i}", f"{self.tag}o{i}", f"{self.tag}i{i}"
            name, addr = f"{self.tag}-h{i}", f"{base}.{i + 1}"
            _run("ip", "netns", "add", ns)
            self.namespaces.append(ns)
            _run("ip", "link", "add", outside, "type", "veth", "peer", "name", inside)
            self.links.append(outside)
            _run("ip", "link", "set", inside, "netns", ns)
            _run("ip", "link", "set", outside, "master", self.bridge)
            _run("ip", "link", "set", outside, "up")
            nx = ("ip", "netns", "exec", ns)
            _run(*nx, "ip", "link", "set", "lo", "up")
            _run(*nx, "ip", "addr", "add", f"{addr}/24", "dev", inside)
            _run(*nx, "ip", "link", "set", inside, "up")
            if self._congestion_control is not None:
                # Per route, not the namespace's sysctl: a namespace may default only to
                # the algorithms this machine allows every user (tcp_allowed_congestion_control).
                _run(*nx, "ip", "route", "replace", self.subnet, "dev", inside, "proto", "kernel",
                     "scope", "link", "src", addr, "congctl", self._congestion_control)
            # Both directions of the host's link: egress in the namespace, ingress on the
            # bridge side (the veth end's egress towards the host).
            if self.rate_bits is not None:
                tbf = ("root", "tbf", "rate", f"{int(self.rate_bits)}bit", "burst",
                       str(self.burst), "latency", "100ms")
                _run(*nx, "tc", "qdisc", "add", "dev", inside, *tbf)
                _run("tc", "qdisc", "add", "dev", outside, *tbf)
            self.hosts.append((name, addr))
        self.congestion_control = self._congestion_control or _run(
            "ip", "netns", "exec", self.namespaces[0], "cat",
            str(_CC / "tcp_congestion_control")).stdout.strip()
        self._write_agent()
        self._up = True

    def _write_agent(self):
        lines = ["#!/bin/sh", "# Open MPI's rsh agent: run the command inside the host's namespace.",
                 'host="$1"; shift', 'case "$host" in']
        for (name, addr), ns in zip(self.hosts, self.namespaces):
            lines.append(f'  {addr}|{name}) ns={ns}; hn={name} ;;')
        lines += ['  *) echo "no emulated host $host" >&2; exit 1 ;;', "esac",
                  'exec ip netns exec "$ns" unshare --uts sh -c \'hostname "$0"; exec sh -c "$*"\' "$hn" "$@"']
        agent = self.dir / "rsh-agent"
        agent.write_text("\n".join(lines) + "\n")
        agent.chmod(0o755)
        self.agent = agent

    def hostfile(self, slots: int, hosts: int | None = None) -> Path:
        """An Open MPI hostfile of the first `hosts` hosts (default all), `slots` each."""
        path = self.dir / "hostfile"
        path.write_text("".join(f"{addr} slots={slots}\n" for _, addr in self.hosts[:hosts]))
        return path

    def addresses(self) -> list[str]:
        """Each host's address, as the hostfile names it (node i is host i)."""
        return [addr for _, addr in self.hosts]

    def mpirun_args(self) -> list[str]:
        """The recipe of docs/live.md, "The emulated cluster": the agent, direct routing, tcp only, this subnet,
        no binding (each "host" would bind its rank to core 0)."""
        return ["--mca", "plm_rsh_agent", str(self.agent), "--mca", "routed", "direct",
                "--mca", "btl", "tcp,vader,self", "--mca", "btl_tcp_if_include", self.subnet,
                "--mca", "oob_tcp_if_include", self.subnet, "--bind-to", "none"]

    # -- teardown -----------------------------------------------------------------
    def teardown(self):
        """Remove everything of this run; safe to call twice and after a partial set-up.
        Signals are held off meanwhile, so a second Ctrl-C cannot cut it short."""
        old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            for s in old:
                signal.signal(s, signal.SIG_IGN)
        except ValueError:  # not the main thread
            old = {}
        try:
            names = our_names(self.tag)
            namespaces = list(dict.fromkeys(self.namespaces + names["namespaces"]))
            killed: set[int] = set()
            for _ in range(5):
                pids = set()
                for ns in namespaces:
                    pids |= {int(p) for p in _run("ip", "netns", "pids", ns, check=False).stdout.split()}
                if not pids:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                killed |= pids
                time.sleep(0.05)
            _wait_gone(killed, 5.0)
            for ns in namespaces:
                _run("ip", "netns", "del", ns, check=False)
            for link in dict.fromkeys(self.links + our_names(self.tag)["links"]):
                _run("ip", "link", "del", link, check=False)
            if self.dir is not None:
                shutil.rmtree(self.dir, ignore_errors=True)
            self.namespaces, self.links, self._up = [], [], False
        finally:
            for s, h in old.items():
                signal.signal(s, h)
