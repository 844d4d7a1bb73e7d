"""A hopsim platform for SimGrid: a platform XML and SMPI --cfg flags (the one exporter).

Two writers share this module, each with its own contract:

- `hopsim platforms export` and `hopsim smpi` (platform_xml, cfg_flags): SMPI made to
  follow the engine's own network contract, below.
- `hopsim calibrate --out` (simgrid_texts): a fitted platform for SimGrid users, under
  SMPI's network model with the fit's per-size factors (its docstring).

The mapping from hopsim's PlatformSpec (Platform.to_engine_dict(), the dict the
engine builds its platform from) to SMPI. The star platform of simulator/platform_builder
is SimGrid's <cluster>: one split-duplex private link per node carrying half the one-way
latency (a route crosses two), an optional backbone, and a loopback link per node for the
intra-node path. The flags give SMPI hopsim's network contract and host costs:

    network/model:CM02, network/crosstraffic:0, network/TCP-gamma:1e30
        one message of s bytes takes latency + s/bandwidth (no factors, no ACK flow,
        no TCP window bound) -- the engine's configure_network_model()
    network/model:SMPI, network/TCP-gamma = 2 L p
        instead, on a paced platform: SimGrid's TCP window bound caps each flow at p, as
        the engine's pacing caps each message above P bytes (pacing_cfg(); messages up
        to P are paced too under SMPI)
    smpi/async-small-thresh, smpi/send-is-detached-thresh = 1 GiB
        every send is eager, as in the engine (no rendezvous handshake)
    smpi/os, smpi/ois  = 0:send_overhead_us:per_byte_overhead_ns  (blocking, non-blocking send)
    smpi/or            = 0:recv_overhead_us:per_byte_overhead_ns
    smpi/iprobe        = pass_us, smpi/grow-injected-times:no  (one MPI_Iprobe = one pass)
    smpi/test          = 0  (hopbench never polls with MPI_Test)
    smpi/simulate-computation:no, smpi/wtime:0  (the program's own code costs nothing)

Keys SMPI cannot express (gap_us != 0, non-star topologies, and any engine key this
mapping does not know, e.g. a token bucket or noise) are refused with one line.
"""
from __future__ import annotations

from xml.sax.saxutils import quoteattr

from ..errors import InputError

GIB = 1 << 30
# The SMPI --cfg flags file beside a platform's XML (calibrate and platforms export alike).
SMPI_SUFFIX = ".smpi"
# Engine keys this mapping expresses; any other key must hold a neutral value.
_MAPPED = {"name", "nodes", "cores", "latency_us", "bandwidth_gbps", "backbone_gbps", "limiter_gbps",
           "topology", "topology_parameters", "intra_latency_us", "intra_bandwidth_gbps", "send_overhead_us",
           "recv_overhead_us", "per_byte_overhead_ns", "pass_us", "reception", "gap_us",
           "pacing_gbps", "pacing_above_bytes"}


# The engine's "mechanism off" values that are not zero-like: -1 is "always eager" (SMPI
# is made eager by the thresholds in the flags), and with noise off its distribution is
# unused. probe: SMPI's MPI_Iprobe sees a message when it is posted ("post"); "arrival",
# hopsim's default, differs from it by the transfer time only (docs/live.md measures it).
# transport: "flow" is SimGrid's own network model, as SMPI runs it; "queue" has no SMPI
# equivalent. limiter_scope: SimGrid's limiter_link binds every byte ("all"); one that binds
# rendezvous messages only has no SMPI equivalent, nor has such a backbone (backbone_scope).
_OFF = {"eager_threshold_bytes": (-1,), "noise_distribution": ("lognormal",),
        "probe": ("arrival", "post"), "transport": ("flow",), "limiter_scope": ("all",),
        "backbone_scope": ("all",)}


def _neutral(value, key: str = "") -> bool:
    if value in _OFF.get(key, ()):
        return True
    return value in (None, "", 0, 0.0, False, "none", "off") or value == [] or value == {}


def check_expressible(spec: dict) -> None:
    """InputError naming the first key SMPI cannot reproduce."""
    name = spec.get("name", "platform")
    if spec.get("topology", "star") not in ("star", ""):
        raise InputError(f"{name}: network.topology {spec['topology']} is not exported to SMPI yet "
                         f"(only star, SimGrid's <cluster>)")
    if spec.get("gap_us", 0):
        raise InputError(f"{name}: host.gap_us has no SMPI equivalent (SMPI has per-message "
                         f"overheads, not a minimum gap between injections)")
    for key in sorted(spec):
        if key not in _MAPPED and not _neutral(spec[key], key):
            raise InputError(f"{name}: {key} = {spec[key]!r} has no SMPI equivalent; export "
                             f"refuses platforms SMPI cannot reproduce")


def _bps(gbps: float) -> str:
    return f"{gbps * 1e9 / 8:.17g}Bps"


def _s(us: float) -> str:
    return f"{us * 1e-6:.17g}s"


def platform_xml(spec: dict) -> str:
    check_expressible(spec)
    attrs = {
        "id": "cluster", "prefix": "node-", "suffix": "", "radical": f"0-{spec['nodes'] - 1}",
        "speed": "1Gf", "core": str(spec["cores"]),
        "bw": _bps(spec["bandwidth_gbps"]), "lat": _s(spec["latency_us"] / 2),
        "sharing_policy": "SPLITDUPLEX",
        "loopback_bw": _bps(spec["intra_bandwidth_gbps"]), "loopback_lat": _s(spec["intra_latency_us"]),
    }
    if spec.get("backbone_gbps", 0) > 0:
        attrs.update(bb_bw=_bps(spec["backbone_gbps"]), bb_lat="0s")
    if spec.get("limiter_gbps", 0) > 0:
        # SimGrid's per-host link shared by both directions: hopsim's limiter.
        attrs["limiter_link"] = _bps(spec["limiter_gbps"])
    body = " ".join(f"{k}={quoteattr(v)}" for k, v in attrs.items())
    return ("<?xml version='1.0'?>\n"
            "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
            f"<!-- hopsim platform {spec['name']} (hopsim platforms export) -->\n"
            "<platform version=\"4.1\">\n"
            f"  <cluster {body}/>\n"
            "</platform>\n")


def cfg_flags(spec: dict) -> list[str]:
    check_expressible(spec)
    per_byte = spec["per_byte_overhead_ns"] * 1e-9
    send = f"0:{spec['send_overhead_us'] * 1e-6:.17g}:{per_byte:.17g}"
    recv = f"0:{spec['recv_overhead_us'] * 1e-6:.17g}:{per_byte:.17g}"
    return [f"--cfg={c}" for c in (
        *_network_model(spec), "network/crosstraffic:0",
        f"smpi/async-small-thresh:{GIB}", f"smpi/send-is-detached-thresh:{GIB}",
        f"smpi/os:{send}", f"smpi/ois:{send}", f"smpi/or:{recv}",
        f"smpi/iprobe:{spec['pass_us'] * 1e-6:.17g}", "smpi/grow-injected-times:no",
        "smpi/test:0", "smpi/simulate-computation:no", "smpi/wtime:0")]


def pacing_cfg(latency_us: float, pacing_gbps: float, sustained: tuple[int, float, float] | None = None) -> list[str]:
    """SimGrid settings that bound each flow, not the link, at the paced rate p: SimGrid's
    TCP window bound gamma / (2 x route latency) is per flow, so gamma = 2 L p caps every
    node-to-node flow at p. (SMPI's bandwidth factor is no per-flow bound: two flows at
    factor f share a link as two flows at full rate would, each getting f R/2; measured,
    4 ranks exchanging 10000 B on 2 nodes took L + 2s/p with it, L + s/p with gamma.)
    `sustained` = (first size, rate factor, latency factor) adds a step for a token
    bucket's sustained rate. What SimGrid 3.32 cannot say: a factor above 1 does not lift
    the window bound, so a message of one packet (up to pacing_above_bytes) is paced too
    (L + s/p instead of L + s/R), and an intra-node flow is capped at p L / L_intra."""
    gamma = 2 * latency_us * 1e-6 * pacing_gbps * 1e9 / 8
    bw = ["0:1"]
    lat = ["0:1"]
    if sustained is not None:
        start, rate_factor, lat_factor = sustained
        bw.append(f"{start}:{rate_factor:.17g}")
        lat.append(f"{start}:{lat_factor:.17g}")
    return ["network/model:SMPI", f"network/TCP-gamma:{gamma:.17g}",
            f"smpi/bw-factor:{';'.join(bw)}", f"smpi/lat-factor:{';'.join(lat)}"]


def _network_model(spec: dict) -> list[str]:
    """CM02 without a TCP window bound; a paced platform's bound per flow instead."""
    if not spec.get("pacing_gbps"):
        return ["network/model:CM02", "network/TCP-gamma:1e30"]
    return pacing_cfg(spec["latency_us"], spec["pacing_gbps"])


def hostfile(node_map: list[int]) -> str:
    """smpirun's hostfile: line r is rank r's host, the engine's placement (Workload.node_of_rank)."""
    return "".join(f"node-{n}\n" for n in node_map)


# ---- `hopsim calibrate --out`: a fitted platform -------------------------------------

def _num(x: float) -> str:
    return f"{x:.9g}"


def simgrid_texts(platform, segments=(), eager_threshold: int | None = None) -> tuple[str, str]:
    """A fitted platform as SimGrid input: a platform XML and the SMPI --cfg flags.

    The XML is one SimGrid <cluster>: every host has a private full-duplex link (the NIC)
    carrying half the one-way latency, as hopsim's star does, and a loopback link for
    ranks of one node (hopsim's intra-node path). The flags select SMPI's network model,
    the one that applies per-size factors, without cross-traffic or a TCP window bound,
    and carry the host costs (smpi/os, smpi/or: offset and per-byte seconds) and the per-size breakpoints
    found by the fit (smpi/bw-factor and smpi/lat-factor, one factor per segment, relative
    to the platform's bandwidth and latency; smpi/async-small-thresh and
    smpi/send-is-detached-thresh at a fitted eager threshold; SMPI's request carries no
    data, so a first fragment with it, host.rendezvous_first_bytes, has no flag). A paced
    platform's flags come from its pacing and bucket instead (pacing_cfg, _sustained).
    A race jitter (network.rate_jitter) has no SMPI counterpart and is left out: SMPI's
    ranks run a rendezvous's race without it.
    """
    p = platform
    half_lat = p.latency_us / 2
    intra_lat = p.effective("intra_latency_us")
    xml = f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- {p.name}: written by hopsim calibrate; {p.nodes} nodes x {p.cores} cores -->
<platform version="4.1">
  <cluster id="{p.name}" prefix="node-" radical="0-{p.nodes - 1}" suffix="" speed="1Gf"
           core="{p.cores}" bw="{_num(p.bandwidth_gbps)}Gbps" lat="{_num(half_lat)}us"
           sharing_policy="SPLITDUPLEX"
           loopback_bw="{_num(p.effective('intra_bandwidth_gbps'))}Gbps" loopback_lat="{_num(intra_lat)}us"/>
</platform>
"""
    per_byte_s = p.per_byte_overhead_ns * 1e-9
    flags = (["--cfg=network/model:SMPI", "--cfg=network/TCP-gamma:1e30"] if not p.pacing_gbps
             else [f"--cfg={c}" for c in pacing_cfg(p.latency_us, p.pacing_gbps, _sustained(p))])
    flags += ["--cfg=network/crosstraffic:0",
             f"--cfg=smpi/os:0:{_num(p.send_overhead_us * 1e-6)}:{_num(per_byte_s)}",
             f"--cfg=smpi/or:0:{_num(p.recv_overhead_us * 1e-6)}:{_num(per_byte_s)}"]
    bw, lat = [], []
    for seg in (segments if not p.pacing_gbps else ()):
        start = 0 if not bw else seg.first_bytes
        bw.append(f"{start}:{_num(_bw_factor(seg, p.bandwidth_gbps))}")
        lat.append(f"{start}:{_num(_lat_factor(seg, p.latency_us, p.bandwidth_gbps))}")
    if not p.pacing_gbps:
        flags.append(f"--cfg=smpi/bw-factor:{';'.join(bw) or '0:1'}")
        flags.append(f"--cfg=smpi/lat-factor:{';'.join(lat) or '0:1'}")
    if eager_threshold is not None:
        flags += [f"--cfg=smpi/async-small-thresh:{eager_threshold}",
                  f"--cfg=smpi/send-is-detached-thresh:{eager_threshold}"]
    return xml, "\n".join(flags) + "\n"


def _sustained(p) -> tuple[int, float, float] | None:
    """A paced platform's token bucket for SMPI, which has none: the sustained rate r as a
    factor of the paced one from where the engine's ping-pong reaches it
    (s* = b / (1 - r/p)), with the latency factor that keeps its line L + (s - b)/r. A
    burst of messages does not drain anything in SMPI."""
    r, pace = p.bucket_gbps, p.pacing_gbps
    if not (r and r < pace and p.latency_us):
        return None
    crossing = p.bucket_burst_bytes / (1 - r / pace)
    intercept = p.latency_us - 8e-3 * p.bucket_burst_bytes / r
    return int(crossing) + 1, r / pace, max(intercept, 0.0) / p.latency_us


def _determined(seg) -> bool:
    """Whether a segment's slope is a bandwidth: its serialisation is at least a tenth
    of its time at its largest size. Below that (small messages) the slope is noise."""
    end = seg.at(seg.last_bytes)
    return seg.slope_us_per_byte > 0 and end > 0 and \
        seg.slope_us_per_byte * seg.last_bytes >= 0.1 * end


def _bw_factor(seg, bandwidth_gbps: float) -> float:
    return seg.bandwidth_gbps / bandwidth_gbps if _determined(seg) else 1.0


def _lat_factor(seg, latency_us: float, bandwidth_gbps: float) -> float:
    """The factor that gives the segment's time at its middle size, given the bandwidth
    SMPI will use for it."""
    if not latency_us:
        return 1.0
    if _determined(seg):
        return max(seg.intercept_us, 0.0) / latency_us
    mid = (seg.first_bytes + seg.last_bytes) / 2
    wire = mid * 8e-3 / bandwidth_gbps
    return max(seg.at(mid) - wire, 0.0) / latency_us
