"""hopsim.bounds' numbers, each against a value worked out by hand from what it says it is
(survivors of bench/mutation.py: docs/hardening.md, "Mutation testing")."""
import pytest

from hopsim import bounds
from hopsim.errors import InputError

KiB, MiB, GiB, TiB = 2**10, 2**20, 2**30, 2**40


def test_the_documented_limits():
    assert bounds.BOUNDS["seed"].high == 18446744073709551615  # the engine's uint64
    assert bounds.BOUNDS["burst"].high == 1073741824  # "at most 1 GiB"
    assert bounds.BOUNDS["fit_iterations"].high == 1000000
    assert bounds.BOUNDS["network.bucket_burst_bytes"].high == 1099511627776  # 1 TiB
    assert bounds.BOUNDS["timeout"].high == 604800  # a week in seconds
    assert bounds.BOUNDS["ranks"].high == 2147483647  # a C++ int
    assert bounds.BOUNDS["window"].high == 1000  # osu_bw's MAX_REQ_NUM
    bounds.check("seed", 18446744073709551615)
    with pytest.raises(InputError, match="seed: must be at most 2\\^64-1"):
        bounds.check("seed", 18446744073709551616)


def test_only_the_seed_may_be_ray():
    bounds.check_parameters({"seed": "ray"})
    for key in ("window", "sizes", "ranks", "repetitions"):  # after and before "seed"
        with pytest.raises(InputError, match=f"{key}: must be an integer, got 'ray'"):
            bounds.check_parameters({key: "ray"})


def test_memory_estimate_by_hand():
    # 32 MiB at rest; flow: 20 KiB a node (44 KiB past 30000), 1 KiB a rank, 1 KiB a
    # message in flight; roundtrip keeps 32 B per round trip; queue: 64 B a node and
    # 256 B a message in flight; random and user overlays 2 B per (rank, rank),
    # ray-random 16 B per pair.
    est = bounds.memory_estimate
    assert est(4, 8, "roundtrip", 100) == 32 * MiB + 4 * 20 * KiB + 8 * KiB + 16 * KiB + 32 * 800
    assert est(40000, 10, "alltoall") == 32 * MiB + 40000 * 44 * KiB + 10 * KiB + 100 * KiB
    assert est(2, 10, "allreduce") == 32 * MiB + 2 * 20 * KiB + 10 * KiB + 40 * KiB
    assert est(2, 10, "sendrecv") == 32 * MiB + 2 * 20 * KiB + 10 * KiB + 20 * KiB
    assert (est(100, 100, "roundtrip", 1, overlay="ray-random")
            == 32 * MiB + 100 * 20 * KiB + 100 * KiB + 200 * KiB + 16 * 100 * 100 + 32 * 100)
    assert (est(100, 100, "roundtrip", 1, overlay="random")
            == 32 * MiB + 100 * 20 * KiB + 100 * KiB + 200 * KiB + 2 * 100 * 100 + 32 * 100)
    assert est(4, 8, "exchange", transport="queue") == 32 * MiB + 4 * 64 + 8 * KiB + 256 * 32
