"""hopsim.outputs and the commands routed through it: regular files only, symlinks to
regular files followed, all outputs of a command or none, one file mode; and the
process and folder hopsim smpi leaves when it is killed (none)."""
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hopsim import outputs
from hopsim.errors import InputError

DATA = Path(__file__).parent / "data"
OSU = str(DATA / "osu" / "osu_latency-7.4-tcp.txt")


def hopsim(*args, cwd=None, **kw):
    return subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, **kw)


def refused(p, *needles):
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("hopsim") and "Traceback" not in p.stderr
    for n in needles:
        assert n in p.stderr, p.stderr


def test_a_device_fifo_or_folder_is_never_replaced(tmp_path):
    os.mkfifo(tmp_path / "fifo.png")
    (tmp_path / "dir.png").mkdir()
    for target in ("fifo.png", "dir.png"):
        p = hopsim("topology", "debruijn", "--ranks", 16, "--plot", target, cwd=tmp_path)
        refused(p, target, "hopsim writes only regular files")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo.png").st_mode)
    if os.geteuid() == 0:  # only root can make a device node; /dev itself is never touched
        os.mknod(tmp_path / "dev.png", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        refused(hopsim("validate", "--platform", "two-nodes", OSU, "--plot", "dev.png",
                       cwd=tmp_path), "not a regular file")
        assert stat.S_ISCHR(os.lstat(tmp_path / "dev.png").st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["fifo.png", "dir.png"] + (["dev.png"] if os.geteuid() == 0 else []))


def test_a_symlink_to_a_regular_file_is_followed_and_stays_a_link(tmp_path):
    (tmp_path / "real.png").write_bytes(b"old")
    (tmp_path / "link.png").symlink_to("real.png")
    p = hopsim("topology", "debruijn", "--ranks", 16, "--plot", "link.png", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "link.png").is_symlink()
    assert (tmp_path / "real.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (tmp_path / "dangling.png").symlink_to("missing/nowhere.png")
    refused(hopsim("topology", "debruijn", "--ranks", 16, "--plot", "dangling.png", cwd=tmp_path),
            "does not exist")


def test_calibrate_writes_all_four_outputs_or_none(tmp_path):
    (tmp_path / "f.png").mkdir()
    p = hopsim("calibrate", OSU, "--base", "two-nodes", "--out", "o.toml", "--plot", "f.png",
               cwd=tmp_path)
    refused(p, "--plot f.png")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["f.png"]
    # A failure while staging (the figure's writer fails) removes the staged platform too.
    with pytest.raises(InputError):
        with outputs.Outputs() as out:
            a = out.file(tmp_path / "a.toml", "--out")
            out.text(a, "x = 1\n")
            b = out.file(tmp_path / "b.png", "--plot")
            out.write(b, lambda tmp: (_ for _ in ()).throw(InputError("drawing failed")))
    assert sorted(x.name for x in tmp_path.iterdir()) == ["f.png"]


def test_calibrate_and_export_name_and_mode_the_smpi_flags_alike(tmp_path):
    old = os.umask(0o022)
    try:
        assert hopsim("calibrate", OSU, "--base", "two-nodes", "--out", "c.toml",
                      cwd=tmp_path).returncode == 0
        assert hopsim("platforms", "export", "two-nodes", "--out", "e", cwd=tmp_path).returncode == 0
    finally:
        os.umask(old)
    names = sorted(x.name for x in tmp_path.iterdir())
    assert names == ["c.smpi", "c.toml", "c.xml", "e.smpi", "e.xml"]
    modes = {n: stat.S_IMODE((tmp_path / n).stat().st_mode) for n in names}
    assert set(modes.values()) == {0o644}, modes  # 0666 less the umask 022, as open() gives


def test_a_name_from_a_file_never_becomes_a_path(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "p.toml").write_text((DATA / "fuzz" / "bad-platform-name-path.toml").read_text())
    refused(hopsim("platforms", "export", "p.toml", cwd=tmp_path / "sub"), "'../../evil' cannot name a file")
    refused(hopsim("calibrate", OSU, "--base", "two-nodes", "--out", "o.toml", "--name", "../x",
                   cwd=tmp_path / "sub"), "--name")
    assert sorted(x.name for x in tmp_path.rglob("*")) == ["p.toml", "sub"]
    for bad in ("", ".", "..", "-x", "a/b", ".hidden"):
        with pytest.raises(InputError):
            outputs.safe_name(bad)
    assert outputs.safe_name("fit-2x200mbit_v1.2") == "fit-2x200mbit_v1.2"


def test_flags_that_do_nothing_in_the_mode_given_are_refused(tmp_path):
    refused(hopsim("calibrate", OSU, "--out", "o.toml", "--tool", "netpipe", cwd=tmp_path), "--tool")
    refused(hopsim("calibrate", OSU, "--out", "o.toml", "--iterations", "5", cwd=tmp_path), "--iterations")
    refused(hopsim("platforms", "--out", "x", cwd=tmp_path), "--out")
    refused(hopsim("platforms", "--format", "simgrid-xml", cwd=tmp_path), "--format")
    refused(hopsim("platforms", "export", "two-nodes", "--out", "", cwd=tmp_path), "--out")
    refused(hopsim("calibrate", OSU, "--out", "", cwd=tmp_path), "--out")
    refused(hopsim("topology", "debruijn", "--ranks", 16, "--out", "", cwd=tmp_path), "--out")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value, says", [("nan", "finite"), ("inf", "finite"), ("-1", "> 0"),
                                         ("0", "> 0"), ("1e999", "finite"), ("x", "number"),
                                         ("1e9", "at most")])
@pytest.mark.parametrize("command", ["smpi", "live"])
def test_timeout_goes_through_the_bounds(command, value, says):
    p = hopsim(command, "--platform", "two-nodes", "--workload", "pingpong", "--ranks", 2,
               "--timeout", value) if command == "smpi" else \
        hopsim(command, "--workload", "pingpong", "--ranks", 2, "--timeout", value)
    refused(p, "--timeout", says)


def test_version_show_and_closed_stdout(tmp_path):
    p = hopsim("--version")
    assert p.returncode == 0 and p.stdout.startswith("hopsim 0.")
    p = hopsim("platforms", "show", "two-nodes")
    assert p.returncode == 0, p.stderr
    from hopsim.platforms import PRESET_DIR
    preset = (PRESET_DIR / "two-nodes.toml").read_text()
    assert preset in p.stdout  # the whole file, comments and [provenance] included
    assert "# values hash " in p.stdout and "# | [provenance]" in p.stdout
    refused(hopsim("platforms", "show", "no-such-preset"), "unknown platform")
    p = subprocess.run(f"'{sys.executable}' -m hopsim simulate --platform two-nodes "
                       "--workload pingpong --ranks 2 >&-", shell=True, capture_output=True, text=True)
    refused(p, "standard output is closed")


def test_results_record_node_count_and_values_hash(tmp_path):
    import hopsim as api
    from hopsim.platforms import Platform

    a = Platform(name="a", nodes=3, cores=1, latency_us=5.0, bandwidth_gbps=1.0)
    same_values = a.replace(name="b")
    other = a.replace(latency_us=6.0)
    ra, rb, rc = (api.simulate(p, "pingpong", ranks=2, sizes=[0], iterations=2).to_dict()
                  for p in (a, same_values, other))
    assert ra["platform_nodes"] == 3
    assert ra["platform_hash"] == rb["platform_hash"] != rc["platform_hash"]
    assert len(ra["platform_hash"]) == 16 and int(ra["platform_hash"], 16) >= 0


needs_smpi = pytest.mark.skipif(shutil.which("smpirun") is None or shutil.which("smpicc") is None,
                                reason="SimGrid's SMPI (smpirun, smpicc) is not installed")


def _group(pgid):
    """The live processes of a group (zombies aside: after a live test made pytest a
    child subreaper, killed orphans wait there to be reaped, running nothing)."""
    out = subprocess.run(["ps", "-eo", "pid=,pgid=,stat=,comm="], capture_output=True,
                         text=True).stdout
    return [line for line in out.splitlines()
            if line.split()[1] == str(pgid) and not line.split()[2].startswith("Z")]


@needs_smpi
def test_smpi_killed_by_sigkill_leaves_no_process_and_no_folder(tmp_path):
    hop = subprocess.Popen([sys.executable, "-m", "hopsim", "smpi", "--platform", "two-nodes",
                            "--workload", "pingpong", "--ranks", "2", "--sizes", "0",
                            "--iterations", "100000000"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    smpirun, folder = None, None
    deadline = time.monotonic() + 120  # the first run compiles hopbench with smpicc
    while time.monotonic() < deadline and folder is None:
        time.sleep(0.2)
        kids = subprocess.run(["pgrep", "-P", str(hop.pid), "-f", "smpirun"], capture_output=True,
                              text=True).stdout.split()
        for pid in kids:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if b"-platform" in cmd:
                smpirun = int(pid)
                folder = Path(cmd[cmd.index(b"-platform") + 1].decode()).parent
    assert smpirun is not None, "smpirun did not start"
    time.sleep(1.0)  # smpimain is up
    assert any("smpimain" in line for line in _group(smpirun)), _group(smpirun)
    hop.send_signal(signal.SIGKILL)
    hop.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (_group(smpirun) or folder.exists()):
        time.sleep(0.1)
    assert _group(smpirun) == [] and not folder.exists()


# -- found by bench/mutation.py (docs/hardening.md, "Mutation testing") -----------------

def test_a_declared_folder_is_created_at_commit_with_its_parents(tmp_path):
    # `path is not None` for `path is None` refused every folder: nothing else declares
    # one in-process.
    target = tmp_path / "new" / "deeper"
    with outputs.Outputs() as out:
        assert out.folder(target, "--out") == target
        assert not (tmp_path / "new").exists()  # nothing made before the commit
    assert target.is_dir()
    with pytest.raises(InputError, match="--out: expected a folder name"):
        outputs.Outputs().folder("", "--out")


def test_write_all_writes_text_and_writers_together(tmp_path):
    # A loop over no files (`for ... in []`) wrote nothing and still said it had.
    a, b = tmp_path / "a.txt", tmp_path / "b.bin"
    written = outputs.write_all({a: "text\n", b: lambda tmp: Path(tmp).write_bytes(b"\x00\x01")})
    assert written == [a, b]
    assert a.read_text() == "text\n" and b.read_bytes() == b"\x00\x01"


def test_a_figure_must_end_in_png_whatever_sorts_before_or_after_it(tmp_path):
    # `!=` turned into `<` or `>` let through the suffixes on one side of ".png".
    out = outputs.Outputs()
    assert out.file(tmp_path / "fig.PNG", "--plot", ".png") == tmp_path / "fig.PNG"
    for wrong in ("fig.svg", "fig.jpg", "fig.aaa", "fig.zzz", "fig"):
        with pytest.raises(InputError, match=r"--plot .*: give a file name ending in \.png"):
            out.file(tmp_path / wrong, "--plot", ".png")
