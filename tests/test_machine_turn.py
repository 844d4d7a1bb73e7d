"""Every node on one machine (`[nodes] machine_cores`, `[host] turn_us`, docs/model.md):
with n ranks per machine core (n > 1), a pass lasts at least n x turn_us."""
import pytest

import hopsim
from hopsim import InputError
from hopsim.platforms import parse_platform
from hopsim.platforms.platform_file import platform_toml

# docs/model.md's tested example: pass 3, o_s 1, o_r 2, L 10, 0 bytes: half round trip 16.5 us.
BASE = """\
name = "m"
[nodes]
count = 2
cores = 1
{nodes}
[network]
latency_us = 10.0
bandwidth_gbps = 1.0
[host]
pass_us = {pass_us}
send_overhead_us = 1.0
recv_overhead_us = 2.0
{host}
"""


def platform(pass_us=3.0, nodes="", host=""):
    return parse_platform(BASE.format(pass_us=pass_us, nodes=nodes, host=host), "m.toml")


def half_round_trip(p, ranks=2, ranks_per_node=1) -> float:
    r = hopsim.simulate(p, "pingpong", ranks=ranks, ranks_per_node=ranks_per_node, sizes=[0])
    return r.results["rows"][0]["latency_us"]


def test_two_ranks_on_one_core_take_turns_of_the_pass():
    # 2 ranks on a machine of 1 core: n = 2, so a pass of 2 x 1.5 = 3 us replaces the 0 us
    # one: the documented example's 16.5 us.
    p = platform(pass_us=0.0, nodes="machine_cores = 1", host="turn_us = 1.5")
    assert half_round_trip(p) == pytest.approx(16.5, abs=1e-6)
    assert half_round_trip(platform(pass_us=0.0)) < 16.0


def test_a_longer_pass_of_its_own_stands():
    # n x turn = 2 us, under the rank's own 3 us pass: the pass stays 3 us.
    p = platform(pass_us=3.0, nodes="machine_cores = 1", host="turn_us = 1.0")
    assert half_round_trip(p) == pytest.approx(16.5, abs=1e-6)


def test_ranks_within_the_machine_cores_take_no_turns():
    # 2 ranks on 2 machine cores: n = 1, the turn is never taken.
    p = platform(pass_us=3.0, nodes="machine_cores = 2", host="turn_us = 50.0")
    assert half_round_trip(p) == pytest.approx(16.5, abs=1e-6)


def test_the_turns_count_every_rank_of_the_run():
    # 4 ranks on 2 nodes (2 each, cores = 2), one machine of 2 cores: n = 2 for every rank,
    # though no node has more ranks than its own cores.
    text = BASE.replace("cores = 1", "cores = 2")
    def two_per_node(nodes, host, pass_us):
        p = parse_platform(text.format(pass_us=pass_us, nodes=nodes, host=host), "m.toml")
        r = hopsim.simulate(p, "roundtrip", ranks=4, ranks_per_node=2, exchanges=50,
                            request_bytes=0)
        return r.results["lc_average_of_averages_us"]
    turned = two_per_node("machine_cores = 2", "turn_us = 4.0", 0.0)
    assert turned == pytest.approx(two_per_node("", "", 8.0), rel=1e-12)
    assert turned > two_per_node("", "", 0.0) + 5


@pytest.mark.parametrize("nodes, host, key", [
    ("", "turn_us = 5.0", "host.turn_us"),
    ("machine_cores = 0", "", "nodes.machine_cores"),
    ("machine_cores = 1.5", "", "nodes.machine_cores"),
    ("machine_cores = 2", "turn_us = -1.0", "host.turn_us"),
])
def test_bad_values_name_their_key(nodes, host, key):
    with pytest.raises(InputError) as info:
        platform(nodes=nodes, host=host)
    assert key in str(info.value) and "\n" not in str(info.value), str(info.value)


def test_written_only_when_set_and_read_back():
    plain = platform()
    assert "machine_cores" not in platform_toml(plain, [])
    assert "machine_cores" not in plain.to_engine_dict()
    p = platform(nodes="machine_cores = 2", host="turn_us = 5.0")
    text = platform_toml(p, [])
    assert "machine_cores = 2" in text and "turn_us = 5.0" in text
    again = parse_platform(text, "again.toml")
    assert (again.machine_cores, again.turn_us) == (2, 5.0)
    assert "one machine of 2 cores, a turn of 5 us" in again.summary()


def test_smpi_export_refuses_the_shared_machine(tmp_path):
    from hopsim.platforms.export import export
    f = tmp_path / "m.toml"
    f.write_text(platform_toml(platform(nodes="machine_cores = 2", host="turn_us = 5.0"), []))
    with pytest.raises(InputError, match="machine_cores = 2 has no SMPI equivalent"):
        export(str(f), tmp_path / "out")
    assert list(tmp_path.iterdir()) == [f]
