"""A fitted platform as SimGrid input: a platform XML and the SMPI --cfg flags.

One function, write_simgrid(), kept apart so that it can give way to the platform
exporter of `hopsim platforms export --format simgrid-xml` when both exist.

The XML is one SimGrid <cluster>: every host has a private full-duplex link (the NIC)
carrying half the one-way latency, as hopsim's star does, and a loopback link for
ranks of one node (hopsim's intra-node path). The flags keep SimGrid's network model
to the same contract (CM02, no cross-traffic, no TCP window bound) and carry the host
costs (smpi/os, smpi/or: offset and per-byte seconds) and the per-size breakpoints
found by the fit (smpi/bw-factor and smpi/lat-factor, one factor per segment, relative
to the platform's bandwidth and latency; smpi/async-small-thresh and
smpi/send-is-detached-thresh at a fitted eager threshold). A paced platform's flags
come from its pacing and bucket instead (smpi_platform.pacing_cfg, _sustained).
"""
from __future__ import annotations

from pathlib import Path

from .smpi_platform import pacing_cfg


def _num(x: float) -> str:
    return f"{x:.9g}"


def simgrid_texts(platform, segments=(), eager_threshold: int | None = None) -> tuple[str, str]:
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


def write_simgrid(platform, xml_path: Path, cfg_path: Path, segments=(),
                  eager_threshold: int | None = None) -> None:
    xml, cfg = simgrid_texts(platform, segments, eager_threshold)
    Path(xml_path).write_text(xml, encoding="utf-8")
    Path(cfg_path).write_text(cfg, encoding="utf-8")
