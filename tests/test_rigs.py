"""The rigs campaign (calibration/rigs.py) and the emulated cluster's uncapped links and
name prefix (live/cluster.py). The live part needs root and namespaces."""
import json
import os
import time
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hopsim.calibration import rigs
from hopsim.live import cluster
from hopsim.errors import InputError

DATA = Path(__file__).parent / "data"


def test_none_is_an_uncapped_link_and_rates_still_parse():
    assert cluster.rate_bits("none") is None
    assert cluster.rate_bits("NONE") is None
    assert cluster.rate_bits("100mbit") == 100e6
    assert cluster.rate_bits("25mbps") == 200e6  # tc's mbps is bytes
    with pytest.raises(InputError, match="or none"):
        cluster.rate_bits("uncapped")


@pytest.mark.parametrize("kwargs, fragment", [
    ({"link_rate": "none", "burst": 16384}, "no tbf burst"),
    ({"link_rate": "1gbit", "prefix": "rigs-x"}, "prefix"),
    ({"link_rate": "1gbit", "prefix": "toolong"}, "prefix"),
])
def test_bad_cluster_options_are_refused_before_anything_is_built(kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        cluster.EmulatedCluster(2, **kwargs)


def test_block_and_cyclic_map_ranks_as_open_mpi_spells_them():
    block = next(c for c in rigs.CASES if c.hosts == 4 and c.per_host == 2 and c.placement == "block")
    cyclic = next(c for c in rigs.CASES if c.hosts == 4 and c.per_host == 2 and c.placement == "cyclic")
    cmd = rigs.mpirun_command(block, ["--x"], "HF", "/bin/tool")
    assert cmd[:3] == ["mpirun", "-np", "8"]
    assert cmd[cmd.index("--map-by") + 1] == "ppr:2:node"
    assert cmd[cmd.index("--hostfile") + 1] == "HF"
    assert ["--mca", "mpi_yield_when_idle", "1"] == cmd[cmd.index("mpi_yield_when_idle") - 1:][:3]
    cyc = rigs.mpirun_command(cyclic, [], "HF", "/bin/tool")
    assert cyc[cyc.index("--map-by") + 1] == "node"
    assert cyc[cyc.index("/bin/tool") + 1:] == list(cyclic.args)
    assert block.file(3) == "imb-exchange-4x2-block-t3.txt"
    assert cyclic.file(1) == "imb-exchange-4x2-node-t1.txt"


def test_netpipe_writes_its_own_file_and_the_campaign_covers_the_issue():
    np_case = next(c for c in rigs.CASES if c.fmt == "netpipe")
    assert rigs.mpirun_command(np_case, [], "HF", "NP", "/tmp/np.out")[-2:] == ["-o", "/tmp/np.out"]
    names = {c.file(1) for c in rigs.CASES}
    # 2 hosts: six tools, and IMB Exchange at 2 per host in both placements; 4 hosts: IMB
    # Exchange and latency_checker at 1 per host and at 2 per host in both placements;
    # IMB Alltoall and Allreduce at 2x1, 4x1 and 4x2 block.
    assert len(names) == len(rigs.CASES) == 6 + 2 + 2 * 3 + 2 * 3
    assert {"imb-exchange-2x2-block-t1.txt", "imb-exchange-2x2-node-t1.txt"} <= names
    for coll in ("alltoall", "allreduce"):
        assert {f"imb-{coll}-{shape}-block-t1.txt" for shape in ("2x1", "4x1", "4x2")} <= names
    for tool in ("imb-exchange", "latency_checker"):
        assert {f"{tool}-4x1-block-t1.txt", f"{tool}-4x2-block-t1.txt",
                f"{tool}-4x2-node-t1.txt"} <= names
    assert {"imb-pingpong-2x1-block-t1.txt", "osu_latency-2x1-block-t1.txt",
            "osu_bw-2x1-block-t1.txt", "netpipe-2x1-block-t1.txt",
            "latency_checker-2x1-block-t1.txt", "imb-exchange-2x1-block-t1.txt"} <= names


@pytest.mark.parametrize("args, fragment", [(["--rigs", "A,Z"], "--rigs"),
                                             (["--cores", "0"], "--cores")])
def test_bad_option_is_one_line_exit_2(tmp_path, args, fragment):
    p = subprocess.run([sys.executable, "-m", "hopsim.calibration.rigs", "--out", str(tmp_path / "o"),
                        *args], capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and fragment in p.stderr
    assert not (tmp_path / "o").exists()


def _namespaces_work() -> str | None:
    if os.geteuid() != 0:
        return "needs root"
    if not all(shutil.which(t) for t in ("ip", "tc", "unshare")):
        return "needs ip, tc and unshare"
    probe = f"rigsprobe{os.getpid()}"
    p = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None if p.returncode == 0 else f"cannot create network namespaces: {p.stderr.strip()}"


live = pytest.mark.skipif(_namespaces_work() is not None, reason=str(_namespaces_work()))


def _qdisc(ns, dev):
    return subprocess.run(["ip", "netns", "exec", ns, "tc", "-j", "qdisc", "show", "dev", dev],
                          capture_output=True, text=True, check=True).stdout


@live
def test_uncapped_cluster_has_no_tbf_and_a_capped_one_has_the_given_burst():
    with cluster.EmulatedCluster(2, "none", prefix="rigst") as c:
        assert c.tag.startswith("rigst") and all(n.startswith("rigst") for n in c.namespaces)
        assert c.burst is None
        kinds = [q["kind"] for q in json.loads(_qdisc(c.namespaces[0], f"{c.tag}i0"))]
        assert "tbf" not in kinds
        tag = c.tag
    assert cluster.our_names(tag) == {"namespaces": [], "links": []}
    with cluster.EmulatedCluster(1, "100mbit", 16384, prefix="rigst") as c:
        (tbf,) = [q for q in json.loads(_qdisc(c.namespaces[0], f"{c.tag}i0")) if q["kind"] == "tbf"]
        # tc reports the rate in bytes per second: 100 Mbit/s = 12.5e6 B/s.
        assert tbf["options"]["rate"] == 12_500_000
        # The kernel keeps the burst as a time in its clock ticks: it reads back rounded
        # (16375 here), never the default burst of 125000 B (10 ms at 100 Mbit/s).
        assert abs(tbf["options"]["burst"] - 16384) < 100
        tag = c.tag
    assert cluster.our_names(tag) == {"namespaces": [], "links": []}


@live
def test_live_cli_refuses_a_burst_on_an_uncapped_link_in_one_line():
    p = subprocess.run([sys.executable, "-m", "hopsim", "live", "--emulate-cluster", "2",
                        "--link-rate", "none", "--burst", "20000", "--workload", "pingpong",
                        "--ranks", "2"], capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "no tbf burst" in p.stderr


def test_readme_shortening_of_a_recorded_command_is_exact():
    from pathlib import Path
    from hopsim.calibration import rigs_report

    runs = json.loads((Path(__file__).parents[1] / "docs/validation/rigs/A/runs.json").read_text())
    for r in runs:
        common = rigs_report._common([r["command"]])
        assert common.startswith("--mca plm_rsh_agent /tmp/rigs") and common.endswith("--bind-to none")
        short = rigs_report._rest_of(r["command"], common)
        assert short.count("…") == 1 and short.replace("…", common) == r["command"]


def test_a_missing_tool_is_one_line_exit_2_and_nothing_is_made(tmp_path):
    env = dict(os.environ, PATH=str(tmp_path))  # no IMB-MPI1, NPopenmpi, ... anywhere
    p = subprocess.run([sys.executable, "-m", "hopsim.calibration.rigs", "--out", str(tmp_path / "o"),
                        "--tools", str(tmp_path)], capture_output=True, text=True, env=env)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "is neither in" in p.stderr
    assert not (tmp_path / "o").exists()


def test_other_form_puts_the_fitted_capacity_in_the_other_place_at_the_same_rate():
    from hopsim.calibration.rigs_report import other_form

    text = '[network]\nbackbone_gbps = 0.0\nlimiter_gbps = 1.25\ntransport = "flow"\n'
    form, swapped = other_form(text)
    assert "limiter of 1.25 Gbit/s as a backbone" in form
    assert swapped == '[network]\nbackbone_gbps = 1.25\nlimiter_gbps = 0.0\ntransport = "flow"\n'
    form, back = other_form(swapped)
    assert "backbone of 1.25 Gbit/s as a per-node limiter" in form
    assert back == '[network]\nbackbone_gbps = 0.0\nlimiter_gbps = 1.25\ntransport = "flow"\n'
    assert other_form('[network]\nbackbone_gbps = 0.0\nlimiter_gbps = 0.0\n') is None
    scoped = '[network]\nbackbone_gbps = 0.0\nlimiter_gbps = 1.25\nlimiter_scope = "rendezvous"\n'
    assert other_form(scoped) is None
    assert other_form(scoped.replace('"rendezvous"', '"all"')) is not None



@pytest.fixture
def fake_fit(tmp_path, monkeypatch):
    """(rigs_report, data, base, fit, ran): _calibrate with a stand-in for the fit that
    writes FIT as calibrate heads it and records each command it runs in ran."""
    from hopsim.calibration import rigs_report

    data, base, fit = tmp_path / "pp.txt", tmp_path / "base.toml", tmp_path / "fit.toml"
    data.write_text("x\n")
    base.write_text("x\n")
    ran = []

    class Done:
        stdout = "report\n"

    def run(cmd):
        ran.append(cmd)
        fit.write_text(f"# Written by: {rigs_report._show(cmd)}\n")
        return Done

    monkeypatch.setattr(rigs_report, "_run", run)
    return rigs_report, data, base, fit, ran


def test_a_fit_is_kept_while_its_files_and_command_are_the_same(fake_fit):
    rigs_report, data, base, fit, ran = fake_fit
    shown = rigs_report._calibrate(fit, [data], base)
    assert len(ran) == 1 and shown.startswith("hopsim calibrate ") and fit.with_suffix(".txt").is_file()
    rigs_report._calibrate(fit, [data], base)
    assert len(ran) == 1                       # kept
    rigs_report._calibrate(fit, [data], base, closed_form=True)
    assert len(ran) == 2                       # another command
    os.utime(data, (fit.stat().st_mtime + 5,) * 2)
    rigs_report._calibrate(fit, [data], base, closed_form=True)
    assert len(ran) == 2                       # a newer date, as a fresh clone gives: kept
    data.write_text("y\n")
    rigs_report._calibrate(fit, [data], base, closed_form=True)
    assert len(ran) == 3                       # a file's contents changed
    base.write_text("y\n")
    rigs_report._calibrate(fit, [data], base, closed_form=True)
    assert len(ran) == 4                       # the base's
    fit.with_suffix(".sha256").unlink()        # a fit from before the digests: its date decides
    os.utime(fit, (data.stat().st_mtime + 5,) * 2)
    rigs_report._calibrate(fit, [data], base, closed_form=True)
    assert len(ran) == 4 and fit.with_suffix(".sha256").is_file()


def test_a_fit_made_by_other_code_is_marked_and_redone_when_asked(fake_fit, monkeypatch):
    # The digest of the command and its files alone kept fits the calibration had since
    # changed: the stamp records the code that made the fit, a kept fit keeps its record,
    # and refit_stale redoes one made by other code.
    rigs_report, data, base, fit, ran = fake_fit
    code = ["old"]
    monkeypatch.setattr(rigs_report, "code_digest", lambda: code[0])
    stamp = fit.with_suffix(".sha256")
    rigs_report._calibrate(fit, [data], base)
    assert rigs_report.fit_code(stamp) == "old"
    code[0] = "new"
    rigs_report._calibrate(fit, [data], base)
    assert len(ran) == 1 and rigs_report.fit_code(stamp) == "old"    # kept, and so is its record
    rigs_report._calibrate(fit, [data], base, refit_stale=True)
    assert len(ran) == 2 and rigs_report.fit_code(stamp) == "new"
    rigs_report._calibrate(fit, [data], base, refit_stale=True)
    assert len(ran) == 2                                              # today's: kept
    stamp.write_text(stamp.read_text().splitlines()[0] + "\n")     # stamped before the record
    assert rigs_report.fit_code(stamp) is None
    rigs_report._calibrate(fit, [data], base, refit_stale=True)
    assert len(ran) == 3


def test_the_code_digest_follows_the_fit_making_sources_only(tmp_path):
    from hopsim.calibration.rigs_report import CODE_DIRS, code_digest

    for d in CODE_DIRS:
        (tmp_path / d).mkdir()
    (tmp_path / "calibration" / "structure.py").write_text("a = 1\n")
    (tmp_path / "calibration" / "rigs_report.py").write_text("r = 1\n")
    (tmp_path / "simulator" / "engine.cpp").write_text("int x;\n")
    first = code_digest(tmp_path)
    (tmp_path / "calibration" / "rigs_report.py").write_text("r = 2\n")   # the report's own
    (tmp_path / "calibration" / "notes.md").write_text("prose\n")
    assert code_digest(tmp_path) == first
    (tmp_path / "simulator" / "engine.cpp").write_text("int y;\n")
    assert code_digest(tmp_path) != first
    (tmp_path / "simulator" / "engine.cpp").write_text("int x;\n")
    assert code_digest(tmp_path) == first
    (tmp_path / "calibration" / "structure.py").write_text('"""Prose."""\n# why\na = 1  # more\n')
    assert code_digest(tmp_path) == first                                  # comments, docstrings
    (tmp_path / "calibration" / "structure.py").write_text("a = 2\n")
    assert code_digest(tmp_path) != first
    (tmp_path / "calibration" / "structure.py").write_text("a = 1\n")
    (tmp_path / "python" / "cli.py").write_text("def main(): return 130\n")
    assert code_digest(tmp_path) == first                                  # the front end
    (tmp_path / "python" / "placement.py").write_text("cyclic = 1\n")
    assert code_digest(tmp_path) != first
    (tmp_path / "python" / "placement.py").unlink()
    (tmp_path / "calibration" / "structure.py").rename(tmp_path / "calibration" / "decide.py")
    assert code_digest(tmp_path) != first                                  # a path is part of it
    (tmp_path / "python" / "cli.py").unlink()
    (tmp_path / "python").rmdir()
    assert code_digest(tmp_path) is None                                   # an installed copy


def _fake_probes(calls, fail_after=None):
    """campaign.measure's stand-in: writes one folder per probe, raises after fail_after."""
    def measure(probes, out, **kw):
        calls.append(kw)
        for i, p in enumerate(probes):
            if fail_after is not None and i == fail_after:
                raise KeyboardInterrupt
            (out / f"probe-{i}").mkdir()
            (out / f"probe-{i}" / "result.json").write_text("{}")
    return measure


def test_the_rig_campaign_is_kept_whole_or_not_at_all(tmp_path, monkeypatch):
    from hopsim.calibration import campaign
    rig, log = rigs.RIGS["A"], open(os.devnull, "w")
    calls = []
    monkeypatch.setattr(campaign, "measure", _fake_probes(calls, fail_after=3))
    with pytest.raises(KeyboardInterrupt):
        rigs.measure_campaign(rig, tmp_path, tmp_path, log=log)
    assert sorted(os.listdir(tmp_path)) == []          # no .partial, no half campaign
    monkeypatch.setattr(campaign, "measure", _fake_probes(calls))
    rigs.measure_campaign(rig, tmp_path, tmp_path, log=log)
    done = tmp_path / "campaign-3hosts"
    assert sorted(os.listdir(tmp_path)) == ["campaign-3hosts"]
    assert len(os.listdir(done)) == len(campaign.probes(3))
    # The rig's own shaping, on 3 emulated hosts.
    assert calls[-1]["emulate_cluster"] == 3
    assert (calls[-1]["link_rate"], calls[-1]["burst"]) == ("100mbit", 16384)
    # Kept: a second run measures nothing.
    monkeypatch.setattr(campaign, "measure", _fake_probes(calls, fail_after=0))
    rigs.measure_campaign(rig, tmp_path, tmp_path, log=log)
    assert len(os.listdir(done)) == len(campaign.probes(3))


def test_prose_edited_while_the_fits_run_is_kept(tmp_path, monkeypatch):
    # write_report runs for an hour (the fits): the README's prose above the marker must
    # be read when the report is written, not when it starts.
    from hopsim.calibration import rigs_report
    from hopsim.calibration.rigs import RIGS

    readme = tmp_path / "README.md"
    readme.write_text("# Rigs\n\nprose before\n\n" + rigs_report.MARKER + "\n\nold tables\n")

    def fitted(root, rig, trials, closed_form=False, cores=None, refit_stale=False):
        readme.write_text(readme.read_text().replace("prose before", "prose edited meanwhile"))
        return {"files": [], "fitted_on": [], "median_over_predicted_files_pct": 1.0, "commands": []}

    monkeypatch.setattr(rigs_report, "baseline", fitted)
    monkeypatch.setattr(rigs_report, "key_figures", lambda out, trials: [])
    rigs_report.write_report(tmp_path, [RIGS["A"]], 3)
    text = readme.read_text()
    assert "prose edited meanwhile" in text and "prose before" not in text
    assert "old tables" not in text and "## Rig A:" in text.split(rigs_report.MARKER)[1]
    # No stamp records the code that made A's fit: the report says so.
    assert "Fits made by other code than today's (their numbers may differ" in text
    assert "The fit's stamp does not record the code that made it" in text


def _stand_in_fit(fit: Path) -> str:
    """What the report reads of calibrate's output: the fit (no shared capacity) and its
    report; the command as _calibrate returns it."""
    fit.write_text('[network]\nbackbone_gbps = 0.0\nlimiter_gbps = 0.0\ntransport = "flow"\n')
    fit.with_suffix(".txt").write_text("#   shared capacity: none\n")
    return f"hopsim calibrate -> {fit.name}"


def _one_case_rig(tmp_path, monkeypatch, calibrate, error_of):
    """Rig A with one 2-host and one 4-host file, `calibrate` standing in for the fits and
    validate answering a 0 B case (latency-bound: 4 ranks on 2 cores, not counted) and a
    1 MiB one off by error_of(cmd) %: (rigs_report, rig, out)."""
    from hopsim.calibration import rigs_report

    rig, out = rigs.RIGS["A"], tmp_path / "A"
    out.mkdir(exist_ok=True)
    (tmp_path / "base-shm.toml").write_text("x\n")
    four = [c for c in rigs.CASES if c.hosts == 4 and c.tool == "imb-exchange"][:1]
    for c in [c for c in rigs.CASES if c.hosts == 2][:1] + four:
        (out / c.file(1)).write_text("x\n")

    class Validated:
        def __init__(self, cmd):
            error = error_of(cmd)
            self.stdout = json.dumps({"cases": [
                {"file": str(out / four[0].file(1)), "workload": "exchange", "ranks": 4,
                 "statistic": "t_avg_us", "bytes": size, "measured_us": t,
                 "simulated_us": t * (1 - e / 100), "error_pct": -e}
                for size, t, e in ((0, 10.0, 70.0), (1048576, 100.0, error))]})

    monkeypatch.setattr(rigs_report, "_calibrate", calibrate)
    monkeypatch.setattr(rigs_report, "_run", Validated)
    monkeypatch.setattr(rigs_report, "same_traffic", lambda *a: [])
    return rigs_report, rig, out


def test_a_failed_second_opinion_fit_is_reported_and_the_rest_kept(tmp_path, monkeypatch):
    # The alltoall fit fails (as G's campaign fit once did): the rig's baseline still
    # has its main fit's predictions and the campaign's, and says which fit failed.
    from hopsim.calibration.rigs_report import ALLTOALL

    (tmp_path / "A" / ALLTOALL).parent.mkdir(parents=True)
    (tmp_path / "A" / ALLTOALL).write_text("{}")
    limits = {}

    def calibrate(fit, files, base, closed_form=False, eager_limit=None, refit_stale=False):
        limits[fit.name] = eager_limit
        if "alltoall" in fit.name:
            raise InputError("hopsim calibrate ... failed: the joint fit cannot start at 0")
        return _stand_in_fit(fit)

    rigs_report, rig, _ = _one_case_rig(
        tmp_path, monkeypatch, calibrate,
        lambda cmd: 30.0 if any(str(a).endswith("baseline-fit-campaign.toml") for a in cmd) else 10.0)
    result = rigs_report.baseline(tmp_path, rig, 1, cores=2)
    assert result["failed_fits"] == {
        "alltoall": "hopsim calibrate ... failed: the joint fit cannot start at 0"}
    assert result["median_over_counted_files_pct"] == 10.0
    assert result["median_over_counted_files_pct_campaign"] == 30.0
    assert "median_over_counted_files_pct_alltoall" not in result
    assert result["shared_capacity_alltoall"] is None
    # The rigs run Open MPI over TCP: the main fit is given its eager limit; the second
    # opinions keep the screen.
    assert limits == {"baseline-fit.toml": 65480, "baseline-fit-alltoall.toml": None,
                      "baseline-fit-campaign.toml": None}


def test_each_runner_up_the_fit_left_open_is_predicted_beside_it(tmp_path, monkeypatch):
    # calibrate wrote baseline-fit.undecided-limiter-scope.toml beside the main fit: the
    # rig's 4-host files are predicted on it too, its median and worst file reported.
    def calibrate(fit, files, base, closed_form=False, eager_limit=None, refit_stale=False):
        fit.write_text('[network]\nbackbone_gbps = 0.0\nlimiter_gbps = 0.5\ntransport = "flow"\n')
        fit.with_suffix(".txt").write_text("#   shared capacity: per-node limiter\n")
        (fit.parent / "baseline-fit.undecided-limiter-scope.toml").write_text("runner-up\n")
        return f"hopsim calibrate -> {fit.name}"

    rigs_report, rig, _ = _one_case_rig(
        tmp_path, monkeypatch, calibrate,
        lambda cmd: 4.0 if any(str(a).endswith("undecided-limiter-scope.toml") for a in cmd) else 40.0)
    result = rigs_report.baseline(tmp_path, rig, 1, cores=2)
    assert result["median_over_counted_files_pct"] == 40.0
    assert result["median_over_counted_files_pct_undecided_limiter_scope"] == 4.0
    assert result["worst_counted_file_pct_undecided_limiter_scope"] == 4.0


def test_two_ranks_per_host_files_are_predicted_with_their_placement(tmp_path, monkeypatch):
    # The main fit keeps the 1-per-host files; the 2x2 ones are predicted, given to
    # validate as FILE@2 (block) and FILE@2,cyclic (--map-by node), which IMB's output
    # cannot say itself.
    from hopsim.calibration import rigs_report

    rig, out = rigs.RIGS["A"], tmp_path / "A"
    out.mkdir()
    (tmp_path / "base-shm.toml").write_text("x\n")
    two = [c for c in rigs.CASES if c.hosts == 2 and c.tool in ("imb-pingpong", "imb-exchange")]
    four = [c for c in rigs.CASES if c.hosts == 4 and c.tool == "imb-exchange"][:1]
    for c in two + four:
        (out / c.file(1)).write_text("x\n")
    given, validated = {}, []

    def calibrate(fit, files, base, closed_form=False, eager_limit=None, refit_stale=False):
        given[fit.name] = list(files)
        return _stand_in_fit(fit)

    class Validated:
        def __init__(self, cmd):
            files = [str(a) for a in cmd if "imb-exchange" in str(a)]
            validated.append(files)
            error = {"block": 10.0, "node": 30.0}
            self.stdout = json.dumps({"cases": [
                {"file": f.split("@")[0], "workload": "exchange", "ranks": 4, "bytes": size,
                 "statistic": "t_avg_us", "measured_us": t, "simulated_us": 0.0,
                 "error_pct": -error["node" if "-node-" in f else "block"] * k}
                for f in files if "2x2" in f
                for k, size, t in ((1, 0, 10.0), (1, 65536, 100.0), (3, 1048576, 1000.0))]})

    monkeypatch.setattr(rigs_report, "_calibrate", calibrate)
    monkeypatch.setattr(rigs_report, "_run", Validated)
    monkeypatch.setattr(rigs_report, "same_traffic", lambda *a: [])
    result = rigs_report.baseline(tmp_path, rig, 1, cores=2)
    assert sorted(Path(f).name for f in given["baseline-fit.toml"]) == [
        "imb-exchange-2x1-block-t1.txt", "imb-pingpong-2x1-block-t1.txt"]
    placed = [f for files in validated for f in files if "2x2" in f]
    assert sorted(Path(f).name for f in placed) == ["imb-exchange-2x2-block-t1.txt@2",
                                                    "imb-exchange-2x2-node-t1.txt@2,cyclic"]
    # Counted: 64 KiB and 1 MiB (0 B runs 4 ranks on 2 cores): medians 20 and 60.
    rows = {r["file"]: r for r in result["two_host_placed_files"]}
    assert rows["imb-exchange-2x2-block-t1.txt"]["median_abs_error_pct_counted"] == 20.0
    assert rows["imb-exchange-2x2-node-t1.txt"]["median_abs_error_pct_counted"] == 60.0
    assert rows["imb-exchange-2x2-node-t1.txt"]["max_abs_error_pct"] == 90.0
    assert result["median_over_two_host_placed_files_pct"] == 40.0
    # Kept while the measurements and the fits are the same, whatever their dates.
    for c in two + four:
        os.utime(out / c.file(1), (time.time() + 60,) * 2)
    runs = len(validated)
    kept = rigs_report.baseline(tmp_path, rig, 1, cores=2)
    assert kept["inputs_sha256"] == result["inputs_sha256"] and len(validated) == runs
    (out / "baseline-fit.toml").write_text((out / "baseline-fit.toml").read_text() + "\n")
    rigs_report.baseline(tmp_path, rig, 1, cores=2)
    assert len(validated) == 2 * runs          # a fit changed by hand: the report is redone
    (out / four[0].file(1)).write_text("y\n")
    rigs_report.baseline(tmp_path, rig, 1, cores=2)
    assert len(validated) == 3 * runs          # a measurement changed


def test_same_traffic_divides_the_medians_of_the_trials_live_and_on_the_model(tmp_path):
    # E's cyclic runs at 1 MiB: 4 hosts t_avg 202067.71, 218443.59, 184548.59 us (median
    # 202067.71); 2 hosts 149401.40, 148522.98, 148452.95 (median 148522.98): 1.361.
    from hopsim.calibration import rigs_report

    src, out = Path("docs/validation/rigs-idle/E"), tmp_path / "E"
    out.mkdir()
    for t in (1, 2, 3):
        for shape in ("4x2-node", "2x2-node"):
            shutil.copy(src / f"imb-exchange-{shape}-t{t}.txt", out)
    sims = [(f"imb-exchange-4x2-node-t{t}.txt", v) for t, v in ((1, 100.0), (2, 130.0), (3, 110.0))]
    sims += [(f"imb-exchange-2x2-node-t{t}.txt", v) for t, v in ((1, 50.0), (2, 55.0), (3, 80.0))]
    cases = [{"file": str(out / f), "workload": "exchange", "bytes": 1048576, "simulated_us": v}
             for f, v in sims]
    rows = {r["pair"]: r for r in rigs_report.same_traffic(out, 3, cases)}
    cyclic = rows["4x2 cyclic over 2x2 cyclic"]
    assert cyclic["live"][-1] == 1.361
    assert cyclic["live"][0] == round(13129.97 / 11949.99, 3)  # 64 KiB: 1.099
    assert cyclic["model"] == [None, None, None, None, 2.0]   # 110 over 55
    # No block file here: nothing to divide.
    assert rows["4x2 block over 2x2 block"]["live"] == [None] * 5


def test_only_measures_the_missing_files_that_match(tmp_path, monkeypatch):
    # --only 'imb-exchange-2x2-*': the 2x2 files of every trial, none of the others; a
    # file already there is kept; nothing matching builds no cluster.
    import contextlib

    from hopsim.live import cluster as live_cluster

    built, ran = [], []

    @contextlib.contextmanager
    def cluster(*args, **kw):
        built.append(args)
        yield type("C", (), {"tag": "fake", "congestion_control": "bbr"})()

    def run_case(case, trial, cluster, binaries, out, timeout):
        ran.append(case.file(trial))
        return {"file": case.file(trial), "status": 0, "seconds": 0.0, "load_before": [0.0] * 3,
                "started_utc": "2026-11-28T00:00:00Z"}

    monkeypatch.setattr(live_cluster, "EmulatedCluster", cluster)
    monkeypatch.setattr(rigs, "placement_check", lambda c, out: None)
    monkeypatch.setattr(rigs, "run_case", run_case)
    (tmp_path / "imb-exchange-2x2-block-t1.txt").write_text("kept\n")
    rigs.measure(rigs.RIGS["E"], tmp_path, {}, 2, 60, log=open(os.devnull, "w"), only="imb-exchange-2x2-*")
    assert sorted(ran) == ["imb-exchange-2x2-block-t2.txt", "imb-exchange-2x2-node-t1.txt",
                           "imb-exchange-2x2-node-t2.txt"]
    assert len(built) == 1
    rigs.measure(rigs.RIGS["E"], tmp_path, {}, 2, 60, log=open(os.devnull, "w"), only="nothing-*")
    assert len(built) == 1


def test_counted_cases_are_those_not_latency_bound_by_each_runs_zero_byte_time(tmp_path, monkeypatch):
    # The 4x1 exchange counts its rate-bound sizes under 64 KiB too (16 KiB at 10 times its
    # 0 B time), not 1 KiB (under twice it); latency_checker's one size is set against the
    # rig's ping-pong, whose n½ (a real IMB file: about 10 B) is far under 4000 B.
    from hopsim.calibration import rigs_report

    rig, out = rigs.RIGS["A"], tmp_path / "A"
    out.mkdir()
    (tmp_path / "base-shm.toml").write_text("x\n")
    (out / "imb-pingpong-2x1-block-t1.txt").write_text(
        (DATA / "imb" / "IMB-MPI1-pingpong-timeout-np2-100mbit.txt").read_text())
    exchange, lc = (next(c for c in rigs.CASES if c.hosts == 4 and c.per_host == 1 and c.tool == t)
                    for t in ("imb-exchange", "latency_checker"))
    for c in (exchange, lc):
        (out / c.file(1)).write_text("x\n")

    def calibrate(fit, files, base, closed_form=False, eager_limit=None, refit_stale=False):
        return _stand_in_fit(fit)

    rows = [(exchange, "exchange", "t_avg_us", 0, 10.0, 80.0), (exchange, "exchange", "t_avg_us", 1024, 15.0, 60.0),
            (exchange, "exchange", "t_avg_us", 16384, 100.0, 5.0),
            (exchange, "exchange", "t_avg_us", 1048576, 1000.0, 3.0),
            (lc, "roundtrip", "lc_average_of_averages_us", 4000, 50.0, 40.0)]

    class Validated:
        def __init__(self, cmd):
            self.stdout = json.dumps({"cases": [
                {"file": str(out / c.file(1)), "workload": w, "statistic": s, "ranks": 4, "bytes": b,
                 "measured_us": t, "simulated_us": t * (1 + e / 100), "error_pct": e}
                for c, w, s, b, t, e in rows if any(str(a).endswith(c.file(1)) for a in cmd)]})

    monkeypatch.setattr(rigs_report, "_calibrate", calibrate)
    monkeypatch.setattr(rigs_report, "_run", Validated)
    monkeypatch.setattr(rigs_report, "same_traffic", lambda *a: [])
    result = rigs_report.baseline(tmp_path, rig, 1, cores=2)
    files = {r["file"]: r for r in result["files"]}
    ex, lat = files[exchange.file(1)], files[lc.file(1)]
    assert (ex["counted"], ex["median_abs_error_pct_counted"], ex["median_abs_error_pct_from_64KiB"]) == (2, 4.0, 3.0)
    assert ex["median_abs_error_pct"] == 32.5
    assert [c["counted"] for c in ex["per_case"]] == [False, False, True, True]
    assert (lat["counted"], lat["median_abs_error_pct_counted"]) == (1, 40.0)
    assert result["half_length_bytes"] == 10
    assert result["median_over_counted_files_pct"] == 22.0
    assert result["worst_counted_file_pct"] == 40.0
    assert result["worst_imb_file_from_64KiB_pct"] == 3.0


def test_an_interrupted_report_says_so_in_one_line_and_exits_130(tmp_path, monkeypatch, capsys):
    from hopsim.calibration import rigs_report

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(rigs_report, "write_report", interrupted)
    assert rigs.main(["--out", str(tmp_path), "--no-measure", "--baseline", "--rigs", "B"]) == 130
    assert capsys.readouterr().err == "rigs: interrupted\n"


def test_the_median_over_files_is_taken_of_unrounded_file_medians(tmp_path, monkeypatch):
    # Two 4-host files at 3.551% and 3.67%: their median is 3.61% (3.6); over the rounded
    # medians (3.6 and 3.7) it would read 3.65, shown as 3.7, as rig E's once did.
    from hopsim.calibration import rigs_report

    rig, out = rigs.RIGS["A"], tmp_path / "A"
    out.mkdir()
    (tmp_path / "base-shm.toml").write_text("x\n")
    pingpong = [c for c in rigs.CASES if c.hosts == 2 and c.tool == "imb-pingpong"][:1]
    ring = [c for c in rigs.CASES if c.hosts == 4 and c.per_host == 1 and c.tool == "imb-exchange"]
    for c in pingpong + ring:
        for trial in (1, 2):
            (out / c.file(trial)).write_text("x\n")

    def calibrate(fit, files, base, closed_form=False, eager_limit=None, refit_stale=False):
        return _stand_in_fit(fit)

    class Validated:
        def __init__(self, cmd):
            files = [str(a) for a in cmd if "4x1" in str(a)]
            self.stdout = json.dumps({"cases": [
                {"file": f, "workload": "exchange", "ranks": 4, "bytes": 1048576,
                 "statistic": "t_avg_us", "measured_us": 1000.0, "simulated_us": 0.0,
                 "error_pct": -(3.551 if f.endswith("t1.txt") else 3.67)} for f in files]})

    monkeypatch.setattr(rigs_report, "_calibrate", calibrate)
    monkeypatch.setattr(rigs_report, "_run", Validated)
    monkeypatch.setattr(rigs_report, "same_traffic", lambda *a: [])
    result = rigs_report.baseline(tmp_path, rig, 2, cores=4)  # 4 ranks, 4 cores: counted
    assert sorted(r["median_abs_error_pct_counted"] for r in result["files"]) == [3.6, 3.7]
    assert result["median_over_counted_files_pct"] == 3.6
    assert result["median_over_predicted_files_pct"] == 3.6
    assert result["median_over_imb_files_from_64KiB_pct"] == 3.6
    assert result["worst_counted_file_pct"] == 3.7


def test_a_kept_report_shows_its_median_from_the_per_case_errors(tmp_path, monkeypatch):
    # A baseline.json kept from before the unrounded rule says 3.7 (the median of the
    # rounded file medians 3.6 and 3.7); its per-case errors give 3.61: the rig's section
    # shows 3.6, as the targets' table does.
    from hopsim.calibration import rigs_report
    from hopsim.calibration.rigs import RIGS

    (tmp_path / "README.md").write_text("# Rigs\n\n" + rigs_report.MARKER + "\n")
    files = [{"file": f"imb-exchange-4x1-block-t{t}.txt", "cases": 1, "median_abs_error_pct": round(e, 1),
              "max_abs_error_pct": round(e, 1), "per_case": [
        {"workload": "exchange", "ranks": 4, "bytes": 1048576, "measured_us": 1.0,
         "simulated_us": 1.0, "error_pct": -e, "counted": True}]} for t, e in ((1, 3.551), (2, 3.67))]

    def kept(root, rig, trials, closed_form=False, cores=None, refit_stale=False):
        return {"files": files, "fitted_on": [], "commands": [], "median_over_predicted_files_pct": 3.7,
                "median_over_counted_files_pct": 3.7, "worst_counted_file_pct": 3.7}

    monkeypatch.setattr(rigs_report, "baseline", kept)
    monkeypatch.setattr(rigs_report, "key_figures", lambda out, trials: [])
    rigs_report.write_report(tmp_path, [RIGS["A"]], 2)
    section = (tmp_path / "README.md").read_text().split("## Rig A:")[1]
    assert "Median over the predicted files, counted cases: **3.6%** (worst file 3.7%)" in section


def test_calibrate_gets_each_files_placement_and_an_osu_runs_loop_counts():
    # The rigs ran osu_latency -i 50 -x 5 and osu_bw -i 20 -x 2, which their outputs do
    # not print; IMB prints its repetitions and latency_checker takes -exchanges.
    from hopsim.calibration.rigs_report import fit_arg
    from hopsim.calibration.file_placement import parse_arg

    by = {(c.tool, c.hosts, c.per_host, c.placement): c for c in rigs.CASES}
    path = Path("x.txt")
    assert fit_arg(by["osu_latency", 2, 1, "block"], path) == "x.txt@iterations=50,warmup=5"
    assert fit_arg(by["osu_bw", 2, 1, "block"], path) == "x.txt@iterations=20,warmup=2"
    assert fit_arg(by["imb-exchange", 2, 2, "cyclic"], path) == "x.txt@2,cyclic"
    assert fit_arg(by["imb-exchange", 2, 1, "block"], path) == "x.txt"
    assert fit_arg(by["latency_checker", 2, 1, "block"], path) == "x.txt"
    osu2 = rigs.Case("osu_latency", "osu", "osu_latency", 2, 2, "cyclic", ("-i", "7", "-x", "1"))
    assert parse_arg(fit_arg(osu2, path)) == parse_arg("x.txt@2,cyclic,iterations=7,warmup=1")
