"""Every number a user can give hopsim, with its bounds: the one place they are checked.

A platform key, a workload parameter, a CLI flag and a scenario key all land here before
anything runs, so a value outside its bounds is a one-line InputError naming it, never a
pybind cast error, a SimGrid abort, an allocation failure or a run that never ends.

Registering a new key is one line in BOUNDS: its name as a user writes it (a platform
file key "section.key", or a workload parameter), its type, its range, its unit and why
the range is what it is. tests/test_properties.py fails for a numeric platform key that
has no line here, and docs/platforms.md's bounds table is generated from BOUNDS
(`python -m hopsim.bounds`; a test checks the document matches).

The run's memory is bounded too: memory_estimate() (the formula is in its docstring)
against the memory this machine has available, before the engine forks.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

from .errors import InputError

# The engine's types (simulator/spec.hpp): rank counts, degrees and node counts are C++
# int; byte counts and repetitions are int64 but the real tools hold them in an int.
INT32_MAX = 2**31 - 1
UINT64_MAX = 2**64 - 1
# SimGrid's time precision (surf/precision, 1e-9 s): a nonzero time below it is rounded
# to nothing or trips the solver's asserts (latency_us = 1e-308 aborts SimGrid).
MIN_TIME_US = 1e-3
# An hour per message-level cost is beyond any machine; above it, sums over a run's
# messages approach the range where doubles lose the microseconds the tools print.
MAX_TIME_US = 3.6e9
# 1 kbit/s to 1 Pbit/s: outside, SimGrid's max-min solver loses precision (1e308 aborts).
MIN_GBPS, MAX_GBPS = 1e-6, 1e6
MAX_NODES = 2**20       # hosts SimGrid builds up front, whether ranks use them or not
MAX_CORES = 2**16


@dataclass(frozen=True)
class Bound:
    """A value's type ("int" or "float"), its inclusive range, whether 0 is allowed
    besides the range (an ideal wire, a free host operation), its unit and the reason."""

    kind: str
    low: float
    high: float
    unit: str
    why: str
    zero: bool = False

    def describe(self) -> str:
        rng = f"{_fmt(self.low)} to {_fmt(self.high)}"
        return f"0 or {rng}" if self.zero else rng


_TIME = "SimGrid's 1 ns time precision to an hour"
BOUNDS: dict[str, Bound] = {
    # Platform files (also Platform fields and scenario platform_overrides).
    "nodes.count": Bound("int", 1, MAX_NODES, "nodes", "SimGrid builds every host up front"),
    "nodes.cores": Bound("int", 1, MAX_CORES, "cores", "ranks per node, a C++ int per rank slot"),
    "network.latency_us": Bound("float", MIN_TIME_US, MAX_TIME_US, "us", _TIME, zero=True),
    "network.bandwidth_gbps": Bound("float", MIN_GBPS, MAX_GBPS, "Gbit/s", "1 kbit/s to 1 Pbit/s: SimGrid's solver range"),
    "network.backbone_gbps": Bound("float", MIN_GBPS, MAX_GBPS, "Gbit/s", "0: no backbone; else as bandwidth", zero=True),
    "network.limiter_gbps": Bound("float", MIN_GBPS, MAX_GBPS, "Gbit/s", "0: no limiter; else as bandwidth", zero=True),
    "intranode.latency_us": Bound("float", MIN_TIME_US, MAX_TIME_US, "us", _TIME, zero=True),
    "intranode.bandwidth_gbps": Bound("float", MIN_GBPS, MAX_GBPS, "Gbit/s", "1 kbit/s to 1 Pbit/s: SimGrid's solver range"),
    "host.send_overhead_us": Bound("float", MIN_TIME_US, MAX_TIME_US, "us", _TIME, zero=True),
    "host.recv_overhead_us": Bound("float", MIN_TIME_US, MAX_TIME_US, "us", _TIME, zero=True),
    "host.per_byte_overhead_ns": Bound("float", 1e-6, 1e6, "ns/byte", "1 ns per MB to 1 ms per byte", zero=True),
    "host.gap_us": Bound("float", MIN_TIME_US, MAX_TIME_US, "us", _TIME, zero=True),
    "host.pass_us": Bound("float", MIN_TIME_US, MAX_TIME_US, "us", _TIME, zero=True),
    "host.reduce_ns_per_byte": Bound("float", 1e-6, 1e6, "ns/byte", "a reduction's arithmetic: 1 ns per MB to 1 ms per byte", zero=True),
    # The model mechanisms (docs/model.md); 0 switches each off.
    "network.bucket_gbps": Bound("float", MIN_GBPS, MAX_GBPS, "Gbit/s", "0: no token bucket; else as bandwidth", zero=True),
    "network.bucket_burst_bytes": Bound("float", 1, 2**40, "bytes", "0: no burst; at most 1 TiB of tokens", zero=True),
    "network.bucket_message_bytes": Bound("float", 1, 2**20, "bytes", "0: none; a message's headers, at most 1 MiB", zero=True),
    "network.pacing_gbps": Bound("float", MIN_GBPS, MAX_GBPS, "Gbit/s", "0: no pacing; else as bandwidth", zero=True),
    "network.pacing_above_bytes": Bound("int", 0, INT32_MAX, "bytes", "an MPI count is a C int"),
    "network.nic_message_us": Bound("float", MIN_TIME_US, MAX_TIME_US, "us", _TIME, zero=True),
    "network.rate_jitter": Bound("float", 1e-6, 1, "", "0: none; a fraction of a message's sending time (1: as long again)", zero=True),
    "network.nic_queue_bytes": Bound("int", 0, 2**40, "bytes", "0: Linux's TCP small queues (two 64 KiB segments); at most 1 TiB"),
    "nodes.machine_cores": Bound("int", 1, MAX_CORES, "cores", "absent: each node has its own cores"),
    "host.turn_us": Bound("float", MIN_TIME_US, MAX_TIME_US, "us", _TIME, zero=True),
    "host.eager_threshold_bytes": Bound("int", 0, INT32_MAX, "bytes", "absent: always eager; an MPI count is a C int"),
    "host.rendezvous_first_bytes": Bound("int", 0, INT32_MAX, "bytes", "0: the request carries no data; an MPI count is a C int"),
    "noise.median_us": Bound("float", MIN_TIME_US, MAX_TIME_US, "us", _TIME, zero=True),
    "noise.sigma": Bound("float", 1e-6, 10, "", "a lognormal's log-space SD; e^10 spreads beyond any measurement", zero=True),
    # Workload parameters (hopsim.simulate keywords = CLI flags = scenario keys).
    "ranks": Bound("int", 1, INT32_MAX, "ranks", "a C++ int; memory_estimate() bounds it in practice"),
    "ranks_per_node": Bound("int", 1, MAX_CORES, "ranks", "at most nodes.cores"),
    "seed": Bound("int", 0, UINT64_MAX, "", "the engine's uint64 seed"),
    "sizes": Bound("int", 0, INT32_MAX, "bytes", "an MPI count of MPI_BYTE is a C int"),
    "iterations": Bound("int", 0, INT32_MAX, "", "osu_latency's and osu_bw's int loop counts (0: their defaults)"),
    "warmup": Bound("int", 0, INT32_MAX, "", "osu_latency's and osu_bw's int warm-up count (-x)"),
    "repetitions": Bound("int", 0, INT32_MAX, "", "IMB's int repetitions (0: its table)"),
    "window": Bound("int", 1, 1000, "sends", "osu_bw keeps a window's requests in an array of MAX_REQ_NUM = 1000"),
    "request_bytes": Bound("int", 0, INT32_MAX, "bytes", "an MPI count of MPI_BYTE is a C int"),
    "reply_bytes": Bound("int", 0, INT32_MAX, "bytes", "an MPI count of MPI_BYTE is a C int"),
    "exchanges": Bound("int", 1, INT32_MAX, "", "latency_checker's int; memory_estimate() bounds ranks x exchanges"),
    "degree": Bound("int", 0, INT32_MAX, "", "a C++ int (0: RayPlatform's choice); the family checks the rest"),
    # hopsim topology: route statistics walk all n(n-1) ordered pairs.
    "advise.ranks": Bound("int", 2, 16384, "ranks", "each candidate is a routed simulation; the random family keeps n^2 routes"),
    "max_connections": Bound("int", 1, 16384, "connections", "at most advise's largest size"),
    "jobs": Bound("int", 1, 256, "processes", "worker processes on this machine"),
    "topology.ranks": Bound("int", 1, 16384, "ranks", "all-pairs route statistics: ~n^2 routes (bench/memory.py)"),
    # Flags of validate, calibrate, live and smpi (bounds.flag() parses them).
    "nodes": Bound("int", 1, MAX_NODES, "nodes", "as nodes.count"),
    "timeout": Bound("float", 1e-3, 7 * 86400, "s", "a millisecond to a week of wall time"),
    "emulate_cluster": Bound("int", 1, 64, "hosts", "one /24 of namespaces on a bridge (live/cluster.py)"),
    "burst": Bound("int", 1500, 2**30, "bytes", "tbf needs an Ethernet frame at least; at most 1 GiB"),
    "live_iterations": Bound("int", 1, 10**7, "", "timed round trips per size; 10^7 of 1 ms is hours"),
    "fit_iterations": Bound("int", 1, 10**6, "", "the joint fit's iterations per case; each one is simulated per step"),
    "eager_limit": Bound("int", 0, INT32_MAX, "bytes", "an MPI count is a C int"),
}


def _fmt(x: float) -> str:
    if float(x).is_integer() and abs(x) < 1e7:
        return str(int(x))
    for exp in range(1, 80):
        if x == 2**exp - 1:
            return f"2^{exp}-1"
        if x == 2**exp:
            return f"2^{exp}"
    return f"{x:g}"


def check(key: str, value, name: str | None = None):
    """value, checked against BOUNDS[key] (an int, or a float for float keys); InputError
    naming `name` (default: the key) otherwise. A key without bounds is only type-checked
    as finite, so that an unregistered key never crashes (the tests catch it instead)."""
    name = name or key
    bound = BOUNDS.get(key)
    kind = bound.kind if bound else "float"
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"{name}: must be an integer, got {_short(value)}")
    else:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(f"{name}: must be a number, got {_short(value)}")
        try:
            value = float(value)
        except OverflowError:
            raise InputError(f"{name}: must be a finite number, got {_short(value)}") from None
        if not math.isfinite(value):
            raise InputError(f"{name}: must be finite, got {value}")
    if bound is None:
        return value
    inside = bound.low <= value <= bound.high or (bound.zero and value == 0)
    if not inside:
        unit = f" {bound.unit}" if bound.unit else ""
        if value > bound.high:
            problem = f"must be at most {_fmt(bound.high)}{unit} ({bound.why})"
        elif bound.zero and value < 0:
            problem = "must be >= 0"
        elif bound.zero:
            problem = f"must be 0 or at least {_fmt(bound.low)}{unit} ({bound.why})"
        elif bound.kind == "float" and value <= 0 and bound.low > 0:
            problem = f"must be > 0 (at least {_fmt(bound.low)}{unit})"
        else:
            problem = f"must be at least {_fmt(bound.low)}"
        raise InputError(f"{name}: {problem}, got {_short(value)}")
    return value


def flag(key: str):
    """An argparse type= for a numeric flag checked against BOUNDS[key]: a bad value is
    argparse's one-line error (exit 2) naming the flag."""
    import argparse

    bound = BOUNDS[key]

    def parse(text: str):
        try:
            value = int(text) if bound.kind == "int" else float(text)
        except ValueError:
            kind = "an integer" if bound.kind == "int" else "a number"
            raise argparse.ArgumentTypeError(f"expected {kind}, got {text!r}") from None
        try:
            return check(key, value, "value")
        except InputError as e:
            raise argparse.ArgumentTypeError(str(e).removeprefix("value: ")) from None

    parse.__name__ = key  # argparse names the type in "invalid <name> value"
    return parse


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_parameters(params: dict) -> None:
    """Every registered workload parameter in params (lists element by element)."""
    for key, value in params.items():
        if key not in BOUNDS or value is None:
            continue
        if key == "seed" and value == "ray":
            continue  # RayPlatform's fixed seeds (hopsim.workload.RAY_SEED)
        if key == "sizes" and isinstance(value, (list, tuple)):
            for v in value:
                check(key, v)
        else:
            check(key, value)


# Platform and scenario files are a few KiB; anything larger is not one (/dev/zero, a log).
MAX_FILE_BYTES = 1 << 20
# Measurement files: the largest real one kept (an IMB-MPI1 run over every benchmark) is
# tens of KiB; 16 MiB leaves room for long NetPIPE or per-rank latency_checker outputs.
MAX_MEASUREMENT_BYTES = 16 << 20
# TOML tables and arrays nested deeper than this are refused (a platform file needs 3:
# [provenance] with a dotted key; tomllib recurses per level and ~500 levels overflow).
MAX_TOML_DEPTH = 16


def read_text(path, what: str, limit: int = MAX_FILE_BYTES) -> str:
    """The text of a regular file of at most `limit` bytes, or InputError naming it (what:
    "platform file"). Opened non-blocking so that a FIFO is refused, not waited on."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise InputError(f"{path}: cannot read {what}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise InputError(f"{path}: cannot read {what}: not a regular file")
            data = f.read(limit + 1)
    except OSError as e:
        raise InputError(f"{path}: cannot read {what}: {e.strerror or e}") from None
    if len(data) > limit:
        raise InputError(f"{path}: cannot read {what}: larger than {limit} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}:1: cannot read {what}: not a UTF-8 text file") from None


def load_toml(text: str, source: str) -> dict:
    """tomllib.loads, its errors one line naming source; nesting bounded (MAX_TOML_DEPTH)."""
    import tomllib

    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{source}: malformed TOML: {e}") from None
    except RecursionError:
        raise InputError(f"{source}: TOML nested deeper than {MAX_TOML_DEPTH} levels") from None
    stack = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_TOML_DEPTH:
            raise InputError(f"{source}: TOML nested deeper than {MAX_TOML_DEPTH} levels")
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return doc


# --- memory ----------------------------------------------------------------------------

# Checked against bench/memory.py's measured peaks (docs/platforms.md, "Memory"): an upper
# estimate, tight at the large runs where refusing matters.
BASE_BYTES = 32 * 2**20        # the forked interpreter, SimGrid and the engine at rest
# A node: under the flow transport a SimGrid host, its NIC and intra-node links and its
# routes (4 KiB), and its port actor (32 KiB stack: 16 KiB resident, all 40 KiB once the
# engine drops SimGrid's guard pages past 30000 actors); the queue transport keeps three
# link dates per node and builds no platform.
PER_NODE_BYTES = 20 * 2**10
PER_NODE_BYTES_UNGUARDED = 44 * 2**10
UNGUARDED_FROM = 30000         # simulator/platform_builder.cpp's guard-size switch (actors)
PER_NODE_BYTES_QUEUE = 64
# A rank: its loop (a coroutine frame, not a SimGrid actor), its state, its workload's
# record, its node in the placement map and its per-rank results (docs/performance.md:
# about 0.9 KiB all told at 2^20).
PER_RANK_BYTES = 2**10
PER_IN_FLIGHT_BYTES = 1024     # flow: a SimGrid comm and its message record
PER_IN_FLIGHT_BYTES_QUEUE = 256  # queue: a message record, its events and its inbox slot
PER_TABLE_ENTRY_BYTES = 2      # a random or user overlay's next-hop table entry
RAY_ROUTE_BYTES_PER_PAIR = 16  # kept routes (~8 B at ~3 hops) plus the build's 8 B per pair
# A recorded round trip: a double and its whole microseconds, the sorted copy for the
# percentiles and a rank's copy for the tools' statistics (measured ~26 B: bench/memory.py).
PER_SAMPLE_BYTES = 32


def memory_estimate(nodes: int, ranks: int, kind: str, exchanges: int = 0, overlay: str = "",
                    sizes: int = 0, transport: str = "flow") -> int:
    """Peak bytes of one run, an upper estimate:

        BASE + PER_NODE * nodes + PER_RANK * ranks + PER_IN_FLIGHT * in_flight
             + PER_TABLE_ENTRY * ranks^2   (random and user overlays: n x n next hops)
             + PER_SAMPLE * ranks * exchanges   (roundtrip: every round trip is kept, and
                                                 sorted in a copy for the percentiles)

    PER_NODE and PER_IN_FLIGHT depend on the transport (network.transport): under flow
    20 KiB (44 KiB from 30000 nodes on) and 1 KiB (SimGrid's hosts, port actors and
    comms), under queue 64 B and 256 B. in_flight
    is the messages that can be in flight at once: 2 per rank for roundtrip (a request or
    a reply, and a relayed copy), 4 per rank for exchange (two sends, two receives), 2
    per rank for sendrecv and pingping (a send, a receive), the largest window and its
    acknowledgement for bandwidth (1001), 2 for pingpong; n^2 for alltoall (a linear
    Alltoall's n - 1 sends per rank) and 4 per rank for the other collectives.
    """
    queue = transport == "queue"
    in_flight = {"roundtrip": 2 * ranks, "exchange": 4 * ranks, "sendrecv": 2 * ranks,
                 "pingping": 2 * ranks, "bandwidth": 1001}.get(kind, 2)
    if kind in ("alltoall", "allreduce", "allgather", "bcast", "reduce", "barrier"):
        # A linear Alltoall posts n - 1 sends per rank at once; the others a few per
        # rank, or n - 1 at a linear root.
        in_flight = ranks * ranks if kind == "alltoall" else 4 * ranks
    per_node = PER_NODE_BYTES_UNGUARDED if nodes > UNGUARDED_FROM else PER_NODE_BYTES
    total = BASE_BYTES + (PER_NODE_BYTES_QUEUE if queue else per_node) * nodes
    total += PER_RANK_BYTES * ranks
    total += (PER_IN_FLIGHT_BYTES_QUEUE if queue else PER_IN_FLIGHT_BYTES) * in_flight
    if overlay in ("random", "user"):
        total += PER_TABLE_ENTRY_BYTES * ranks * ranks
    elif overlay == "ray-random":
        # RayPlatform's routes depend on the source: a route per (source, destination),
        # about 4 + 2 * (mean hops - 1) bytes kept per pair, plus the build's work arrays
        # (6 n^2 + 2 n (n - 1) bytes); docs/overlays.md has the measured figures.
        total += RAY_ROUTE_BYTES_PER_PAIR * ranks * ranks
    if kind == "roundtrip":
        total += PER_SAMPLE_BYTES * ranks * exchanges
    return total


def available_memory() -> int:
    """Bytes this run may take: MemAvailable, or physical memory where that is unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_memory(nodes: int, ranks: int, kind: str, exchanges: int = 0, overlay: str = "",
                 available: int | None = None, transport: str = "flow") -> int:
    """The estimate, or InputError when it exceeds the available memory."""
    need = memory_estimate(nodes, ranks, kind, exchanges, overlay, transport=transport)
    have = available_memory() if available is None else available
    if need > have:
        raise InputError(f"this run needs about {_gib(need)} of memory (ranks {ranks}, "
                         f"nodes {nodes}{f', exchanges {exchanges}' if kind == 'roundtrip' else ''}"
                         f"{f', {overlay} overlay' if overlay else ''}); "
                         f"{_gib(have)} is available")
    return need


def _gib(n: int) -> str:
    return f"{n / 2**30:.3g} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def markdown_table() -> str:
    """The bounds table of docs/platforms.md."""
    lines = ["| key | type | bounds | unit | why |", "|---|---|---|---|---|"]
    for key, b in BOUNDS.items():
        lines.append(f"| `{key}` | {b.kind} | {b.describe()} | {b.unit} | {b.why} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown_table(), end="")
