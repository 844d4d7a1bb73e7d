"""Platform files: the minimal file, presets, and every rejection with the key it names."""
import re
import tomllib
from pathlib import Path

import pytest

from hopsim import InputError, platforms
from hopsim.platforms import Platform, parse_platform
from hopsim.platforms.simgrid import check_expressible
from hopsim.platforms.platform_file import platform_toml

SPEC_HPP = Path(__file__).resolve().parents[1] / "simulator" / "spec.hpp"

MINIMAL = """\
name = "two-nodes"
[nodes]
count = 2
cores = 1
[network]
latency_us = 10.0
bandwidth_gbps = 1.0
"""


def parse(text: str) -> Platform:
    return parse_platform(text, "test.toml")


def with_lines(*lines: str, base: str = MINIMAL) -> str:
    """MINIMAL with extra lines appended (each may open a section)."""
    return base + "\n".join(lines) + "\n"


def rejects(text: str, *fragments: str):
    with pytest.raises(InputError) as info:
        parse(text)
    message = str(info.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_the_issues_minimal_file_is_valid_with_zero_host_costs():
    p = parse(MINIMAL)
    assert (p.name, p.nodes, p.cores, p.latency_us, p.bandwidth_gbps) == ("two-nodes", 2, 1, 10.0, 1.0)
    assert (p.send_overhead_us, p.recv_overhead_us, p.per_byte_overhead_ns, p.gap_us,
            p.pass_us) == (0, 0, 0, 0, 0)
    assert p.topology == "star" and p.reception == "any-source" and p.backbone_gbps == 0


def test_intranode_defaults_to_the_network_values_and_follows_them():
    p = parse(MINIMAL)
    spec = p.to_engine_dict()
    assert (spec["intra_latency_us"], spec["intra_bandwidth_gbps"]) == (10.0, 1.0)
    faster = p.replace(latency_us=2.5)
    assert faster.to_engine_dict()["intra_latency_us"] == 2.5
    explicit = parse(with_lines("[intranode]", "latency_us = 0.5", "bandwidth_gbps = 80"))
    assert (explicit.to_engine_dict()["intra_latency_us"],
            explicit.to_engine_dict()["intra_bandwidth_gbps"]) == (0.5, 80.0)


def spec_fields(struct: str) -> list[str]:
    body = re.search(rf"struct {struct} {{(.*?)\n}};", SPEC_HPP.read_text(), re.S).group(1)
    return re.findall(r"^\s+[\w:<>, ]+?\s(\w+)\s*[=;]", body, re.M)


# Sent only when set, so that every platform without them keeps its values hash.
ONLY_WHEN_SET = {"machine_cores", "turn_us", "backbone_scope"}


def test_engine_dict_has_exactly_the_fields_of_PlatformSpec():
    host = ("[host]", "send_overhead_us = 1", "recv_overhead_us = 2", "per_byte_overhead_ns = 0.1",
            "gap_us = 3", "pass_us = 0.25", 'reception = "round-robin"')
    full = parse(with_lines(*host))
    spec = full.to_engine_dict()
    assert sorted(spec) == sorted(set(spec_fields("PlatformSpec")) - ONLY_WHEN_SET)
    machine = parse(with_lines(*host, "turn_us = 2.5", "eager_threshold_bytes = 65480")
                    .replace("[nodes]", "[nodes]\nmachine_cores = 2")
                    .replace("[network]", '[network]\nbackbone_gbps = 2.0\nbackbone_scope = "rendezvous"'))
    assert sorted(machine.to_engine_dict()) == sorted(spec_fields("PlatformSpec"))
    assert (machine.to_engine_dict()["machine_cores"], machine.to_engine_dict()["turn_us"]) == (2, 2.5)
    assert spec["reception"] == "round-robin" and spec["pass_us"] == 0.25
    assert full.to_engine_dict(reception="any-source")["reception"] == "any-source"


def test_reception_override_is_validated():
    with pytest.raises(InputError, match="host.reception"):
        parse(MINIMAL).to_engine_dict(reception="sometimes")


@pytest.mark.parametrize("name", platforms.list_presets())
def test_every_preset_loads_under_its_file_name_and_sources_every_number(name):
    p = platforms.load(name)
    assert p.name == name and p.description
    doc = tomllib.loads((platforms.PRESET_DIR / f"{name}.toml").read_text())
    given = [f"{section}.{key}" for section, table in doc.items()
             if isinstance(table, dict) and section != "provenance" for key in table]
    missing = [key for key in given if key not in p.provenance]
    assert not missing, f"{name}: no provenance for {missing}"
    assert not any("PROVISIONAL" in v for v in p.provenance.values())


def test_required_presets_exist():
    assert {"two-nodes", "ec2-10gbe", "qlogic-ib"} <= set(platforms.list_presets())
    assert platforms.load("two-nodes").to_engine_dict() == parse(MINIMAL).to_engine_dict()


def test_load_takes_a_file_path(tmp_path):
    f = tmp_path / "mine.toml"
    f.write_text(MINIMAL.replace("two-nodes", "mine"))
    assert platforms.load(str(f)).name == "mine"
    assert platforms.load(f).name == "mine"


def test_unknown_preset_lists_the_presets():
    with pytest.raises(InputError, match=r"unknown platform 'nosuch'.*two-nodes"):
        platforms.load("nosuch")


def test_missing_file_is_named():
    with pytest.raises(InputError, match="nothere.toml: cannot read"):
        platforms.load("nothere.toml")


def test_malformed_toml():
    rejects("name = \"x\"\n[nodes\ncount = 2\n", "test.toml", "malformed TOML", "line 2")


@pytest.mark.parametrize("lines, key", [
    (["[host]", "colour = 3"], "unknown key host.colour"),
    (["[network.extra]", "x = 1"], "unknown key network.extra"),
    (["[host]", "pass_ns = 1"], "unknown key host.pass_ns"),
    (["[wires]", "latency_us = 1"], "unknown section [wires]"),
    (["[provenance]", '"network.latncy_us" = "a paper"'], "provenance.network.latncy_us"),
])
def test_unknown_keys_are_named(lines, key):
    rejects(with_lines(*lines), key)


def test_unknown_top_level_key():
    rejects("colour = 3\n" + MINIMAL, "test.toml: unknown key colour")


def test_a_misspelt_key_gets_a_suggestion():
    text = MINIMAL.replace("latency_us", "latncy_us")
    rejects(text, "unknown key network.latncy_us", "did you mean network.latency_us")


@pytest.mark.parametrize("key", ["name", "nodes.count", "nodes.cores", "network.latency_us",
                                 "network.bandwidth_gbps"])
def test_missing_required_keys_are_named(key):
    section, _, leaf = key.rpartition(".")
    lines = [line for line in MINIMAL.splitlines() if not line.startswith(f"{leaf} =")]
    rejects("\n".join(lines), f"missing key {key}")


@pytest.mark.parametrize("old, new, fragment", [
    ("count = 2", "count = 0", "nodes.count: must be at least 1"),
    ("count = 2", "count = -3", "nodes.count: must be at least 1"),
    ("cores = 1", "cores = 0", "nodes.cores: must be at least 1"),
    ("bandwidth_gbps = 1.0", "bandwidth_gbps = 0", "network.bandwidth_gbps: must be > 0"),
    ("bandwidth_gbps = 1.0", "bandwidth_gbps = -1.0", "network.bandwidth_gbps: must be > 0"),
    ("latency_us = 10.0", "latency_us = -0.5", "network.latency_us: must be >= 0"),
    ("latency_us = 10.0", "latency_us = inf", "network.latency_us: must be finite"),
    ("latency_us = 10.0", "latency_us = nan", "network.latency_us: must be finite"),
])
def test_zero_or_negative_values_are_rejected_where_meaningless(old, new, fragment):
    rejects(MINIMAL.replace(old, new), fragment)


@pytest.mark.parametrize("line", ["send_overhead_us = -1", "recv_overhead_us = -1",
                                  "per_byte_overhead_ns = -0.1", "gap_us = -2", "pass_us = -1"])
def test_negative_host_costs_are_rejected(line):
    rejects(with_lines("[host]", line), f"host.{line.split()[0]}: must be >= 0")


@pytest.mark.parametrize("lines, fragment", [
    (["[intranode]", "bandwidth_gbps = 0"], "intranode.bandwidth_gbps: must be > 0"),
    (["[intranode]", "latency_us = -1"], "intranode.latency_us: must be >= 0"),
    (["backbone = 1"], "unknown key network.backbone"),
])
def test_intranode_and_backbone_ranges(lines, fragment):
    rejects(with_lines(*lines), fragment)


def test_negative_backbone_is_rejected_and_zero_means_none():
    text = MINIMAL.replace("bandwidth_gbps = 1.0", "bandwidth_gbps = 1.0\nbackbone_gbps = {}")
    rejects(text.format(-5), "network.backbone_gbps: must be >= 0")
    assert parse(text.format(40)).backbone_gbps == 40.0
    assert parse(text.format(0)).backbone_gbps == 0.0


def test_limiter_negative_rejected_zero_none_and_star_only():
    text = MINIMAL.replace("bandwidth_gbps = 1.0", "bandwidth_gbps = 1.0\nlimiter_gbps = {}")
    rejects(text.format(-1), "network.limiter_gbps: must be >= 0")
    assert parse(text.format(1.5)).limiter_gbps == 1.5
    assert parse(text.format(0)).limiter_gbps == 0.0
    torus = text.format(1.5).replace("count = 2", "count = 4") + \
        'topology = "torus"\ntopology_parameters = "2,2"\n'
    rejects(torus, "network.limiter_gbps: runs on the star topology only")


def test_limiter_scope_all_or_rendezvous_which_needs_an_eager_threshold():
    text = MINIMAL.replace("bandwidth_gbps = 1.0", "bandwidth_gbps = 1.0\nlimiter_gbps = 1.5\n"
                                                   "limiter_scope = {}")
    assert parse(MINIMAL).limiter_scope == "all"
    rejects(text.format('"eager"'), "network.limiter_scope: must be one of all, rendezvous, got 'eager'")
    rejects(text.format('"rendezvous"'), "network.limiter_scope:", "needs host.eager_threshold_bytes")
    p = parse(text.format('"rendezvous"') + "[host]\neager_threshold_bytes = 65480\n")
    assert p.limiter_scope == "rendezvous"
    assert p.to_engine_dict()["limiter_scope"] == "rendezvous"
    # SimGrid's limiter_link binds every byte: a rendezvous-only limiter is not exported.
    spec = dict(p.to_engine_dict(), eager_threshold_bytes=-1)  # not exported either
    with pytest.raises(InputError, match="limiter_scope = 'rendezvous' has no SMPI equivalent"):
        check_expressible(spec)
    check_expressible(dict(spec, limiter_scope="all"))


def test_backbone_scope_needs_a_backbone_and_an_eager_threshold_and_is_written_only_when_set():
    text = MINIMAL.replace("bandwidth_gbps = 1.0", "bandwidth_gbps = 1.0\nbackbone_gbps = 1.5\n"
                                                   "backbone_scope = {}")
    plain = parse(MINIMAL)
    assert plain.backbone_scope is None and "backbone_scope" not in plain.to_engine_dict()
    assert "backbone_scope" not in platform_toml(plain, [])
    rejects(text.format('"eager"'), "network.backbone_scope: must be one of all, rendezvous, got 'eager'")
    rejects(text.format('"rendezvous"'), "network.backbone_scope:", "needs host.eager_threshold_bytes")
    rejects(text.format('"rendezvous"').replace("backbone_gbps = 1.5", "backbone_gbps = 0")
            + "[host]\neager_threshold_bytes = 65480\n", "network.backbone_scope:", "needs network.backbone_gbps")
    p = parse(text.format('"rendezvous"') + "[host]\neager_threshold_bytes = 65480\n")
    assert p.to_engine_dict()["backbone_scope"] == "rendezvous"
    assert 'backbone_scope = "rendezvous"' in platform_toml(p, [])
    spec = dict(p.to_engine_dict(), eager_threshold_bytes=-1)
    with pytest.raises(InputError, match="backbone_scope = 'rendezvous' has no SMPI equivalent"):
        check_expressible(spec)
    check_expressible(dict(spec, backbone_scope="all"))


@pytest.mark.parametrize("old, new, fragment", [
    ("count = 2", "count = 2.0", "nodes.count: must be an integer"),
    ("count = 2", 'count = "2"', "nodes.count: must be an integer"),
    ("cores = 1", "cores = true", "nodes.cores: must be an integer"),
    ("latency_us = 10.0", 'latency_us = "10"', "network.latency_us: must be a number"),
    ("latency_us = 10.0", "latency_us = false", "network.latency_us: must be a number"),
    ('name = "two-nodes"', "name = 3", "name: must be a string"),
    ('name = "two-nodes"', 'name = " "', "name: must be a non-empty single line"),
    ("[nodes]\ncount = 2\ncores = 1", "nodes = 2", "nodes: must be a table"),
])
def test_wrong_types_are_named(old, new, fragment):
    rejects(MINIMAL.replace(old, new), fragment)


def test_reception_must_be_a_policy():
    rejects(with_lines("[host]", 'reception = "fifo"'), "host.reception: must be one of")
    assert parse(with_lines("[host]", 'reception = "round-robin"')).reception == "round-robin"


def topology(count: int, kind: str, params: str | None) -> str:
    text = MINIMAL.replace("count = 2", f"count = {count}")
    extra = [f'topology = "{kind}"'] + ([f'topology_parameters = "{params}"'] if params is not None else [])
    return text.replace("bandwidth_gbps = 1.0", "bandwidth_gbps = 1.0\n" + "\n".join(extra))


@pytest.mark.parametrize("count, kind, params", [
    (16, "fat-tree", "2;4,4;1,2;1,2"),
    (64, "torus", "4,4,4"),
    (120, "dragonfly", "3,4;4,3;5,1;2"),
])
def test_simgrid_topologies_with_matching_node_counts(count, kind, params):
    p = parse(topology(count, kind, params))
    assert p.to_engine_dict()["topology_parameters"] == params


@pytest.mark.parametrize("count, kind, params, fragment", [
    (15, "fat-tree", "2;4,4;1,2;1,2", "has 16 nodes, but nodes.count is 15"),
    (60, "torus", "4,4,4", "has 64 nodes, but nodes.count is 60"),
    (100, "dragonfly", "3,4;4,3;5,1;2", "has 120 nodes, but nodes.count is 100"),
    (16, "fat-tree", "2;4,4;1,2", "fat-tree: expected"),
    (16, "fat-tree", "2;4,4;1;1,2", "each list needs 2 values"),
    (16, "fat-tree", "2;4,x;1,2;1,2", "comma-separated integers"),
    (16, "torus", "4,0,4", "at least 1"),
    (120, "dragonfly", "3;4,3;5,1;2", "COUNT,LINKS"),
    (16, "torus", None, "needs SimGrid's parameter string"),
    (2, "star", "4,4", "only applies to fat-tree, torus and dragonfly"),
    (2, "hypercube", None, "network.topology: must be one of"),
])
def test_bad_topologies_are_named(count, kind, params, fragment):
    message = rejects(topology(count, kind, params), fragment)
    assert message.startswith("test.toml: network.") or message.startswith("test.toml: nodes.")


def test_provenance_accepts_dotted_and_nested_keys():
    p = parse(with_lines("[provenance]", 'network.latency_us = "a paper"',
                         '"nodes.count" = "the cluster"'))
    assert dict(p.provenance) == {"network.latency_us": "a paper", "nodes.count": "the cluster"}
    rejects(with_lines("[provenance]", "network.latency_us = 3"),
            "provenance.network.latency_us: must be a non-empty string")


def test_platform_values_are_validated_from_python_too():
    with pytest.raises(InputError, match="network.bandwidth_gbps"):
        Platform(name="x", nodes=1, cores=1, latency_us=1, bandwidth_gbps=-1)
    with pytest.raises(InputError, match="host.pass_us"):
        platforms.load("two-nodes").replace(pass_us=-1)


def test_an_eager_threshold_of_zero_or_more_is_kept_and_a_negative_one_refused():
    # found by bench/mutation.py: `< 0` turned into `> 0` refused every real threshold
    from hopsim.platforms import Platform

    base = dict(name="p", nodes=2, cores=1, latency_us=1.0, bandwidth_gbps=1.0)
    assert Platform(**base, eager_threshold_bytes=65536).eager_threshold_bytes == 65536
    assert Platform(**base, eager_threshold_bytes=0).eager_threshold_bytes == 0
    with pytest.raises(ValueError, match="eager_threshold_bytes"):
        Platform(**base, eager_threshold_bytes=-1)


# -- the SimGrid/SMPI texts (platforms/simgrid.py), numbers worked out by hand ----------

def test_export_xml_and_flags_by_hand():
    from hopsim.platforms.simgrid import cfg_flags, platform_xml

    spec = Platform(name="x", nodes=3, cores=2, latency_us=10.0, bandwidth_gbps=1.0,
                    pass_us=2.0).to_engine_dict()
    attrs = dict(re.findall(r'(\w+)="([^"]*)"', platform_xml(spec).split("<cluster ", 1)[1]))
    # hosts node-0..node-2; 1 Gbit/s = 10^9 / 8 = 125000000 B/s; each NIC half of 10 us.
    assert attrs["radical"] == "0-2" and attrs["core"] == "2"
    assert attrs["bw"] == "125000000Bps" and float(attrs["lat"][:-1]) == pytest.approx(5e-6)
    iprobe = [f for f in cfg_flags(spec) if f.startswith("--cfg=smpi/iprobe:")]
    assert [float(f.split(":", 1)[1]) for f in iprobe] == [pytest.approx(2e-6)]  # 2 us


def test_pacing_bounds_each_flow_by_a_window_of_twice_the_latency():
    from hopsim.platforms.simgrid import pacing_cfg

    # gamma = 2 L p = 2 x 10 us x 1 Gbit/s = 2 x 10^-5 s x 1.25 x 10^8 B/s = 2500 B.
    gamma = [c for c in pacing_cfg(10.0, 1.0) if c.startswith("network/TCP-gamma:")]
    assert [float(c.split(":", 1)[1]) for c in gamma] == [pytest.approx(2500.0)]


def test_a_token_bucket_under_pacing_becomes_a_factor_step_for_smpi():
    from hopsim.platforms.simgrid import _sustained

    # Paced at p = 1, bucket r = 0.5 Gbit/s of b = 1000 B: the ping-pong reaches r from
    # s* = b / (1 - r/p) = 2000 B (so the step starts at 2001), at r/p = 0.5 of the paced
    # rate, on the line L + (s - b)/r whose intercept is 20 - 8 x 1000 / 500 = 4 us, a
    # latency factor of 4 / 20 = 0.2.
    p = Platform(name="b", nodes=2, cores=1, latency_us=20.0, bandwidth_gbps=1.0,
                 pacing_gbps=1.0, bucket_gbps=0.5, bucket_burst_bytes=1000)
    start, rate, lat = _sustained(p)
    assert (start, rate) == (2001, 0.5) and lat == pytest.approx(0.2)


def test_a_small_message_segment_keeps_the_rate_and_moves_the_latency():
    from hopsim.calibration.segments import Segment
    from hopsim.platforms.simgrid import _bw_factor, _lat_factor

    # 20 us + 1 ns/B up to 1000 B: 1 us of 21 is serialisation, no rate (factor 1). At the
    # middle size, 500 B, the segment says 20.5 us and 1 Gbit/s puts 4 us on the wire:
    # the latency factor is (20.5 - 4) / 20 = 0.825.
    seg = Segment(0, 1000, 20.0, 0.001, 0.0, 4)
    assert _bw_factor(seg, 1.0) == 1.0
    assert _lat_factor(seg, 20.0, 1.0) == pytest.approx(0.825)


def test_a_value_given_after_loading_is_not_blamed_on_the_file(tmp_path):
    # A fit (or a flag) that sets an out-of-range value on a platform read from a file:
    # the message names the value as given, not as read from that file; a bad value in
    # the file itself still names the file.
    path = tmp_path / "base.toml"
    base = 'name = "b"\n[nodes]\ncount = 2\ncores = 1\n[network]\nlatency_us = 10.0\nbandwidth_gbps = 1.0\n'
    path.write_text(base)
    p = platforms.load(str(path))
    with pytest.raises(InputError) as e:
        p.replace(nic_message_us=0.0005)
    assert str(e.value).startswith("network.nic_message_us: must be 0 or at least 0.001 us")
    assert str(e.value).endswith(f"(given for the platform of {path}, not in that file)")
    assert p.replace(nic_message_us=0.002).nic_message_us == 0.002
    path.write_text(base + 'nic_message_us = 0.0005\n')
    with pytest.raises(InputError, match=rf"^{re.escape(str(path))}: network.nic_message_us: must be"):
        platforms.load(str(path))
