"""calibration/rigs_collectives.py: IMB collectives on the rigs, predicted by the kept fits."""
import json
from pathlib import Path

import pytest

from hopsim.calibration import rigs, rigs_collectives as rc

DATA = Path(__file__).parent / "data"


def _case(coll, per_host, placement):
    return next(c for c in rc.CASES if c.tool == f"imb-{coll}" and c.per_host == per_host
                and c.placement == placement)


def _fit_dir(tmp_path):
    fits = tmp_path / "fits" / "A"
    fits.mkdir(parents=True)
    (fits / "baseline-fit.toml").write_text('[network]\ntransport = "flow"\n')
    (fits / "baseline-fit-queue.toml").write_text('[network]\ntransport = "queue"\n')
    # A real 2-host ping-pong: its n½ is about 10 B.
    (fits / "imb-pingpong-2x1-block-t1.txt").write_text(
        (DATA / "imb" / "IMB-MPI1-pingpong-timeout-np2-100mbit.txt").read_text())
    return fits


def test_the_cases_run_every_collective_at_both_placements_as_open_mpi_spells_them():
    cmds = {(c.tool, c.per_host, c.placement): rigs.mpirun_command(c, [], "hf", "IMB-MPI1") for c in rc.CASES}
    assert len(cmds) == 12
    cyclic = cmds["imb-bcast", 2, "cyclic"]
    assert cyclic[cyclic.index("--map-by") + 1] == "node"
    assert cmds["imb-alltoall", 2, "block"][cmds["imb-alltoall", 2, "block"].index("--map-by") + 1] == "ppr:2:node"
    assert cmds["imb-allgather", 1, "block"][-7:] == ["Allgather", "-npmin", "4", "-msglog", "0:20", "-iter", "200,10"]
    assert _case("allreduce", 2, "cyclic").file(3) == "imb-allreduce-4x2-node-t3.txt"


def test_zero_bytes_are_left_out_and_small_cases_on_more_ranks_than_cores_are_not_counted(tmp_path, monkeypatch):
    # 8 ranks on 2 cores: 4 B is under the ping-pong's n½ (latency-bound, the scheduler's),
    # 1 KiB and 1 MiB are not; 0 B is Open MPI returning at once and is no case at all.
    fits, out = _fit_dir(tmp_path), tmp_path / "out" / "A"
    out.mkdir(parents=True)
    block, cyclic = _case("alltoall", 2, "block"), _case("alltoall", 2, "cyclic")
    for c in (block, cyclic):
        (out / c.file(1)).write_text("x\n")
    rows = ((0, 0.2, -100.0), (4, 50.0, -90.0), (1024, 400.0, -20.0), (65536, 9000.0, 10.0),
            (1048576, 90000.0, -4.0))
    called = []

    class Validated:
        def __init__(self, cmd):
            called.append([str(a) for a in cmd])
            files = [str(a) for a in cmd if str(a).endswith(".txt")]
            args = [str(a) for a in cmd]
            scale = (2 if "cyclic" in args else 1) * (3 if args[args.index("--platform") + 1].endswith("queue.toml") else 1)
            self.stdout = json.dumps({"cases": [
                {"file": f, "workload": "alltoall", "statistic": "t_avg_us", "ranks": 8, "bytes": b,
                 "measured_us": t, "simulated_us": t * (1 + scale * e / 100), "error_pct": scale * e}
                for f in files for b, t, e in rows]})

    monkeypatch.setattr(rc, "_run", Validated)
    result = rc.predict("A", out, fits, 1, cores=2)
    files = {r["file"]: r for r in result["files"]}
    b, n = files[block.file(1)], files[cyclic.file(1)]
    assert b["cases"] == 4 and b["counted"] == 3
    assert [c["bytes"] for c in b["per_case"]] == [4, 1024, 65536, 1048576]
    assert [c["counted"] for c in b["per_case"]] == [False, True, True, True]
    assert b["median_abs_error_pct_counted"] == 10.0
    assert b["median_abs_error_pct"] == 15.0
    assert b["median_abs_error_pct_from_64KiB"] == 7.0
    assert b["max_abs_error_pct_counted"] == 20.0
    assert b["signed_error_pct_at"] == {"1024": -20.0, "65536": 10.0, "1048576": -4.0}
    assert n["median_abs_error_pct_counted"] == 20.0 and n["placement"] == "cyclic"
    assert (b["median_abs_error_pct_counted_queue"], n["median_abs_error_pct_counted_queue"]) == (30.0, 60.0)
    assert result["half_length_bytes"] == 10
    # Each group replayed with the placement it ran, on the kept fit.
    assert [c[c.index("--placement") + 1] for c in called] == ["block", "block", "cyclic", "cyclic"]
    assert [Path(c[c.index("--platform") + 1]).name for c in called] == [
        "baseline-fit.toml", "baseline-fit-queue.toml"] * 2
    assert rc.summary(result) == {"alltoall": (15.0, 20.0), "all": (15.0, 20.0)}
    assert rc.summary(result, "_queue") == {"alltoall": (45.0, 60.0), "all": (45.0, 60.0)}
    # Kept while the files, the fit and the code are the same; redone when a file changes.
    rc.predict("A", out, fits, 1, cores=2)
    assert len(called) == 4
    (out / block.file(1)).write_text("y\n")
    rc.predict("A", out, fits, 1, cores=2)
    assert len(called) == 8
    (fits / "baseline-fit-queue.toml").write_text('[network]\ntransport = "queue"\n\n')
    rc.predict("A", out, fits, 1, cores=2)
    assert len(called) == 12


def test_the_report_keeps_its_hand_written_part_and_tabulates_each_rig(tmp_path):
    out = tmp_path / "out"
    (out / "A").mkdir(parents=True)
    # A real 4-rank Bcast: t_max at 64 KiB is 1297.60 us (t_avg 899.62).
    (out / "A" / "imb-bcast-4x1-block-t1.txt").write_text(
        (DATA / "imb" / "IMB-MPI1-bcast-4x1-1200mbit.txt").read_text())
    (out / "README.md").write_text(f"# Hand\n\nprose\n\n{rc.MARKER}\nold generated\n")
    row = {"file": "imb-bcast-4x1-block-t1.txt", "collective": "bcast", "hosts": 4, "per_host": 1,
           "placement": "block", "cases": 1, "counted": 1, "median_abs_error_pct_counted": 12.34,
           "median_abs_error_pct_from_64KiB": 12.34, "median_abs_error_pct": 12.34,
           "max_abs_error_pct_counted": 12.3, "signed_error_pct_at": {"65536": -12.3},
           "noise_floor_counted_pct": None, "median_abs_error_pct_counted_queue": 20.0,
           "per_case": [{"workload": "bcast", "ranks": 4, "bytes": 65536, "measured_us": 100.0,
                         "simulated_us": 1946.4, "error_pct": -12.34, "counted": True}]}
    text = rc.write_report(out, [{"rig": "A", "fit": "f.toml", "fit_code": "abc", "code": "abc",
                                  "half_length_bytes": 10, "commands": ["hopsim validate x"], "files": [row]}])
    assert text.startswith("# Hand\n\nprose\n\n" + rc.MARKER) and "old generated" not in text
    assert "| A | - | - | - | 12.3 (12.3) | 12.3 (12.3) | 20.0 (20.0) | 50.0 (50.0) |" in text
    assert "| -, -12, - | 20.0 | 50.0 |" in text
    assert "| bcast 4x1 block | 65536 | " in text and "| 100.0 | 1946.4 | -12.3 (-12) |" in text


@pytest.mark.parametrize("args, fragment", [(["--rigs", "A,Z"], "--rigs"), (["--rigs", "A", "--trials", "0"], "--trials"),
                                            (["--rigs", "A", "--no-measure"], "no kept fit")])
def test_bad_input_is_one_line_exit_2_and_nothing_is_written(tmp_path, capsys, args, fragment):
    out = tmp_path / "out"
    code = rc.main(["--out", str(out), "--fits", str(tmp_path / "none"), *args])
    err = capsys.readouterr().err
    assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1
    assert not (out / "README.md").exists()


def test_no_predict_measures_each_rig_and_writes_no_report(tmp_path, monkeypatch):
    measured = []
    monkeypatch.setattr(rc, "find_binaries", lambda tools, cases: {"IMB-MPI1": "IMB-MPI1"})
    monkeypatch.setattr(rc, "measure", lambda rig, out, binaries, trials, timeout, cases: measured.append(
        (rig.name, out.name, trials, len(cases))))
    monkeypatch.setattr(rc, "predict", lambda *a: pytest.fail("predicted"))
    assert rc.main(["--out", str(tmp_path), "--rigs", "N,B", "--trials", "2", "--no-predict"]) == 0
    assert measured == [("N", "N", 2, 12), ("B", "B", 2, 12)]
    assert not (tmp_path / "README.md").exists()
