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


def test_pingping_keeps_a_send_and_a_receive_per_rank_in_flight():
    # 2 ranks: 4 messages in flight at 1 KiB each (flow), beside 2 nodes and 2 ranks.
    est = bounds.memory_estimate
    assert est(2, 2, "pingping") == 32 * MiB + 2 * 20 * KiB + 2 * KiB + 4 * KiB


def test_a_file_of_exactly_the_limit_is_read_and_one_byte_more_is_refused(tmp_path):
    path = tmp_path / "f.toml"
    path.write_bytes(b"x" * 10)
    assert bounds.read_text(path, "platform file", limit=10) == "x" * 10
    path.write_bytes(b"x" * 11)
    with pytest.raises(InputError, match="f.toml: cannot read platform file: larger than 10 bytes"):
        bounds.read_text(path, "platform file", limit=10)


def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path):
    # Opened without O_NONBLOCK, a FIFO with no writer blocks the open until one comes:
    # the reader runs in a thread, and a writer is opened to free it if it blocked.
    import os
    import threading

    fifo = tmp_path / "in.toml"
    os.mkfifo(fifo)
    outcome = []

    def read():
        try:
            bounds.read_text(fifo, "platform file")
        except InputError as e:
            outcome.append(str(e))

    reader = threading.Thread(target=read)
    reader.start()
    reader.join(10)
    blocked = reader.is_alive()
    if blocked:
        os.close(os.open(fifo, os.O_WRONLY))
        reader.join(10)
    assert not blocked, "read_text waited on a FIFO"
    assert outcome == [f"{fifo}: cannot read platform file: not a regular file"]


def test_without_memavailable_the_physical_memory_is_taken(monkeypatch):
    # Linux's MemTotal is the physical pages times the page size, in KiB.
    with open("/proc/meminfo") as f:
        total = next(int(l.split()[1]) * KiB for l in f if l.startswith("MemTotal:"))

    def no_meminfo(*args, **kwargs):
        raise OSError("no /proc")

    monkeypatch.setattr(bounds, "open", no_meminfo, raising=False)
    assert bounds.available_memory() == total


def test_memory_below_a_gib_is_printed_in_mib():
    # 50000 nodes (44 KiB each past 30000), 1 rank, 2 messages in flight:
    # 32 MiB + 50000 x 45056 + 1024 + 2048 = 2286357504 B = 2.129 GiB.
    with pytest.raises(InputError, match=r"about 2.13 GiB of memory \(ranks 1, nodes 50000\); "
                                         r"768 MiB is available$"):
        bounds.check_memory(50000, 1, "pingpong", available=768 * MiB)
    with pytest.raises(InputError, match=r"; 1 GiB is available$"):
        bounds.check_memory(50000, 1, "pingpong", available=GiB)
