"""hopsim's Ray files against the files RayPlatform's own routing code wrote
(tests/data/ray/README.md says how), byte for byte, for every family."""
import gzip
import hashlib
import math
from pathlib import Path

import pytest

from hopsim import topologies as topo

DATA = Path(__file__).parent / "data" / "ray"

# folder (RayPlatform's type-ranks-degree) -> hopsim's family, ranks, degree, seed
CASES = {
    "complete-10-2": ("complete", 10, 0, 1),
    "debruijn-16-2": ("debruijn", 16, 2, 1),
    "debruijn-27-3": ("debruijn", 27, 3, 1),
    "debruijn-64-2": ("debruijn", 64, 0, 1),      # Ray's default degree 2: B(2, 6)
    "debruijn-729-2": ("debruijn", 729, 0, 1),    # 729 is no power of 2: B(27, 2)
    "debruijn-1024-2": ("debruijn", 1024, 0, 1),  # the published 1024-rank run: B(2, 10)
    "kautz-12-2": ("kautz", 12, 0, 1),            # RayPlatform takes the largest d: K(3, 2)
    "kautz-36-2": ("kautz", 36, 0, 1),
    "group-20-2": ("group", 20, 0, 1),
    "polytope-16-2": ("polytope", 16, 0, 1),
    "polytope-27-6": ("polytope", 27, 3, 1),      # RayPlatform's degree (b-1)L = 6
    "torus-16-2": ("torus", 16, 0, 1),
    "torus-25-4": ("torus", 25, 5, 1),            # RayPlatform's degree 2D = 4
    "torus-27-6": ("torus", 27, 3, 1),
    "random-64-2": ("random", 64, 0, "ray"),
    "random-512-2": ("random", 512, 0, "ray"),
}


def golden_files(folder: Path) -> dict[str, bytes]:
    out = {}
    for path in folder.iterdir():
        if path.suffix == ".gz":
            out[path.stem] = gzip.decompress(path.read_bytes())
        elif path.name.endswith(".txt"):
            out[path.name] = path.read_bytes()
    return out


def checksums(folder: Path) -> dict[str, str]:
    sums = folder / "SHA256SUMS"
    if not sums.exists():
        return {}
    return {name: digest for digest, name in (line.split() for line in sums.read_text().splitlines())}


def test_every_golden_folder_is_a_case():
    assert sorted(p.name for p in DATA.iterdir() if p.is_dir()) == sorted(CASES)


@pytest.mark.parametrize("folder", sorted(CASES))
def test_files_equal_rayplatforms(folder, tmp_path):
    family, ranks, degree, seed = CASES[folder]
    overlay = topo.build_overlay(family, ranks, degree, seed)
    topo.write_ray_files(overlay, tmp_path)
    golden = golden_files(DATA / folder)
    sums = checksums(DATA / folder)
    assert golden, folder
    for name, expected in golden.items():
        assert (tmp_path / name).read_bytes() == expected, name
    for name, digest in sums.items():
        assert hashlib.sha256((tmp_path / name).read_bytes()).hexdigest() == digest, name


def test_debruijn_default_at_1024_ranks_is_ray_b_2_10():
    s = topo.shape("debruijn", 1024)
    assert (s.degree, s.digits) == (2, 10)
    st = topo.route_statistics(topo.build_overlay("debruijn", 1024))
    assert st.diameter == 10
    # An explicit degree is honoured.
    assert topo.shape("debruijn", 1024, 32) == topo.Shape(1024, 32, 2)


def test_ray_standard_deviation_truncates_each_deviation():
    # mean 1.5: deviations -1.5, -0.5, 0.5, 1.5 truncate to -1, 0, 0, 1.
    values = [0, 1, 2, 3]
    assert topo.statistics.ray_standard_deviation(values) == pytest.approx((2 / 4) ** 0.5)
    assert topo.statistics.ray_standard_deviation([4, 6]) == 1.0  # integer mean: the population SD


def test_a_frequency_row_that_is_no_number_is_refused(tmp_path):
    # Summary.txt's RouteLength table holds "<hops> <count>" rows and a "Total" row; a
    # row whose first field is neither is a damaged file, not a row to skip.
    from hopsim.topologies.rayfiles import read_summary

    topo.write_ray_files(topo.build_overlay("debruijn", 4, 2), tmp_path)
    good = read_summary(tmp_path / "Summary.txt")
    # B(2, 2): 4 routes of a rank to itself, 6 pairs one hop apart, 6 two hops.
    assert good["route_lengths"] == {0: 4, 1: 6, 2: 6}
    text = (tmp_path / "Summary.txt").read_text()
    assert "        2    6    37.5%\n" in text
    (tmp_path / "Summary.txt").write_text(text.replace("        2    6    37.5%\n",
                                                       "        two    6    37.5%\n"))
    with pytest.raises(ValueError):
        read_summary(tmp_path / "Summary.txt")


def test_ray_standard_deviation_wraps_as_c_ints_do():
    # 0 and 100000: mean 50000, each square 2.5e9 overflows a 32-bit int to
    # 2500000000 - 2^32 = -1794967296; the two summed in 64 bits unsigned give
    # 2^64 - 3589934592, and the SD is the square root of half of that.
    sd = topo.statistics.ray_standard_deviation([0, 100000])
    assert sd == math.sqrt((2**64 - 3589934592) / 2)


def test_progress_of_a_load_counted_overlay_is_split_between_its_two_walks():
    # A polytope keeps RayPlatform's load counters: its routes are walked twice (its own
    # statistics, then the shared table of Ray's files), each walk half of the bar.
    seen = []
    topo.route_statistics(topo.build_overlay("polytope", 16), progress=seen.append)
    assert seen[0] == 0.5 and seen[-1] == 1.0 and seen == sorted(seen)
