"""The Platform value: every number the engine needs about machines and network.

Construction validates (types, ranges, topology node counts), so a Platform that exists
is one the engine accepts. Error messages name keys as they are written in a platform
file ("network.latency_us"), since that is where a user will fix them.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from .. import bounds
from ..errors import InputError
from .topology_parameters import nodes_of_topology

TOPOLOGIES = ("star", "fat-tree", "torus", "dragonfly")
RECEPTIONS = ("any-source", "round-robin")
PROBES = ("arrival", "header", "post")
# What moves the bytes (docs/model.md, "Transports"): SimGrid's max-min flow model, the
# reference, or per-link FIFO queues (the star only; faster under contention).
TRANSPORTS = ("flow", "queue")
LIMITER_SCOPES = ("all", "rendezvous")
NOISE_SCOPES = ("off", "message", "run")
NOISE_DISTRIBUTIONS = ("lognormal", "empirical")

# Field -> the key that sets it in a platform file.
FILE_KEYS = {
    "name": "name",
    "description": "description",
    "nodes": "nodes.count",
    "cores": "nodes.cores",
    "latency_us": "network.latency_us",
    "bandwidth_gbps": "network.bandwidth_gbps",
    "backbone_gbps": "network.backbone_gbps",
    "limiter_gbps": "network.limiter_gbps",
    "limiter_scope": "network.limiter_scope",
    "backbone_scope": "network.backbone_scope",
    "topology": "network.topology",
    "topology_parameters": "network.topology_parameters",
    "transport": "network.transport",
    "intra_latency_us": "intranode.latency_us",
    "intra_bandwidth_gbps": "intranode.bandwidth_gbps",
    "send_overhead_us": "host.send_overhead_us",
    "recv_overhead_us": "host.recv_overhead_us",
    "per_byte_overhead_ns": "host.per_byte_overhead_ns",
    "gap_us": "host.gap_us",
    "pass_us": "host.pass_us",
    "reduce_ns_per_byte": "host.reduce_ns_per_byte",
    "reception": "host.reception",
    # The model mechanisms (docs/model.md), all off by default.
    "oversubscribe": "nodes.oversubscribe",
    "bucket_gbps": "network.bucket_gbps",
    "bucket_burst_bytes": "network.bucket_burst_bytes",
    "bucket_message_bytes": "network.bucket_message_bytes",
    "nic_message_us": "network.nic_message_us",
    "pacing_gbps": "network.pacing_gbps",
    "pacing_above_bytes": "network.pacing_above_bytes",
    "eager_threshold_bytes": "host.eager_threshold_bytes",
    "rendezvous_first_bytes": "host.rendezvous_first_bytes",
    "probe": "host.probe",
    "noise_scope": "noise.scope",
    "noise_distribution": "noise.distribution",
    "noise_median_us": "noise.median_us",
    "noise_sigma": "noise.sigma",
    "noise_values_us": "noise.values_us",
    "rate_jitter": "network.rate_jitter",
    "nic_queue_bytes": "network.nic_queue_bytes",
    "machine_cores": "nodes.machine_cores",
    "turn_us": "host.turn_us",
}

# Numbers that must be > 0 (a count or a bandwidth of zero has no meaning) and those
# that may be 0 (an ideal wire or a free host operation is a legitimate what-if).
_POSITIVE_INTS = ("nodes", "cores")
_POSITIVE = ("bandwidth_gbps", "intra_bandwidth_gbps")
_NON_NEGATIVE = ("latency_us", "intra_latency_us", "send_overhead_us", "recv_overhead_us",
                 "per_byte_overhead_ns", "gap_us", "pass_us", "reduce_ns_per_byte", "bucket_gbps", "bucket_burst_bytes",
                 "bucket_message_bytes", "nic_message_us", "pacing_gbps", "noise_median_us", "noise_sigma", "rate_jitter")
# Intra-node values left unset (None) follow the network's, also through replace().
_FOLLOW_NETWORK = {"intra_latency_us": "latency_us", "intra_bandwidth_gbps": "bandwidth_gbps"}


# Open MPI over TCP (ob1 on the tcp BTL): a message goes eagerly while its data fit in
# btl_tcp_eager_limit (64 KiB, `ompi_info --param btl tcp --level 9`) less ob1's match
# header (sizeof(mca_pml_ob1_hdr_t), pml_ob1_sendreq.h): 65480 B of data.
# The provenance calibrate gives a value its files cannot determine and no --base gave.
UNDETERMINED = "default (the measurements cannot determine it)"
OPEN_MPI_TCP_EAGER_LIMIT = 65480


@dataclass(frozen=True)
class Platform:
    """Nodes, the network between them, the intra-node path and per-rank host costs.

    intra_latency_us / intra_bandwidth_gbps left as None take the network's values: a
    file that does not describe the intra-node path gets no faster path inside a node.
    backbone_gbps = 0 means no backbone (a non-blocking switch). Host costs default to
    zero, which gives the analytic contract latency_us + s*8/(bandwidth_gbps*1000) us.
    """

    name: str
    nodes: int
    cores: int
    latency_us: float
    bandwidth_gbps: float
    description: str = ""
    backbone_gbps: float = 0.0
    # One capacity per node for its sent + received bytes (SimGrid's limiter_link); 0: none.
    limiter_gbps: float = 0.0
    # Which bytes it serves: "all" node-to-node bytes, or only those of messages above
    # the eager threshold ("rendezvous": large two-way transfers lose rate behind a token
    # bucket, small eager ones do not; docs/model.md).
    limiter_scope: str = "all"
    # Which bytes the backbone serves, likewise; None: all ("rendezvous": on an emulated
    # cluster, the machine's cores cutting large transfers into packets behind a token
    # bucket; docs/model.md).
    backbone_scope: str | None = None
    topology: str = "star"
    topology_parameters: str = ""
    transport: str = "flow"
    intra_latency_us: float | None = None
    intra_bandwidth_gbps: float | None = None
    send_overhead_us: float = 0.0
    recv_overhead_us: float = 0.0
    per_byte_overhead_ns: float = 0.0
    gap_us: float = 0.0
    pass_us: float = 0.0
    # The arithmetic of a reduction (Allreduce, Reduce), per byte combined; 0: free.
    reduce_ns_per_byte: float = 0.0
    reception: str = "any-source"
    oversubscribe: bool = False
    bucket_gbps: float = 0.0
    bucket_burst_bytes: float = 0.0
    # What a message costs the bucket beyond its payload (headers, acknowledgements).
    bucket_message_bytes: float = 0.0
    nic_message_us: float = 0.0
    pacing_gbps: float = 0.0
    pacing_above_bytes: int = 0
    eager_threshold_bytes: int | None = None
    # A rendezvous's first fragment, sent with its request (Open MPI ob1: the BTL's
    # rndv_eager_limit); 0: the request carries no data (MPICH, SMPI).
    rendezvous_first_bytes: int = 0
    probe: str = "arrival"
    noise_scope: str = "off"
    noise_distribution: str = "lognormal"
    noise_median_us: float = 0.0
    noise_sigma: float = 0.0
    noise_values_us: tuple = ()
    rate_jitter: float = 0.0
    # The most of a node's queued bytes a rendezvous's request or answer waits behind;
    # 0: Linux's TCP small queues (two 64 KiB segments, or 1 ms at the bucket's rate).
    nic_queue_bytes: int = 0
    # Every node on one machine of this many cores (an emulated cluster); None: each node
    # has its own. With n ranks per machine core (n > 1) a pass lasts at least n x turn_us:
    # a rank that yields while it waits probes once per turn of its core.
    machine_cores: int | None = None
    turn_us: float | None = None
    # File key ("network.latency_us") -> where that number comes from.
    provenance: Mapping[str, str] = field(default_factory=dict, compare=False)
    # Where the platform was read from (a preset name or a path); for messages only.
    source: str = field(default="", compare=False)

    def __post_init__(self):
        for f in ("name", "description", "topology", "topology_parameters", "transport", "limiter_scope",
                  "reception", "probe",
                  "noise_scope", "noise_distribution"):
            _check_str(self, f)
        if not self.name.strip() or "\n" in self.name:
            self._fail("name", "must be a non-empty single line")
        for f in _POSITIVE_INTS:
            _check_int(self, f)
            if getattr(self, f) < 1:
                self._fail(f, f"must be at least 1, got {getattr(self, f)}")
        for f in _POSITIVE + _NON_NEGATIVE + ("backbone_gbps", "limiter_gbps"):
            if getattr(self, f) is None and f in _FOLLOW_NETWORK:
                continue
            self._set(f, _check_float(self, f))
            if f in _POSITIVE and getattr(self, f) <= 0:
                self._fail(f, f"must be > 0, got {getattr(self, f)}")
            if f not in _POSITIVE and getattr(self, f) < 0:
                hint = {"backbone_gbps": " (0: no backbone)",
                        "limiter_gbps": " (0: no limiter)"}.get(f, "")
                self._fail(f, f"must be >= 0{hint}, got {getattr(self, f)}")
        if self.reception not in RECEPTIONS:
            self._fail("reception", f"must be one of {', '.join(RECEPTIONS)}, "
                                    f"got {self.reception!r}")
        self._check_topology()
        self._check_mechanisms()
        self._set("provenance", MappingProxyType(dict(self.provenance)))

    def _set(self, f: str, value):
        # Normalising a field of a frozen dataclass while it is being constructed.
        object.__setattr__(self, f, value)

    def _check_topology(self):
        if self.topology not in TOPOLOGIES:
            self._fail("topology", f"must be one of {', '.join(TOPOLOGIES)}, "
                                   f"got {self.topology!r}")
        if self.limiter_gbps > 0 and self.topology != "star":
            self._fail("limiter_gbps", f"runs on the star topology only, network.topology is "
                                       f"{self.topology!r}")
        if self.topology == "star":
            if self.topology_parameters:
                self._fail("topology_parameters", "only applies to fat-tree, torus and dragonfly")
            return
        try:
            needed = nodes_of_topology(self.topology, self.topology_parameters)
        except ValueError as e:
            self._fail("topology_parameters", str(e))
        if needed != self.nodes:
            self._fail("nodes", f"{self.topology} {self.topology_parameters!r} has {needed} "
                                f"nodes, but nodes.count is {self.nodes}")

    def _check_mechanisms(self):
        if not isinstance(self.oversubscribe, bool):
            self._fail("oversubscribe", f"must be true or false, got {self.oversubscribe!r}")
        if self.bucket_burst_bytes > 0 and self.bucket_gbps == 0:
            self._fail("bucket_burst_bytes", "needs network.bucket_gbps (the sustained rate)")
        if self.bucket_message_bytes > 0 and self.bucket_gbps == 0:
            self._fail("bucket_message_bytes", "needs network.bucket_gbps (the sustained rate)")
        _check_int(self, "pacing_above_bytes")
        if self.pacing_above_bytes < 0:
            self._fail("pacing_above_bytes", f"must be >= 0, got {self.pacing_above_bytes}")
        if self.pacing_above_bytes > 0 and self.pacing_gbps == 0:
            self._fail("pacing_above_bytes", "needs network.pacing_gbps (the connection's rate)")
        if self.eager_threshold_bytes is not None:
            _check_int(self, "eager_threshold_bytes")
            if self.eager_threshold_bytes < 0:
                self._fail("eager_threshold_bytes",
                           f"must be >= 0 (absent: always eager), got {self.eager_threshold_bytes}")
        _check_int(self, "nic_queue_bytes")
        if self.nic_queue_bytes < 0:
            self._fail("nic_queue_bytes", f"must be >= 0 (0: Linux's small queues), got {self.nic_queue_bytes}")
        _check_int(self, "rendezvous_first_bytes")
        if self.rendezvous_first_bytes < 0:
            self._fail("rendezvous_first_bytes", f"must be >= 0, got {self.rendezvous_first_bytes}")
        if self.rendezvous_first_bytes > 0 and self.eager_threshold_bytes is None:
            self._fail("rendezvous_first_bytes", "needs host.eager_threshold_bytes (no rendezvous without it)")
        if self.machine_cores is not None:
            _check_int(self, "machine_cores")
            if self.machine_cores < 1:
                self._fail("machine_cores", f"must be at least 1 (absent: each node its own "
                                            f"cores), got {self.machine_cores}")
        if self.turn_us is not None:
            self._set("turn_us", _check_float(self, "turn_us"))
            if self.turn_us < 0:
                self._fail("turn_us", f"must be >= 0, got {self.turn_us}")
            if self.machine_cores is None:
                self._fail("turn_us", "needs nodes.machine_cores (the cores every node shares)")
        if self.transport not in TRANSPORTS:
            self._fail("transport", f"must be one of {', '.join(TRANSPORTS)}, got {self.transport!r}")
        if self.transport == "queue" and self.topology != "star":
            self._fail("transport", f"\"queue\" runs on the star topology only, "
                                    f"network.topology is {self.topology!r}")
        self._check_scope("limiter_scope")
        if self.backbone_scope is not None:
            _check_str(self, "backbone_scope")
            self._check_scope("backbone_scope")
            if self.backbone_scope == "rendezvous" and self.backbone_gbps == 0:
                self._fail("backbone_scope", "\"rendezvous\" needs network.backbone_gbps")
        if self.probe not in PROBES:
            self._fail("probe", f"must be one of {', '.join(PROBES)}, got {self.probe!r}")
        self._check_noise()

    def _check_scope(self, f: str):
        scope = getattr(self, f)
        if scope not in LIMITER_SCOPES:
            self._fail(f, f"must be one of {', '.join(LIMITER_SCOPES)}, got {scope!r}")
        if scope == "rendezvous" and self.eager_threshold_bytes is None:
            self._fail(f, "\"rendezvous\" needs host.eager_threshold_bytes (no rendezvous without it)")

    def _check_noise(self):
        if self.noise_scope not in NOISE_SCOPES[1:]:
            if self.noise_scope != "off":
                self._fail("noise_scope", f"must be one of {', '.join(NOISE_SCOPES[1:])}, "
                                          f"got {self.noise_scope!r}")
            given = [f for f in ("noise_median_us", "noise_sigma", "noise_values_us")
                     if getattr(self, f)]
            if given or self.noise_distribution != "lognormal":
                self._fail("noise_scope", "missing: [noise] needs scope = \"message\" or \"run\"")
            # An empty list from a file equals the default empty tuple.
            self._set("noise_values_us", ())
            return
        if self.noise_distribution not in NOISE_DISTRIBUTIONS:
            self._fail("noise_distribution", f"must be one of {', '.join(NOISE_DISTRIBUTIONS)}, "
                                             f"got {self.noise_distribution!r}")
        values = self.noise_values_us
        if not isinstance(values, (list, tuple)):
            self._fail("noise_values_us", f"must be a list of numbers, got {values!r}")
        for v in values:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                self._fail("noise_values_us", f"must hold finite numbers >= 0, got {v!r}")
        self._set("noise_values_us", tuple(float(v) for v in values))
        if self.noise_distribution == "lognormal":
            if self.noise_median_us <= 0:
                self._fail("noise_median_us", "must be > 0 for a lognormal [noise]")
            if values:
                self._fail("noise_values_us", "only applies to distribution = \"empirical\"")
        else:
            if not values:
                self._fail("noise_values_us", "must hold at least one value for an empirical [noise]")
            for f in ("noise_median_us", "noise_sigma"):
                if getattr(self, f):
                    self._fail(f, "only applies to distribution = \"lognormal\"")

    def _fail(self, field_name: str, problem: str):
        where = f"{self.source}: " if self.source else ""
        raise InputError(f"{where}{FILE_KEYS[field_name]}: {problem}")

    def replace(self, **changes) -> "Platform":
        """A copy with some fields changed, validated like any Platform. A changed value
        that fails is not the file's: the message names it as given, not as read."""
        try:
            return dataclasses.replace(self, **changes)
        except InputError as e:
            text, prefix = str(e), f"{self.source}: "
            if self.source and "source" not in changes and text.startswith(prefix):
                rest = text[len(prefix):]
                if any(rest.startswith(f"{FILE_KEYS[f]}:") for f in changes if f in FILE_KEYS):
                    raise InputError(f"{rest} (given for the platform of {self.source}, "
                                     f"not in that file)") from None
            raise

    def effective(self, f: str) -> float:
        """The value the engine gets for f: unset intra-node values are the network's."""
        v = getattr(self, f)
        return getattr(self, _FOLLOW_NETWORK[f]) if v is None and f in _FOLLOW_NETWORK else v

    def to_engine_dict(self, reception: str | None = None) -> dict:
        """The engine's PlatformSpec as a dict (simulator/spec.hpp field names)."""
        spec = {f: self.effective(f) for f in (
            "name", "nodes", "cores", "latency_us", "bandwidth_gbps", "backbone_gbps",
            "limiter_gbps", "limiter_scope", "topology", "topology_parameters", "transport", "intra_latency_us", "intra_bandwidth_gbps",
            "send_overhead_us", "recv_overhead_us", "per_byte_overhead_ns", "gap_us",
            "pass_us", "reduce_ns_per_byte", "reception", "oversubscribe", "bucket_gbps", "bucket_burst_bytes",
            "bucket_message_bytes", "nic_message_us", "pacing_gbps", "pacing_above_bytes", "rendezvous_first_bytes", "probe", "noise_scope", "noise_distribution", "noise_median_us",
            "noise_sigma", "rate_jitter", "nic_queue_bytes")}
        spec["eager_threshold_bytes"] = (-1 if self.eager_threshold_bytes is None
                                         else self.eager_threshold_bytes)
        spec["noise_values_us"] = list(self.noise_values_us)
        # Only when set: the values hash of every platform without them stays as it was.
        if self.machine_cores is not None:
            spec["machine_cores"] = self.machine_cores
            spec["turn_us"] = self.turn_us or 0.0
        if self.backbone_scope is not None:
            spec["backbone_scope"] = self.backbone_scope
        if reception is not None:
            spec["reception"] = self.replace(reception=reception).reception
        return spec

    def values_hash(self) -> str:
        """sha256 (first 16 hex digits) of every value the engine gets, the name aside:
        equal for two platforms that simulate alike, whatever they are called."""
        import hashlib
        import json

        spec = self.to_engine_dict()
        spec.pop("name")
        text = json.dumps(spec, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def summary(self) -> str:
        """One line: the shape and the headline numbers."""
        net = f"{self.topology}, " if self.topology != "star" else ""
        if self.transport != "flow":
            net += f"{self.transport} transport, "
        return (f"{self.nodes} nodes x {self.cores} cores, {net}"
                f"{_num(self.latency_us)} us, {_num(self.bandwidth_gbps)} Gbit/s, "
                f"{self.reception}" + "".join(f", {m}" for m in self.mechanisms()))

    def mechanisms(self) -> list[str]:
        """The model mechanisms that are on (docs/model.md), one short phrase each."""
        on = []
        if self.bucket_gbps:
            on.append(f"token bucket {_num(self.bucket_gbps)} Gbit/s, "
                      f"burst {_num(self.bucket_burst_bytes)} B")
        if self.pacing_gbps:
            on.append(f"paced at {_num(self.pacing_gbps)} Gbit/s above {self.pacing_above_bytes} B")
        if self.nic_message_us:
            on.append(f"NIC {_num(self.nic_message_us)} us per message")
        if self.oversubscribe:
            on.append("oversubscribed cores")
        if self.machine_cores is not None:
            on.append(f"one machine of {self.machine_cores} cores, a turn of "
                      f"{_num(self.turn_us or 0.0)} us")
        if self.eager_threshold_bytes is not None:
            on.append(f"rendezvous above {self.eager_threshold_bytes} B"
                      + (f", its first {self.rendezvous_first_bytes} B with the request"
                         if self.rendezvous_first_bytes else ""))
        if self.probe != "arrival":
            on.append(f"probe at {self.probe}")
        if self.noise_scope != "off":
            on.append(f"{self.noise_distribution} noise per {self.noise_scope}")
        return on


def _num(x: float) -> str:
    return f"{x:.6g}"


def _check_str(p: Platform, f: str):
    if not isinstance(getattr(p, f), str):
        p._fail(f, f"must be a string, got {getattr(p, f)!r}")


def _check_int(p: Platform, f: str):
    _bounded(p, f)


def _check_float(p: Platform, f: str) -> float:
    return _bounded(p, f)


def _bounded(p: Platform, f: str):
    # Types and ranges live in hopsim.bounds, keyed by the file key.
    try:
        return bounds.check(FILE_KEYS[f], getattr(p, f))
    except InputError as e:
        raise InputError(f"{p.source}: {e}" if p.source else str(e)) from None
