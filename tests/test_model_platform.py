"""The model mechanisms' platform keys (docs/model.md): parsing, bounds, defaults that
leave the engine as it was, and each mechanism through the Python API."""
import pytest

import hopsim
from hopsim import InputError
from hopsim.platforms import parse_platform

BASE = """\
name = "m"
[nodes]
count = 2
cores = 1
[network]
latency_us = 10.0
bandwidth_gbps = 1.0
"""


def parse(*lines: str, base: str = BASE):
    return parse_platform(base + "\n".join(lines) + "\n", "m.toml")


def with_network(*lines: str) -> str:
    return BASE + "\n".join(lines) + "\n"


def test_absent_keys_are_off_and_the_engine_gets_its_defaults():
    spec = parse().to_engine_dict()
    assert (spec["bucket_gbps"], spec["bucket_burst_bytes"], spec["nic_message_us"]) == (0, 0, 0)
    assert spec["oversubscribe"] is False and spec["eager_threshold_bytes"] == -1
    assert spec["probe"] == "arrival" and spec["noise_scope"] == "off"
    assert spec["noise_values_us"] == []


def test_every_key_reaches_the_engine_under_its_file_name():
    p = parse_platform(BASE.replace("cores = 1", "cores = 1\noversubscribe = true")
                       + "bucket_gbps = 0.2\nbucket_burst_bytes = 65536\nnic_message_us = 3\n"
                       + "[host]\neager_threshold_bytes = 65536\nprobe = \"header\"\n"
                       + "[noise]\nscope = \"run\"\ndistribution = \"empirical\"\n"
                       + "values_us = [1, 2.5]\n", "m.toml")
    spec = p.to_engine_dict()
    assert spec["oversubscribe"] is True
    assert (spec["bucket_gbps"], spec["bucket_burst_bytes"], spec["nic_message_us"]) == (0.2, 65536, 3)
    assert (spec["eager_threshold_bytes"], spec["probe"]) == (65536, "header")
    assert (spec["noise_scope"], spec["noise_distribution"], spec["noise_values_us"]) == (
        "run", "empirical", [1.0, 2.5])


def doc(section: str, *lines: str) -> str:
    """BASE with lines added to a section ([nodes] and [network] exist in BASE)."""
    body = "\n".join(lines)
    if section == "nodes":
        return BASE.replace("cores = 1", "cores = 1\n" + body)
    if section == "network":
        return BASE + body + "\n"
    return BASE + f"[{section}]\n{body}\n"


@pytest.mark.parametrize("key, section, lines", [
    ("network.bucket_gbps", "network", ["bucket_gbps = -1"]),
    ("network.bucket_burst_bytes", "network", ["bucket_burst_bytes = 1000"]),
    ("network.bucket_burst_bytes", "network", ["bucket_gbps = 0.2", "bucket_burst_bytes = -5"]),
    ("network.nic_message_us", "network", ["nic_message_us = -0.5"]),
    ("network.nic_message_us", "network", ["nic_message_us = inf"]),
    ("host.eager_threshold_bytes", "host", ["eager_threshold_bytes = -1"]),
    ("host.eager_threshold_bytes", "host", ["eager_threshold_bytes = 1.5"]),
    ("host.probe", "host", ['probe = "sometimes"']),
    ("nodes.oversubscribe", "nodes", ["oversubscribe = 1"]),
    ("noise.scope", "noise", ["median_us = 5"]),
    ("noise.scope", "noise", ['scope = "always"', "median_us = 5"]),
    ("noise.median_us", "noise", ['scope = "message"']),
    ("noise.sigma", "noise", ['scope = "message"', "median_us = 5", "sigma = -1"]),
    ("noise.values_us", "noise", ['scope = "message"', 'distribution = "empirical"']),
    ("noise.values_us", "noise", ['scope = "message"', 'distribution = "empirical"',
                                  "values_us = [1, -2]"]),
    ("noise.values_us", "noise", ['scope = "message"', 'distribution = "empirical"',
                                  'values_us = "3"']),
    ("noise.median_us", "noise", ['scope = "run"', 'distribution = "empirical"',
                                  "values_us = [1]", "median_us = 4"]),
    ("noise.distribution", "noise", ['scope = "run"', 'distribution = "normal"']),
    ("noise.seed", "noise", ['scope = "run"', "median_us = 4", "seed = 3"]),
])
def test_bad_values_name_their_key(key, section, lines):
    with pytest.raises(InputError) as info:
        parse_platform(doc(section, *lines), "m.toml")
    assert key in str(info.value) and "\n" not in str(info.value), str(info.value)


def test_more_ranks_than_cores_needs_oversubscribe():
    with pytest.raises(InputError, match="oversubscribe"):
        hopsim.simulate(parse(), "pingpong", ranks=2, ranks_per_node=2, sizes=[0], iterations=1)
    shared = parse_platform(BASE.replace("cores = 1", "cores = 1\noversubscribe = true")
                            + "[host]\npass_us = 3\n", "m.toml")
    # Two ranks share one core: a 6 us pass. Intra-node path = the network's (10 us).
    # Rank 0's pass ends at 6, ping arrives 16; rank 1's 6 us grid: pass at 18, ends 24,
    # pong arrives 34; rank 0's grid from 6: pass at 36, ends 42. (42 - 6) / 2 = 18.
    r = hopsim.simulate(shared, "pingpong", ranks=2, ranks_per_node=2, sizes=[0], iterations=1)
    assert r.results["rows"][0]["latency_us"] == pytest.approx(18, abs=1e-9)


def test_token_bucket_from_a_platform_file():
    # r = 25 bytes/us, b = 4000, R = 125: 1.25 b = 5000 bytes at line rate (40 us), the
    # other 5000 at r (200 us): 10 + 240 one way; 1000 bytes ride the burst: 10 + 8.
    # (One size per run: the buckets' state carries over from one size to the next.)
    p = parse_platform(with_network("bucket_gbps = 0.2", "bucket_burst_bytes = 4000"), "m.toml")
    got = [hopsim.simulate(p, "pingpong", sizes=[s], iterations=3).results["rows"][0]["latency_us"]
           for s in (1000, 10000)]
    assert got == pytest.approx([18, 250], abs=1e-9)


def test_rendezvous_above_the_eager_threshold():
    # 3L + s/R above the threshold, L + s/R up to it.
    p = parse("[host]", "eager_threshold_bytes = 1000")
    r = hopsim.simulate(p, "pingpong", sizes=[1000, 1001], iterations=2)
    assert [row["latency_us"] for row in r.results["rows"]] == pytest.approx([18, 30 + 8.008], abs=1e-9)


def test_noise_is_seeded_and_absent_noise_changes_nothing():
    noisy = parse("[noise]", 'scope = "message"', "median_us = 20", "sigma = 0.5")
    run = dict(workload="roundtrip", ranks=2, exchanges=50)
    a, b = hopsim.simulate(noisy, seed=3, **run), hopsim.simulate(noisy, seed=3, **run)
    c = hopsim.simulate(noisy, seed=4, **run)
    assert a.results == b.results and a.per_rank == b.per_rank
    assert a.results != c.results
    quiet = hopsim.simulate(parse(), seed=3, **run)
    # Noise rides network messages (a rank's requests to itself stay inside its node).
    assert quiet.results["rtt_us"]["mean"] + 20 < a.results["rtt_us"]["mean"]
    # Round trips spread: the noisy run's percentiles are apart, the quiet run's are not.
    assert quiet.results["rtt_us"]["p99"] == pytest.approx(quiet.results["rtt_us"]["p50"])
    assert a.results["rtt_us"]["p99"] > a.results["rtt_us"]["p50"] + 10


def test_the_summary_names_the_mechanisms_that_are_on():
    assert parse().mechanisms() == []
    p = parse("bucket_gbps = 0.2", "bucket_burst_bytes = 4000", "nic_message_us = 2",
              "[host]", 'probe = "post"')
    assert p.mechanisms() == ["token bucket 0.2 Gbit/s, burst 4000 B", "NIC 2 us per message",
                              "probe at post"]
    assert p.summary().endswith("any-source, token bucket 0.2 Gbit/s, burst 4000 B, "
                                "NIC 2 us per message, probe at post")
