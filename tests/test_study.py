"""The reproduction framework: `hopsim run NAME`, `--list`, refusals, all-or-nothing
outputs, determinism, and the report's pieces (scenarios/study.py, scenarios/report.py)."""
from __future__ import annotations

import json
import subprocess
import sys
import types

import pytest

from hopsim import cli
from hopsim.errors import InputError
from hopsim.scenarios import reproductions, report
from hopsim.scenarios.study import Study, csv_text, show


def _hopsim(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def _one_line_error(p, *words):
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    for w in words:
        assert w in lines[0], lines[0]


def _fake(run, name="fake"):
    return types.SimpleNamespace(NAME=name, TITLE="A fake study", run=run)


@pytest.fixture
def with_fake(monkeypatch):
    """Install a reproduction module `fake` whose run() the test gives."""
    real = reproductions.find

    def install(run):
        mod = _fake(run)
        monkeypatch.setattr(reproductions, "find", lambda n: mod if n == "fake" else real(n))
        monkeypatch.setattr(reproductions, "load", lambda n: mod if n == "fake" else real(n))
        return mod
    return install


# --- names ------------------------------------------------------------------------------

def test_list_names_every_reproduction_with_its_title():
    p = _hopsim("run", "--list")
    assert p.returncode == 0, p.stderr
    first = {line.split()[0] for line in p.stdout.splitlines() if line and line[0] != "("}
    assert {"gce", "azure-econome"} <= first
    assert "Google Compute Engine" in p.stdout


def test_names_are_found_by_module_dashes_as_underscores():
    assert reproductions.find("gce").NAME == "gce"
    assert reproductions.find("azure-econome").__name__.endswith(".azure_econome")
    assert reproductions.find("azure-econome").NAME == "azure-econome"
    assert reproductions.find("nope") is None
    assert reproductions.find("../gce") is None


def test_an_unknown_name_is_one_line_naming_the_reproductions(tmp_path):
    p = _hopsim("run", "no-such-study", cwd=tmp_path)
    _one_line_error(p, "no-such-study", "gce", "azure-econome", "overlays")
    assert list(tmp_path.iterdir()) == []


def test_a_scenario_file_path_keeps_working_and_refuses_reproduction_flags(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('platform = "two-nodes"\nworkload = "pingpong"\nranks = 2\nsizes = [0]\n')
    p = _hopsim("run", f, "--quick", "--out", tmp_path / "o", cwd=tmp_path)
    _one_line_error(p, "--quick", "reproductions")
    p = _hopsim("run", f, "--out", tmp_path / "o", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert sorted(x.name for x in (tmp_path / "o").iterdir()) == ["results.csv", "results.json"]


def test_scenario_flags_are_refused_for_a_reproduction(tmp_path):
    p = _hopsim("run", "gce", "--jobs", "2", cwd=tmp_path)
    _one_line_error(p, "--jobs", "gce")
    p = _hopsim("run", "gce", "--seed", "-1", cwd=tmp_path)
    _one_line_error(p, "--seed")
    assert list(tmp_path.iterdir()) == []


def test_list_with_a_name_is_refused():
    _one_line_error(_hopsim("run", "gce", "--list"), "--list")


# --- outputs ------------------------------------------------------------------------------

def _small(study):
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    study.text("Some *explanation* with `code` and **bold**.\n\n- one\n- two")
    study.table("t", ["case", "published us", "simulated us", "error %"],
                [["a", 10.0, 11.0, 10.0], ["b <c>", 20, None, float("nan")]], "A caption")
    fig = Figure(figsize=(3, 2))
    fig.add_subplot().plot([0, 1], [study.seed, 2])
    study.figure("f", fig, "A figure")
    study.command(["hopsim", "simulate", "--platform", "two-nodes"])


def test_outputs_are_written_together_and_tables_printed(with_fake, tmp_path, capsys):
    with_fake(_small)
    assert cli.main(["run", "fake", "--out", str(tmp_path / "o"), "--seed", "5"]) == 0
    names = sorted(x.name for x in (tmp_path / "o").iterdir())
    assert names == ["f.png", "report.html", "results.json", "t.csv"]
    out = capsys.readouterr().out
    assert "A caption" in out and "11.00" in out
    data = json.loads((tmp_path / "o" / "results.json").read_text())
    assert data["seed"] == 5 and data["tables"]["t"]["rows"][1] == ["b <c>", 20, None, None]
    assert data["commands"][0] == ["hopsim", "run", "fake", "--seed", "5", "--out",
                                   str(tmp_path / "o")]
    assert (tmp_path / "o" / "t.csv").read_text() == (
        "case,published us,simulated us,error %\na,10.0,11.0,10.0\nb <c>,20,,\n")
    assert (tmp_path / "o" / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_failing_study_leaves_nothing(with_fake, tmp_path, capsys):
    def failing(study):
        _small(study)
        raise InputError("the study refused its input")
    with_fake(failing)
    assert cli.main(["run", "fake", "--out", str(tmp_path / "deep" / "o")]) == 2
    assert list(tmp_path.iterdir()) == []
    assert "the study refused its input" in capsys.readouterr().err


def test_a_bad_out_is_refused_before_the_study_runs(with_fake, tmp_path):
    ran = []
    with_fake(lambda study: ran.append(1))
    (tmp_path / "file").write_text("x")
    assert cli.main(["run", "fake", "--out", str(tmp_path / "file")]) == 2
    assert cli.main(["run", "fake", "--out", "/proc/o"]) == 2
    assert ran == [] and (tmp_path / "file").read_text() == "x"


def test_an_existing_output_that_is_a_folder_is_refused_and_nothing_replaced(with_fake, tmp_path):
    with_fake(_small)
    o = tmp_path / "o"
    (o / "report.html").mkdir(parents=True)
    (o / "t.csv").write_text("old")
    assert cli.main(["run", "fake", "--out", str(o)]) == 2
    assert (o / "t.csv").read_text() == "old" and sorted(x.name for x in o.iterdir()) == [
        "report.html", "t.csv"]


def test_default_out_folder_is_named_after_the_reproduction(with_fake, tmp_path, monkeypatch):
    with_fake(_small)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["run", "fake"]) == 0
    assert (tmp_path / "reproduction-fake" / "report.html").is_file()


def test_two_runs_are_byte_identical_and_the_seed_matters(with_fake, tmp_path, monkeypatch):
    with_fake(_small)
    for d, seed in (("a", "3"), ("b", "3"), ("c", "4")):
        (tmp_path / d).mkdir()
        monkeypatch.chdir(tmp_path / d)     # the same --out, as the rerun command names it
        assert cli.main(["run", "fake", "--out", "o", "--seed", seed]) == 0

    def files(d):
        return {x.name: x.read_bytes() for x in (tmp_path / d / "o").iterdir()}
    assert files("a") == files("b")
    assert files("a")["f.png"] != files("c")["f.png"]
    assert files("a")["t.csv"] == files("c")["t.csv"]


def test_a_real_reproduction_is_byte_identical_across_processes(tmp_path):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        p = _hopsim("run", "gce", "--quick", "--seed", "9", "--out", "o", cwd=tmp_path / d)
        assert p.returncode == 0, p.stderr
    a = {x.name: x.read_bytes() for x in (tmp_path / "a" / "o").iterdir()}
    b = {x.name: x.read_bytes() for x in (tmp_path / "b" / "o").iterdir()}
    assert set(a) == {"latency.csv", "latency.png", "results.json", "report.html"}
    assert a == b


# --- pieces ---------------------------------------------------------------------------------

def test_cells_as_a_reader_sees_them():
    assert show(1081.614) == "1081.61"
    assert show(0.01234) == "0.0123"
    assert show(0.0) == "0.00"
    assert show(None) == "-"
    assert show(128) == "128"


def test_csv_keeps_full_precision_and_blanks_missing_values():
    assert csv_text(["a", "b"], [[0.1 + 0.2, None]]) == "a,b\n0.30000000000000004,\n"


def test_markdown_escapes_and_formats():
    assert report.markdown("x < y, `a<b>` and **b** *c*") == (
        "<p>x &lt; y, <code>a&lt;b&gt;</code> and <strong>b</strong> <em>c</em></p>")
    assert report.markdown("- one\n- two") == "<ul><li>one</li><li>two</li></ul>"


def test_keys_must_be_file_names_and_distinct(tmp_path):
    s = Study("x", "X", tmp_path)
    s.table("t", ["a"], [[1]], "c")
    with pytest.raises(InputError, match="already used"):
        s.table("t", ["a"], [[1]], "c")
    with pytest.raises(InputError, match="cannot name a file"):
        s.table("../t", ["a"], [[1]], "c")
    with pytest.raises(InputError, match="2 cells for 1 columns"):
        s.table("u", ["a"], [[1, 2]], "c")


def test_derived_seeds_are_stable_distinct_and_follow_the_seed(tmp_path):
    a, b = Study("x", "X", tmp_path, seed=1), Study("x", "X", tmp_path, seed=2)
    assert a.derive_seed("gce", 0) == a.derive_seed("gce", 0)
    assert len({a.derive_seed("gce", t) for t in range(100)}) == 100
    assert a.derive_seed("gce", 0) != b.derive_seed("gce", 0)
    assert all(0 < a.derive_seed(t) < 2**63 for t in range(100))


def test_the_report_records_each_platforms_provenance(tmp_path):
    s = Study("x", "X", tmp_path)
    plat = s.platform("ec2-10gbe")
    assert plat.name == "ec2-10gbe"
    page = report.html(s)
    assert "network.latency_us" in page and "calibration run" in page
    assert "http://" not in page and "https://" not in page
