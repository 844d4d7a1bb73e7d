"""Placement: block and cyclic maps, Open MPI rankfiles and hostfiles read into maps, the
flag on every command, scenario sweeps, and replays that keep the placement a run recorded."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

import hopsim
from hopsim.calibration.validate import MAX_ITERATIONS
from hopsim.errors import InputError
from hopsim.placement import read, resolve

DATA = Path(__file__).parent / "data"

# Four 4-core nodes, L = 10 us, 1 Gbit/s, a 5 us per-message NIC queue each way; inside a
# node 0.5 us and 50 Gbit/s, bypassing the NIC.
PLATFORM = """name = "placed"
[nodes]
count = 4
cores = 4
[network]
latency_us = 10.0
bandwidth_gbps = 1.0
nic_message_us = 5.0
[intranode]
latency_us = 0.5
bandwidth_gbps = 50.0
"""


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)], capture_output=True,
                          text=True, timeout=300, cwd=cwd)


@pytest.fixture
def platform(tmp_path):
    path = tmp_path / "placed.toml"
    path.write_text(PLATFORM)
    return str(path)


# -- the maps -----------------------------------------------------------------------------

def test_block_and_cyclic_give_open_mpis_maps(platform):
    # 6 ranks, 2 per node on 3 nodes: --map-by slot fills node 0 first (0,0,1,1,2,2);
    # --map-by node deals rank r to node r mod 3 (0,1,2,0,1,2).
    kw = dict(ranks=6, ranks_per_node=2, sizes=[0], repetitions=1)
    block = hopsim.simulate(platform, "exchange", **kw)
    cyclic = hopsim.simulate(platform, "exchange", placement="cyclic", **kw)
    assert block.per_rank["node"] == [0, 0, 1, 1, 2, 2]
    assert cyclic.per_rank["node"] == [0, 1, 2, 0, 1, 2]
    assert block.parameters["placement"] == "block"
    assert cyclic.parameters["placement"] == "cyclic"


def test_cyclic_exchange_pays_the_nic_queue_for_every_neighbour(platform):
    # IMB Exchange, 4 ranks, 2 per node, 0 bytes, NIC queue c = 5 per message each way:
    # block (0,1 | 2,3) sends 2 of the 8 messages across each way: the second leaves its
    # node's queue at 2c, arrives L later and clears the receiver's queue at 3c + L = 25.
    # cyclic (0,2 | 1,3) puts both neighbours of every rank on the other node: 4 messages
    # each way, the last handed over at 5c + L = 35. The difference is 2c = 10 us.
    out = {}
    for placement in ("block", "cyclic"):
        p = cli("simulate", "--platform", platform, "--workload", "exchange", "--ranks", 4,
                "--ranks-per-node", 2, "--sizes", 0, "--repetitions", 1, "--placement",
                placement, "--json")
        assert p.returncode == 0, p.stderr
        out[placement] = json.loads(p.stdout)["results"]["rows"][0]["t_max_us"]
    assert out["block"] == pytest.approx(3 * 5 + 10, abs=1e-9)
    assert out["cyclic"] == pytest.approx(5 * 5 + 10, abs=1e-9)


def test_a_rankfile_decides_whether_a_pingpong_crosses_the_network(platform, tmp_path):
    # 6250 bytes inside a node: 0.5 + 6250/6250 = 1.5 us; across: L + s/B + 2c
    # = 10 + 50 + 10 = 70 us.
    same, apart = tmp_path / "same", tmp_path / "apart"
    same.write_text("rank 0=n1 slot=0\nrank 1=n1 slot=1\n")
    apart.write_text("rank 0=n1 slot=0\nrank 1=n2 slot=0\n")
    lat = {f.name: hopsim.simulate(platform, "pingpong", ranks=2, sizes=[6250], iterations=3,
                                   placement=str(f)).results["rows"][0]["latency_us"]
           for f in (same, apart)}
    assert lat["same"] == pytest.approx(1.5, abs=1e-9)
    assert lat["apart"] == pytest.approx(70, abs=1e-9)


# -- Open MPI's files ---------------------------------------------------------------------

RANKFILE = """# Open MPI 4.1 rankfile (orte/mca/rmaps/rank_file grammar)
rank 0=aa.cluster.example slot=1:0-2
rank 1=bb slot=0,1   // a C++ comment
/* a block
   comment */
rank 3=aa slots=2
rank 2=user@10.0.0.7 slot=0
rank 4 = bb slot = 3
"""


def test_rankfile_in_open_mpis_grammar():
    p = read(RANKFILE, "rf", 5)
    # Nodes in order of first appearance; the domain stripped (aa.cluster.example is aa),
    # user@ dropped, an IP address kept whole.
    assert p.node_map == (0, 1, 2, 0, 1)
    assert p.hosts == ("aa", "bb", "10.0.0.7")
    assert p.ranks_per_node() == 2
    # As mpirun -np 3 with this file: ranks 3 and 4 are not launched.
    assert read(RANKFILE, "rf", 3).node_map == (0, 1, 2)
    # Open MPI's relative nodes: +nK is the K-th node of the allocation.
    assert read("rank 0=+n2 slot=0\nrank 1=+n0 slot=0\n", "rf", 2).node_map == (2, 0)


@pytest.mark.parametrize("text, fragment", [
    ("rank 0=a slot=0\nrank 1=b\n", "rf:2: expected 'rank N=HOST slot=LIST'"),
    ("rank 0=a slot=0\nrank 0=b slot=0\n", "rf:2: rank 0 is placed twice"),
    ("rank 0=a slot=0\nrank 2=b slot=0\n", "rf: rank 1 has no line"),
    ("rank 0=a slot=0\nrank 1=+n1 slot=0\n", "rf:2: mixes host names and +n relative nodes"),
    ("rank 0=\"a\" slot=0\n", "rf:1: expected"),
    ("# nothing\nrank x=a slot=0\n", "rf:2: expected"),
])
def test_bad_rankfiles_name_file_and_line(text, fragment):
    with pytest.raises(InputError, match=None) as e:
        read(text, "rf", 2)
    assert fragment in str(e.value)


HOSTFILE = """# Open MPI hostfile
a slots=2
b slots=4 max_slots=8
"""


def test_hostfile_by_slot_and_by_node():
    # --map-by slot fills a's 2 slots, then b: 0,0,1,1.
    assert read(HOSTFILE, "hf", 4, "block").node_map == (0, 0, 1, 1)
    # --map-by node (rmaps_rr_bynode): 4 ranks over 2 hosts, avg 2 each; ranked by node:
    # 0 on a, 1 on b, 2 on a, 3 on b.
    assert read(HOSTFILE, "hf", 4, "cyclic").node_map == (0, 1, 0, 1)
    # 5 ranks: avg 2, one extra for the first host that has room; a has 2 slots only and
    # takes 2, b takes 2, then the one left goes to b: counts 2, 3, dealt 0,1,0,1,1.
    assert read(HOSTFILE, "hf", 5, "cyclic").node_map == (0, 1, 0, 1, 1)
    assert read(HOSTFILE, "hf", 5, "block").node_map == (0, 0, 1, 1, 1)
    # A host listed twice without slots has a slot per line (orte/util/hostfile).
    assert read("x\nx\ny\n", "hf", 3, "block").node_map == (0, 0, 1)
    assert read("x\nx\ny\n", "hf", 3, "block").hosts == ("x", "y")


@pytest.mark.parametrize("text, ranks, fragment", [
    ("a slots=2\nb slots=two\n", 2, "hf:2: slots must be a positive integer"),
    ("a slots=2\nb sockets=2\n", 2, "hf:2: unknown hostfile key 'sockets'"),
    ("a slots=1\nb slots=1\n", 3, "hf: 3 ranks need 3 slots; the hostfile has 2"),
    ("a slots=2\na slots=3\n", 2, "hf:2: the slots of a are given twice"),
    ("a slots=4 max_slots=2\n", 2, "hf:1: max_slots 2 is below slots 4"),
    ("^a\nb\n", 1, "hf:1: excluded (^) and relative (+) hosts are not read"),
    ("# only a comment\n", 1, "hf: no host in this hostfile"),
])
def test_bad_hostfiles_name_file_and_line(text, ranks, fragment):
    with pytest.raises(InputError) as e:
        read(text, "hf", ranks, "block")
    assert fragment in str(e.value)


def test_a_bad_placement_file_is_one_line_and_exit_2(platform, tmp_path):
    bad = tmp_path / "ranks.txt"
    bad.write_text("rank 0=a slot=0\nrank 1 a slot=0\n")
    p = cli("simulate", "--platform", platform, "--workload", "pingpong", "--ranks", 2,
            "--placement", bad)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == f"hopsim: error: {bad}:2: expected 'rank N=HOST slot=LIST' (Open MPI " \
                       f"rankfile), got 'rank 1 a slot=0'\n"
    for value, fragment in (("cyclic:" + str(bad), "a rankfile places every rank itself"),
                            (str(tmp_path / "missing"), "is not block, cyclic or an existing")):
        p = cli("simulate", "--platform", platform, "--workload", "pingpong", "--ranks", 2,
                "--placement", value)
        assert p.returncode == 2 and fragment in p.stderr and "Traceback" not in p.stderr


def test_maps_that_do_not_fit_the_platform_are_refused(platform):
    with pytest.raises(InputError, match="placement: the map uses node 4"):
        hopsim.simulate(platform, "pingpong", ranks=2, sizes=[0], placement=[0, 4])
    with pytest.raises(InputError, match="placement: the map puts 5 ranks per node exceed"):
        hopsim.simulate(platform, "exchange", ranks=5, sizes=[0], placement=[1] * 5)
    with pytest.raises(InputError, match="the map has 3 entries for 2 ranks"):
        hopsim.simulate(platform, "pingpong", ranks=2, sizes=[0], placement=[0, 1, 1])


def test_nodes_on_simulate_scales_the_platform(platform):
    args = ("simulate", "--platform", platform, "--workload", "exchange", "--ranks", 12,
            "--ranks-per-node", 2, "--sizes", 0, "--repetitions", 1, "--json")
    p = cli(*args)
    assert p.returncode == 2 and "need 6 nodes; platform placed (4 nodes" in p.stderr
    p = cli(*args, "--nodes", 6, "--placement", "cyclic")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["parameters"]["placement"] == "cyclic"
    p = cli(*args, "--nodes", 0)
    assert p.returncode == 2 and p.stderr.startswith("hopsim: error: --nodes:")


# -- scenarios and replays ----------------------------------------------------------------

def test_scenarios_sweep_placement_and_read_files_beside_them(platform, tmp_path):
    (tmp_path / "ranks.txt").write_text("rank 0=x slot=0\nrank 1=y slot=0\nrank 2=x slot=1\n"
                                        "rank 3=y slot=1\n")
    (tmp_path / "study.toml").write_text(
        f'platform = "{platform}"\nworkload = "exchange"\nranks = 4\nranks_per_node = 2\n'
        'sizes = [0]\nrepetitions = 1\n[sweep]\nplacement = ["block", "cyclic", "ranks.txt"]\n')
    p = cli("run", tmp_path / "study.toml", "--out", tmp_path / "out", cwd="/")
    assert p.returncode == 0, p.stderr
    runs = [p["result"] for p in json.loads((tmp_path / "out" / "results.json").read_text())["points"]]
    t_max = [r["results"]["rows"][0]["t_max_us"] for r in runs]
    # The rankfile places ranks as cyclic does (x: 0, 2; y: 1, 3): 3c + L, 5c + L, 5c + L.
    assert t_max == pytest.approx([25, 35, 35], abs=1e-9)
    assert [r["parameters"]["placement"] for r in runs] == ["block", "cyclic", [0, 1, 0, 1]]
    csv = (tmp_path / "out" / "results.csv").read_text().splitlines()
    column = csv[0].split(",").index("placement")
    assert [row.split(",")[column] for row in csv[1:]] == ["block", "cyclic", "ranks.txt"]


def test_validate_replays_the_recorded_placement_and_applies_the_flag_to_other_files(
        platform, tmp_path):
    run = hopsim.simulate(platform, "exchange", ranks=4, ranks_per_node=2, sizes=[0],
                          repetitions=1, placement="cyclic")
    recorded = tmp_path / "cyclic.json"
    recorded.write_text(run.to_json())
    imb = DATA / "imb" / "IMB-MPI1-p2p-np4-tcp.txt"

    def simulated(*flags):
        p = cli("validate", "--platform", platform, recorded, imb, "--ranks-per-node", 2,
                *flags, "--json")
        assert p.returncode == 0, p.stderr
        cases = json.loads(p.stdout)["cases"]
        return ({c["bytes"]: c["simulated_us"] for c in cases if c["file"] == str(recorded)},
                {(c["workload"], c["bytes"]): c["simulated_us"] for c in cases
                 if c["file"] == str(imb) and c["ranks"] == 4})

    own_block, imb_block = simulated()
    own_cyclic, imb_cyclic = simulated("--placement", "cyclic")
    # validate compares IMB's t_avg over the file's 200 repetitions (at most validate's
    # cap); the engine's per placement, for the same run:
    reps = min(200, MAX_ITERATIONS)
    t_avg = {placement: hopsim.simulate(platform, "exchange", ranks=4, ranks_per_node=2,
                                        sizes=[0], repetitions=reps, placement=placement)
             .results["rows"][0]["t_avg_us"] for placement in ("block", "cyclic")}
    assert t_avg["block"] != t_avg["cyclic"]
    # hopsim's JSON keeps its own (cyclic) placement whatever the flag says.
    assert own_block == own_cyclic == {0: pytest.approx(run.results["rows"][0]["t_avg_us"], abs=1e-9)}
    # IMB's file says nothing: the flag decides.
    assert imb_block[("exchange", 0)] == pytest.approx(t_avg["block"], abs=1e-9)
    assert imb_cyclic[("exchange", 0)] == pytest.approx(t_avg["cyclic"], abs=1e-9)


def test_live_places_ranks_on_hosts_only_with_hosts():
    p = cli("live", "--workload", "pingpong", "--ranks", 2, "--placement", "cyclic")
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == ("hopsim: error: --placement: placing ranks on hosts needs --hostfile "
                        "or --emulate-cluster\n")


def test_by_node_spreads_the_rest_again_when_a_host_is_full():
    # 10 ranks by node over a (1 slot), b and c (8 each): a takes the one it has, the 9
    # left spread evenly over b and c, the first taking the odd one: 1, 5, 4. Ranked by
    # node, one per host per round, skipping a full host: a b c | b c | b c | b c | b.
    hosts = "a slots=1\nb slots=8\nc slots=8\n"
    assert read(hosts, "hf", 10, "cyclic").node_map == (0, 1, 2, 1, 2, 1, 2, 1, 2, 1)
    # 4 ranks over 3 hosts of 8: 1 each and the one left to the first: 2, 1, 1.
    assert read("x slots=8\ny slots=8\nz slots=8\n", "hf", 4, "cyclic").node_map == (0, 1, 2, 0)


def test_a_block_comment_inside_a_line_is_skipped_and_the_line_goes_on():
    # "host1 /**/ slots=3": the comment closes where it opens; slots=3 still counts, and
    # the next line is a host of its own.
    p = read("host1 /**/ slots=3\nhost2 slots=1\n", "hf", 4, "block")
    assert p.node_map == (0, 0, 0, 1) and p.hosts == ("host1", "host2")


def test_a_rankfile_missing_several_ranks_names_the_first():
    with pytest.raises(InputError, match="rf: rank 1 has no line"):
        read("rank 0=a slot=0\nrank 3=b slot=0\n", "rf", 4)
