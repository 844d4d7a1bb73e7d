"""Platforms: the machines and network a simulation runs on.

A platform file is TOML with units in key names:

    name = "two-nodes"
    description = "..."                 # optional
    [nodes]      count, cores
    [network]    latency_us, bandwidth_gbps, backbone_gbps, limiter_gbps (optional, 0 = none),
                 topology ("star" default, "fat-tree", "torus", "dragonfly"),
                 topology_parameters (SimGrid's string; its node count must equal count)
    [intranode]  latency_us, bandwidth_gbps  (default: the network's values)
    [host]       send_overhead_us, recv_overhead_us, per_byte_overhead_ns, gap_us,
                 pass_us, reduce_ns_per_byte (all default 0), reception ("any-source"
                 default, "round-robin")
    [provenance] "network.latency_us" = "where this number comes from", ...

load() accepts a preset name (list_presets()) or a file; every error is an InputError
naming the file and the key.

simgrid.py writes a platform for SimGrid (platform XML and SMPI --cfg flags: the one
exporter, for `hopsim platforms export` and `hopsim calibrate --out`); export.py is the
export command; platform_file.py writes a Platform back as TOML.
"""
from .parse import load_file, parse_platform
from .platform import RECEPTIONS, TOPOLOGIES, Platform
from .presets import PRESET_DIR, list_presets, load, load_preset, show

__all__ = ["Platform", "load", "load_file", "load_preset", "list_presets", "parse_platform",
           "PRESET_DIR", "show", "RECEPTIONS", "TOPOLOGIES"]
