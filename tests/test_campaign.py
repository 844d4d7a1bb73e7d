"""calibrate --live --campaign (calibration/campaign.py): the probes, the flags' refusals,
and the campaign's identification checked on the engine's own outputs: every probe
simulated on a platform with known parameters, fitted back by calibrate's joint fit."""
import dataclasses
import json
import math
import os
import signal
import subprocess
import sys
import time

import pytest

from hopsim.calibration import campaign
from hopsim.calibration.calibrate import calibrate_files
from hopsim.calibration.joint import fit_joint
from hopsim.calibration.parsers import parse_file
from hopsim.calibration.structure import BIC_MARGIN
from hopsim.calibration.validate import cases_of
from hopsim.live.mpirun import algorithm_arguments
from hopsim.errors import InputError
from hopsim.platforms.platform import Platform
from hopsim.workload import make_workload

# Like the 200 Mbit/s emulated cluster (tests/test_calibrate_pacing.py's fit of it): a
# fast line, each connection paced above one packet, a token bucket on the link; plus a
# per-node NIC message cost and a faster intra-node path.
PACED = Platform(name="paced", nodes=4, cores=2, latency_us=20.0, bandwidth_gbps=9.0,
                 pacing_gbps=0.4, pacing_above_bytes=1024, bucket_gbps=0.2,
                 bucket_burst_bytes=240000.0, nic_message_us=2.0, intra_latency_us=1.0,
                 intra_bandwidth_gbps=20.0)
# The fit's budget in these tests (iterations per case); the probes' own counts are
# already small.
CAP = 30


def _hopsim(*args, cwd):
    return subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_the_probes_on_four_and_two_hosts():
    four = {p.name: p for p in campaign.probes(4)}
    assert [n for n in four if n.startswith("pingpong-2x1")] == [
        "pingpong-2x1-t1", "pingpong-2x1-t2", "pingpong-2x1-t3"]
    # One host to the three others and back: one rank per host.
    b = four["bcast-linear-4x1"]
    assert (b.ranks, b.ranks_per_node, b.tool, b.params["algorithm"]) == (4, 1, "imb", "basic_linear")
    assert four["reduce-linear-4x1"].params["algorithm"] == "linear"
    assert (four["pingpong-1x2"].ranks, four["pingpong-1x2"].ranks_per_node) == (2, 2)
    assert (four["exchange-2x2"].ranks, four["exchange-2x2"].ranks_per_node) == (4, 2)
    # More ranks than 2 cores at 0 bytes: the machine's turn (calibrate --machine-cores).
    rt = four["roundtrip-2x2"]
    assert (rt.workload, rt.ranks, rt.ranks_per_node, rt.params["request_bytes"]) == ("roundtrip", 4, 2, 0)
    # The same at latency_checker's 4000 B: what the turn is checked on.
    rt = four["roundtrip-2x2-4000"]
    assert (rt.ranks, rt.ranks_per_node, rt.params["request_bytes"], rt.params["reply_bytes"]) == (4, 2, 4000, 4000)
    # On two hosts the fan-out needs two ranks per host (two connections leave the root's host).
    two = {p.name: p for p in campaign.probes(2)}
    assert (two["bcast-linear-2x2"].ranks, two["bcast-linear-2x2"].ranks_per_node) == (4, 2)
    # Every host's link at once: pairwise Alltoall at one rank per host on 3+ hosts only
    # (on 2 a limiter and a backbone carry the same bytes: exchange-2x1 says why).
    a = four["alltoall-pairwise-4x1"]
    assert (a.ranks, a.ranks_per_node, a.tool, a.params["algorithm"]) == (4, 1, "imb", "pairwise")
    assert max(a.params["sizes"]) == 2**19 and 0 not in a.params["sizes"]
    three = {p.name: p for p in campaign.probes(3)}
    assert (three["alltoall-pairwise-3x1"].ranks, len(three)) == (3, 12)
    assert len(four) == 12 and len(two) == 11
    assert not any(n.startswith("alltoall") for n in two)
    assert "needs 3 or more" in two["exchange-2x1"].shows
    assert "needs 3 or more" not in four["exchange-2x1"].shows
    for hosts in (1, 5):
        with pytest.raises(InputError, match="2 to 4 hosts"):
            campaign.probes(hosts)


def test_a_forced_algorithm_is_open_mpis_coll_tuned_number():
    # Open MPI 4.1's coll_tuned_bcast_algorithm: 1 basic_linear, 2 chain, 3 pipeline,
    # 4 split_binary_tree, 5 binary_tree, 6 binomial; reduce: 1 linear ... 5 binomial;
    # alltoall: 1 linear, 2 pairwise (ompi_info --all, coll_tuned_*_algorithm).
    def mca(kind, algorithm, ranks=4):
        return algorithm_arguments(make_workload(kind, ranks, sizes=[4], algorithm=algorithm))

    assert mca("bcast", "basic_linear") == ["--mca", "coll_tuned_use_dynamic_rules", "1",
                                            "--mca", "coll_tuned_bcast_algorithm", "1"]
    assert mca("bcast", "binomial")[-1] == "6"
    assert mca("reduce", "linear")[-1] == "1" and mca("reduce", "binomial")[-1] == "5"
    assert mca("alltoall", "pairwise")[-2:] == ["coll_tuned_alltoall_algorithm", "2"]
    assert algorithm_arguments(make_workload("bcast", 4, sizes=[4])) == []


@pytest.fixture(scope="module")
def paced_files(tmp_path_factory):
    out = tmp_path_factory.mktemp("campaign")
    return campaign.simulate(campaign.probes(4), PACED, out)


def test_simulated_probes_are_files_calibrate_replays(paced_files):
    docs = {f.split("/")[-2]: json.loads(open(f).read()) for f in paced_files}
    assert docs["bcast-linear-4x1"]["parameters"]["algorithm"] == "basic_linear"
    assert docs["exchange-2x2"]["parameters"]["placement"] == "block"
    assert docs["bandwidth-2x1"]["results"]["rows"][0]["window"] == 64


def _cases(files, *names):
    chosen = [f for f in files if f.split("/")[-2] in names]
    assert len(chosen) == len(names)
    return cases_of([m for f in chosen for m in parse_file(f)])[0]


def test_the_fan_out_probe_tells_pacing_per_connection_from_the_link(tmp_path):
    # Every message paced (no one-packet step): a ping-pong's one connection shows the
    # paced rate p whether it binds the connection or the link, so the ping-pong alone
    # cannot decide. Root to three hosts at once can: per connection each gets p (the
    # 9 Gbit/s link holds 3p), on the link they share it; one rate must explain both.
    truth = Platform(name="fan", nodes=4, cores=1, latency_us=20.0, bandwidth_gbps=9.0,
                     pacing_gbps=0.4)
    plan = [p for p in campaign.probes(4) if p.name in ("pingpong-2x1-t1", "bcast-linear-4x1")]
    files = campaign.simulate(plan, truth, tmp_path)
    start = truth.replace(latency_us=26.0, pacing_gbps=0.3)
    link_start = start.replace(pacing_gbps=0.0, bandwidth_gbps=0.3)

    def both(cases):
        conn = fit_joint(start, cases, ["latency_us", "pacing_gbps"], cap=None, max_nfev=8)
        link = fit_joint(link_start, cases, ["latency_us", "bandwidth_gbps"], cap=None, max_nfev=8)
        return conn, link

    conn, link = both(_cases(files, "pingpong-2x1-t1"))
    assert abs(link.bic - conn.bic) < BIC_MARGIN          # undecided on the ping-pong alone
    conn, link = both(_cases(files, "pingpong-2x1-t1", "bcast-linear-4x1"))
    assert link.bic - conn.bic > BIC_MARGIN               # decided with the fan-out
    assert conn.platform.pacing_gbps == pytest.approx(0.4, rel=0.02)
    assert conn.median_abs_error_pct() < 1.0 < link.median_abs_error_pct()


# Shared capacity's two forms on a plain network: 20 us, 1 Gbit/s each way (R = 125 B/us),
# and 1.4 Gbit/s (175 B/us) shared by a node's in + out bytes (limiter) or by all the
# machine's node-to-node bytes (backbone).
PLAIN = Platform(name="plain", nodes=4, cores=1, latency_us=20.0, bandwidth_gbps=1.0)
SHARED = {"backbone": PLAIN.replace(name="backboned", backbone_gbps=1.4),
          "per-node limiter": PLAIN.replace(name="limited", limiter_gbps=1.4)}


def _alltoall_us(truth, hosts, tmp_path):
    # The all-hosts probe at 512 KiB only, on `hosts` hosts (2: the 3-host probe on 2 ranks).
    probe = next(p for p in campaign.probes(max(hosts, 3)) if p.name.startswith("alltoall"))
    probe = dataclasses.replace(probe, name=f"a{hosts}-{truth.name}", ranks=hosts,
                                params={**probe.params, "sizes": [2**19], "repetitions": 2})
    f, = campaign.simulate([probe], truth.replace(nodes=4), tmp_path)
    row, = json.loads(open(f).read())["results"]["rows"]
    return row["t_avg_us"]


def test_the_all_hosts_probe_loads_a_backbone_hosts_over_2_times_a_limiter(tmp_path):
    # Pairwise Alltoall, s = 524288 B per destination, H-1 steps; each step every node
    # sends s and receives s (a permutation). By hand, per step:
    #   no sharing:  L + s/R  = 20 + 524288/125   = 4214.304 us
    #   limiter:     L + 2s/D = 20 + 1048576/175  = 6011.863 us  (any H)
    #   backbone:    L + Hs/B = 20 + H 524288/175 = 6011.863 (H=2), 9007.794 (H=3),
    #                                               12003.726 us (H=4)
    # so on 2 hosts the forms coincide, on 3 the backbone is 1.5 times, on 4 twice.
    none, lim, bb = PLAIN, SHARED["per-node limiter"], SHARED["backbone"]
    assert _alltoall_us(none, 4, tmp_path) == pytest.approx(3 * 4214.304, rel=1e-4)
    assert _alltoall_us(lim, 2, tmp_path) == pytest.approx(6011.863, rel=1e-4)
    assert _alltoall_us(bb, 2, tmp_path) == pytest.approx(6011.863, rel=1e-4)
    assert _alltoall_us(lim, 3, tmp_path) == pytest.approx(2 * 6011.863, rel=1e-4)
    assert _alltoall_us(bb, 3, tmp_path) == pytest.approx(2 * 9007.794, rel=1e-4)
    assert _alltoall_us(lim, 4, tmp_path) == pytest.approx(3 * 6011.863, rel=1e-4)
    assert _alltoall_us(bb, 4, tmp_path) == pytest.approx(3 * 12003.726, rel=1e-4)


@pytest.fixture(scope="module")
def shared_files(tmp_path_factory):
    names = ("pingpong-2x1-t1", "exchange-2x1", "alltoall-pairwise-4x1")
    plan = [p for p in campaign.probes(4) if p.name in names]
    return {form: campaign.simulate(plan, truth, tmp_path_factory.mktemp(truth.name))
            for form, truth in SHARED.items()}


def _capacity_line(files):
    r = calibrate_files(files, nodes=4, joint=True, cap=CAP)
    return next(l.strip() for l in r.text.splitlines() if l.strip().startswith("shared capacity:")), r


@pytest.mark.parametrize("form, field, other", [("backbone", "backbone_gbps", "limiter_gbps"),
                                                ("per-node limiter", "limiter_gbps", "backbone_gbps")])
def test_the_all_hosts_probe_decides_the_shared_capacitys_form(shared_files, form, field, other):
    # The ping-pong, the 2-host exchange and the 4-host pairwise Alltoall of the campaign,
    # fitted by calibrate: a shared capacity, its form the one the engine ran, at 1.4 Gbit/s.
    line, r = _capacity_line(shared_files[form])
    assert line.endswith(f": {form}") and "undecided" not in line, line
    p = r.fit.platform
    assert getattr(p, field) == pytest.approx(1.4, rel=0.02) and getattr(p, other) == 0


def test_without_the_all_hosts_probe_the_form_stays_undecided(shared_files):
    # The same truth's 2-host probes only (the 2-host campaign): the capacity is found,
    # its form is not (every byte crosses both nodes' limiters and the backbone alike).
    two = [f for f in shared_files["backbone"] if "alltoall" not in f]
    line, r = _capacity_line(two)
    assert "per-node limiter or backbone: undecided" in line and "runs on 2 nodes" in line, line
    assert r.fit.platform.limiter_gbps == pytest.approx(1.4, rel=0.02)
    assert r.fit.platform.backbone_gbps == 0


def test_messages_converging_on_one_host_separate_the_nic_cost_from_the_latency(paced_files):
    # An isolated message pays L + 2c: the ping-pong alone sees only that sum (both
    # reported undetermined). Three leaves sending to the root at once queue at its NIC
    # (the last one waits 2c more), so the fan-in probe separates c from L.
    start = PACED.replace(latency_us=18.0, nic_message_us=3.5)
    alone = fit_joint(start, _cases(paced_files, "pingpong-2x1-t1"),
                      ["latency_us", "nic_message_us"], cap=None, max_nfev=6)
    assert set(alone.undetermined) == {"latency_us", "nic_message_us"}
    assert all(math.isinf(alone.se_rel[f]) for f in alone.undetermined)
    both = fit_joint(start, _cases(paced_files, "pingpong-2x1-t1", "reduce-linear-4x1"),
                     ["latency_us", "nic_message_us"], cap=None, max_nfev=10)
    assert both.undetermined == []
    assert both.platform.nic_message_us == pytest.approx(2.0, rel=0.05)
    assert both.platform.latency_us == pytest.approx(20.0, rel=0.02)


def test_the_campaign_recovers_a_known_platform(paced_files):
    # The probes across hosts, the mechanisms as the truth has them, every value started
    # 20% off: the joint fit brings back all six, each determined (the one-node path is
    # the next test's; what a probe alone cannot tell apart is the NIC test's).
    cases = _cases(paced_files, "pingpong-2x1-t1", "bandwidth-2x1", "exchange-2x1",
                   "bcast-linear-4x1", "reduce-linear-4x1")
    free = ["latency_us", "bandwidth_gbps", "pacing_gbps", "bucket_gbps", "bucket_burst_bytes",
            "nic_message_us"]
    start = PACED.replace(**{f: getattr(PACED, f) * (1.2 if i % 2 else 0.8)
                             for i, f in enumerate(free)})
    j = fit_joint(start, cases, free, cap=None, max_nfev=10)
    p = j.platform
    assert p.latency_us == pytest.approx(20.0, rel=0.01)
    assert p.bandwidth_gbps == pytest.approx(9.0, rel=0.02)
    assert p.pacing_gbps == pytest.approx(0.4, rel=0.01)
    assert p.bucket_gbps == pytest.approx(0.2, rel=0.01)
    assert p.bucket_burst_bytes == pytest.approx(240000.0, rel=0.02)
    assert p.nic_message_us == pytest.approx(2.0, rel=0.02)
    assert j.undetermined == []


def test_the_one_node_ping_pong_gives_the_intra_node_path(paced_files):
    # Closed form first (calibrate's IntraNodeLine on the one-node ping-pong beside the
    # network's), then jointly with the exchange at two ranks per host.
    files = [f for f in paced_files if f.split("/")[-2] in ("pingpong-2x1-t1", "pingpong-1x2")]
    fitted = {f.key: f for f in calibrate_files(files, nodes=4).fit.fitted}
    assert fitted["intranode.latency_us"].value == pytest.approx(1.0, rel=0.01)
    assert fitted["intranode.bandwidth_gbps"].value == pytest.approx(20.0, rel=0.01)
    assert "pingpong-1x2" in fitted["intranode.latency_us"].provenance
    # The network's line is the two-host ping-pong's alone (the one-node rows kept apart).
    assert fitted["network.pacing_gbps"].value == pytest.approx(0.4, rel=0.01)
    cases = _cases(paced_files, "pingpong-1x2", "exchange-2x2")
    start = PACED.replace(intra_latency_us=1.3, intra_bandwidth_gbps=15.0)
    j = fit_joint(start, cases, ["intra_latency_us", "intra_bandwidth_gbps"], cap=None, max_nfev=8)
    assert j.platform.intra_latency_us == pytest.approx(1.0, rel=0.02)
    assert j.platform.intra_bandwidth_gbps == pytest.approx(20.0, rel=0.02)
    assert j.undetermined == []


@pytest.mark.parametrize("args, expected", [
    (["--campaign"], "--campaign applies to --live only"),
    (["--tools", "bin"], "--tools applies to --live --campaign only"),
    (["--live", "--campaign"], "--campaign needs 2 to 4 hosts"),
    (["--live", "--campaign", "--emulate-cluster", "2"], "--emulate-cluster needs --link-rate"),
    (["--live", "--emulate-cluster", "2"], "--emulate-cluster needs --link-rate"),
    (["--live", "--campaign", "--emulate-cluster", "2", "--link-rate", "200mbit", "--sizes", "0,1"],
     "--sizes: the campaign chooses its own"),
    (["--live", "--campaign", "--emulate-cluster", "5", "--link-rate", "200mbit"],
     "runs on 2 to 4 hosts, got 5"),
    (["--live", "--campaign", "--emulate-cluster", "2", "--link-rate", "200mbit", "--tools", "bin"],
     "--tools: bin holds no IMB-MPI1"),
    (["--live", "--campaign", "--hostfile", "one-host"], "runs on 2 to 4 hosts, got 1"),
])
def test_campaign_flags_are_refused_in_one_line_before_anything_runs(tmp_path, args, expected):
    (tmp_path / "bin").mkdir()
    (tmp_path / "one-host").write_text("node1 slots=2\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    p = _hopsim("calibrate", *args, "--out", "p.toml", cwd=tmp_path)
    assert p.returncode == 2 and expected in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    assert sorted(q.name for q in tmp_path.iterdir()) == before   # nothing written


def test_the_simulated_campaign_is_written_by_the_module(tmp_path):
    run = lambda out: subprocess.run([sys.executable, "-m", "hopsim.calibration.campaign",
                                      "--platform", "two-nodes", "--hosts", "2", "--out", out],
                                     capture_output=True, text=True, timeout=120)
    p = run(str(tmp_path / "c"))
    assert p.returncode == 0, p.stderr
    files = p.stdout.split()
    assert [f.split("/")[-2] for f in files] == [q.name for q in campaign.probes(2)]
    assert all(parse_file(f) for f in files)
    again = run(str(tmp_path / "c"))
    assert again.returncode == 2 and again.stderr.strip().endswith("exists")
    assert len(again.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupting_the_live_campaign_leaves_nothing(tmp_path, sig):
    # Stopped during its first probe (a hopbench ping-pong): the shared cluster is torn
    # down, no rank is left, and neither the platform nor any measurement is written.
    # The tools folder only has to hold the names: the interrupt comes before they run.
    from test_live_cluster import REASON
    if REASON is not None:
        pytest.skip(REASON)
    from hopsim.live import cluster

    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("osu_bw", "IMB-MPI1"):
        (tools / name).write_text("")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    proc = subprocess.Popen([sys.executable, "-m", "hopsim", "calibrate", "--live", "--campaign",
                             "--emulate-cluster", "2", "--link-rate", "200mbit", "--tools",
                             str(tools), "--out", "p.toml"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ours = f"{campaign.PREFIX}[0-9a-f]{{6}}"   # the campaign's cluster tag (its rsh agent's path)

    def ranks_running():
        return any(subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
                   for ns in cluster.our_names(campaign.PREFIX)["namespaces"])

    deadline = time.time() + 90
    while not ranks_running():
        assert proc.poll() is None, proc.stderr.read()
        assert time.time() < deadline, "the campaign's first probe never started"
        time.sleep(0.1)
    time.sleep(0.5)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert out == ""
    assert cluster.our_names(campaign.PREFIX) == {"namespaces": [], "links": []}
    assert not subprocess.run(["pgrep", "-f", ours], capture_output=True).stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin"]


def test_an_error_of_a_probe_without_a_cluster_is_raised_not_swallowed():
    # Without --emulate-cluster the probes run on the hosts as they are: the context that
    # stands for the cluster must let a probe's error through (else the campaign would
    # carry on with the files it has).
    with pytest.raises(InputError, match="probe failed"):
        with campaign._cluster(None, None, None, campaign.PREFIX, None):
            raise InputError("probe failed")


def test_an_uncapped_emulated_cluster_is_named_in_the_progress_line():
    # --link-rate none is an uncapped link (and a missing one is refused before this
    # line); the progress line once concatenated None and died with a traceback.
    from types import SimpleNamespace

    from hopsim.calibration.cli import _where

    assert _where(SimpleNamespace(emulate_cluster=2, link_rate="none", hostfile=None)) == "emulated, uncapped"
    assert _where(SimpleNamespace(emulate_cluster=2, link_rate="100mbit", hostfile=None)) == "emulated, 100mbit"
    assert _where(SimpleNamespace(emulate_cluster=None, link_rate=None, hostfile="hosts")) == "hosts"
    assert _where(SimpleNamespace(emulate_cluster=None, link_rate=None, hostfile=None)) == "this machine"


def test_the_check_is_a_cyclic_exchange_held_out_one_folder_down():
    (check,) = campaign.checks(2)
    assert (check.workload, check.ranks, check.ranks_per_node) == ("exchange", 4, 2)
    assert check.params["placement"] == "cyclic" and check.held_out
    # <stem>-live/*/result.json is what a refit from a campaign's runs reads: not the check.
    assert check.folder == "check/exchange-2x2-cyclic"
    assert not any(p.held_out for p in campaign.probes(2))
    with pytest.raises(InputError):
        campaign.checks(5)


def _fake_campaign(monkeypatch, measure, tmp_path):
    """campaign.measure replaced by `measure`, and a tools folder whose osu_bw and
    IMB-MPI1 exist (never run): the folder."""
    monkeypatch.setattr(campaign, "measure", measure)
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("osu_bw", "IMB-MPI1"):
        (tools / name).write_text("")
    return tools


def _committed_machine_runs(plan, out_dir):
    """The machine's probes as this machine ran them: the committed uncapped 2-host
    exchanges (28.57, 24.50 and 26.69 Gbit/s at 1 MiB) stand for a live measurement."""
    import shutil

    runs = os.path.join(os.path.dirname(__file__), "..", "docs", "validation", "rigs-idle",
                        "machine-capacity")
    for p, t in zip(plan, (1, 2, 3)):
        (out_dir / p.folder).mkdir(parents=True)
        shutil.copy(os.path.join(runs, f"2x1-t{t}", "result.json"), out_dir / p.folder)
    return [str(out_dir / p.folder / "result.json") for p in plan]


def test_the_campaign_predicts_its_check_and_fits_without_it(tmp_path, monkeypatch, capsys):
    from hopsim import cli
    from hopsim.calibration.calibrate import CHECK_TITLE

    # Every probe on PACED, the check on a link of a third of its rate: a fit of the probes
    # must miss the check by about that, and a fit that took the check in would not.
    slow = dataclasses.replace(PACED, bucket_gbps=PACED.bucket_gbps / 3,
                               bandwidth_gbps=PACED.bandwidth_gbps / 3)

    def measure(plan, out_dir, **kw):
        fitted = [p for p in plan if not p.held_out]
        held = [p for p in plan if p.held_out]
        return campaign.simulate(fitted, PACED, out_dir) + campaign.simulate(held, slow, out_dir)

    tools = _fake_campaign(monkeypatch, measure, tmp_path)
    out = tmp_path / "camp.toml"
    args = ["calibrate", "--live", "--campaign", "--emulate-cluster", "2", "--link-rate",
            "200mbit", "--tools", str(tools), "--closed-form", "--out", str(out)]
    assert cli.main(args) == 0
    report = capsys.readouterr().out
    live = tmp_path / "camp-live"
    assert (live / "check" / "exchange-2x2-cyclic" / "result.json").is_file()
    fitted = sorted(str(p) for p in live.glob("*/result.json"))
    assert len(fitted) == len(campaign.probes(2))
    assert f"in {len(fitted)} file(s)" in report
    assert CHECK_TITLE in report
    toml = out.read_text()
    assert "validation.campaign_check" in toml and "exchange-2x2-cyclic" in toml
    # The written platform loads (simulate, validate), its check's record with it.
    from hopsim.platforms import load
    assert "exchange-2x2-cyclic" in load(str(out)).provenance["validation.campaign_check"]
    # A third of the rate at the large sizes: the note says runs placed like it are off.
    assert "note: the campaign's check misses by" in report
    # The same runs without the check fit the same platform, value for value.
    again = tmp_path / "again.toml"
    assert cli.main(["calibrate", *fitted, "--closed-form", "--nodes", "2", "--out", str(again)]) == 0
    capsys.readouterr()
    values = lambda text: [l for l in text.splitlines()
                           if l and not l.startswith(("#", "name =")) and "=" in l
                           and '"' not in l.split("=")[0]]
    assert values(again.read_text()) == values(toml)


def test_a_check_the_fit_predicts_draws_no_note(tmp_path):
    from hopsim.calibration.calibrate import CHECK_TITLE

    # The check on a bucket 10% slower than the probes': it misses by at most 10% (the
    # sizes the bucket binds), under the note's 15%, and by more than nothing.
    files = campaign.simulate(campaign.probes(2), PACED, tmp_path)
    slower = dataclasses.replace(PACED, bucket_gbps=PACED.bucket_gbps * 0.9)
    (check_file,) = campaign.simulate(campaign.checks(2), slower, tmp_path)
    r = calibrate_files(files, nodes=2, checks=[check_file])
    assert CHECK_TITLE in r.text and "note: the campaign's check" not in r.text
    worst = float(r.text.split(CHECK_TITLE)[1].split("median over files:")[1].split("%")[0])
    assert 1.0 < worst <= 100 * (1 / 0.9 - 1) + 0.5


def test_the_machine_probes_run_uncapped_one_folder_down():
    probes = campaign.machine_probes()
    assert len(probes) == campaign.TRIALS
    for p in probes:
        assert (p.workload, p.ranks, p.ranks_per_node, p.machine) == ("exchange", 2, 1, True)
        assert p.folder == f"machine/{p.name}" and not p.held_out
        assert p.params["sizes"] == [campaign.MACHINE_BYTES]


def test_an_emulated_campaign_measures_the_machine(tmp_path, monkeypatch, capsys):
    from hopsim import cli

    calls = []

    def measure(plan, out_dir, **kw):
        calls.append((kw.get("link_rate"), sum(p.machine for p in plan)))
        machine = [p for p in plan if p.machine]
        return (campaign.simulate([p for p in plan if not p.machine], PACED, out_dir)
                + (_committed_machine_runs(machine, out_dir) if machine else []))

    tools = _fake_campaign(monkeypatch, measure, tmp_path)
    out = tmp_path / "camp.toml"
    base = ["calibrate", "--live", "--campaign", "--emulate-cluster", "2", "--tools",
            str(tools), "--closed-form"]
    assert cli.main([*base, "--link-rate", "none", "--out", str(out)]) == 0
    report = capsys.readouterr().out
    # Uncapped: the machine's runs after the probes, on the same cluster.
    assert calls == [("none", campaign.TRIALS)]
    assert "\nbackbone_gbps = 26.6899\n" in out.read_text()
    assert "machine's capacity: network.backbone_gbps = 26.6899" in report
    # Not among the runs a refit from the campaign's folder reads; given to
    # --machine-gbps, they make the same platform again.
    live = tmp_path / "camp-live"
    assert not any("uncapped" in str(p) for p in live.glob("*/result.json"))
    machine = sorted(str(p) for p in live.glob("machine/*/result.json"))
    assert len(machine) == campaign.TRIALS
    again = tmp_path / "again.toml"
    assert cli.main(["calibrate", *sorted(str(p) for p in live.glob("*/result.json")),
                     "--closed-form", "--nodes", "2", "--machine-gbps", ",".join(machine),
                     "--out", str(again)]) == 0
    assert "\nbackbone_gbps = 26.6899\n" in again.read_text()
    # Under a tbf, or with the capacity given, no machine run (a given one is applied).
    calls.clear()
    assert cli.main([*base, "--link-rate", "200mbit", "--out", str(tmp_path / "b.toml")]) == 0
    assert "\nbackbone_gbps = 0.0\n" in (tmp_path / "b.toml").read_text()
    assert cli.main([*base, "--link-rate", "none", "--machine-gbps", "30",
                     "--out", str(tmp_path / "c.toml")]) == 0
    capsys.readouterr()
    assert calls == [("200mbit", 0), ("none", 0)]
    assert "\nbackbone_gbps = 30.0\n" in (tmp_path / "c.toml").read_text()
    from hopsim.calibration.cli import _machine_plan
    from types import SimpleNamespace
    assert _machine_plan(SimpleNamespace(emulate_cluster=None, link_rate=None, machine=None)) == []
