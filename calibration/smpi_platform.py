"""A hopsim platform as SimGrid SMPI sees it: platform XML plus --cfg flags.

The one mapping from hopsim's PlatformSpec (Platform.to_engine_dict(), the dict the
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

from pathlib import Path
from xml.sax.saxutils import quoteattr

from ..errors import InputError

GIB = 1 << 30
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
# equivalent.
_OFF = {"eager_threshold_bytes": (-1,), "noise_distribution": ("lognormal",),
        "probe": ("arrival", "post"), "transport": ("flow",)}


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


def export(platform, prefix: Path) -> tuple[Path, Path]:
    """Write PREFIX.xml and PREFIX.smpi (one --cfg flag per line), both or neither."""
    from .. import platforms
    from ..outputs import Outputs
    from .cli import SMPI_SUFFIX

    spec = platforms.load(platform).to_engine_dict()
    xml, flags = platform_xml(spec), cfg_flags(spec)
    prefix = Path(prefix)
    if prefix.name in ("", ".", ".."):
        raise InputError(f"--out: expected a file name prefix, got {str(prefix)!r}")
    with Outputs() as outputs:
        xml_path = outputs.file(prefix.with_name(prefix.name + ".xml"), "--out (its .xml)")
        cfg_path = outputs.file(prefix.with_name(prefix.name + SMPI_SUFFIX), f"--out (its {SMPI_SUFFIX})")
        outputs.text(xml_path, xml)
        outputs.text(cfg_path, "\n".join(flags) + "\n")
    return prefix.with_name(prefix.name + ".xml"), prefix.with_name(prefix.name + SMPI_SUFFIX)


def add_export_arguments(p) -> None:
    p.add_argument("action", nargs="?", choices=("export", "show"),
                   help="export: write a platform for SimGrid (see --format); show: print a "
                        "platform's whole TOML with the provenance of every value; default: "
                        "list the presets")
    p.add_argument("platform", nargs="?", metavar="NAME_OR_FILE",
                   help="with export or show: the preset name or platform TOML file")
    p.add_argument("--format", choices=("simgrid-xml",),
                   help="with export: the output format (default simgrid-xml: a SimGrid "
                        "platform XML and a file of SMPI --cfg flags, one per line)")
    p.add_argument("--out", metavar="PREFIX", help="with export: write PREFIX.xml and "
                                                   "PREFIX.smpi (default: the platform's "
                                                   "name, in the current folder)")


def run_export(args) -> int:
    import sys

    if args.platform is None:
        raise InputError("platforms export: name a platform (a preset or a TOML file)")
    from .. import platforms
    from ..outputs import safe_name

    if args.out is None:
        # The default prefix comes from the file's content: a name, never a path.
        prefix = safe_name(platforms.load(args.platform).name, "the platform's name")
    elif args.out == "":
        raise InputError("--out: expected a file name prefix, got an empty string")
    else:
        prefix = args.out
    xml_path, cfg_path = export(args.platform, Path(prefix))
    sys.stdout.write(f"wrote {xml_path} and {cfg_path}\n"
                     f"run: smpirun -platform {xml_path} -hostfile HOSTFILE -np N "
                     f"$(cat {cfg_path}) PROGRAM\n")
    return 0
