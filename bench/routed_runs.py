"""One routed round-trip run at scale, with its wall time and peak memory.

    .venv/bin/python bench/routed_runs.py FAMILY RANKS [RECEPTION] [ROUND_TRIPS] [TRANSPORT]

One rank per node, 5 us and 10 Gbit/s links, a 1 us polling pass, Ray's network-test
sizes (4000-byte request, 0-byte reply); TRANSPORT is flow (default) or queue
(docs/model.md). bench/speed.py runs the routed rows of docs/performance.md.
"""
import sys
import time

from hopsim import _engine


def main(argv):
    family, ranks = argv[1], int(argv[2])
    reception = argv[3] if len(argv) > 3 else "any-source"
    round_trips = int(argv[4]) if len(argv) > 4 else 16
    transport = argv[5] if len(argv) > 5 else "flow"
    platform = dict(name="scale", nodes=ranks, cores=1, latency_us=5, bandwidth_gbps=10,
                    intra_latency_us=1, intra_bandwidth_gbps=50, pass_us=1.0, reception=reception,
                    transport=transport)
    workload = dict(kind="roundtrip", ranks=ranks, ranks_per_node=1, seed=1, request_bytes=4000,
                    reply_bytes=0, exchanges=round_trips, overlay=family)
    start = time.perf_counter()
    r = _engine.simulate(platform, workload)
    wall = time.perf_counter() - start
    res = r["results"]
    print(f"{family} {ranks} ranks {reception}: wall {wall:.2f} s, {r['messages']} transfers, "
          f"{r['messages'] / wall:.0f} transfers/s, peak {r['peak_rss_kib'] / 1024:.0f} MiB, "
          f"Ray average {res['ray_average_for_all_ranks_us']:.1f} us, hops {res['hops']['mean']:.3f}, "
          f"relays mean {res['relays']['mean']:.2f} sd {res['relays']['sd']:.2f} max {res['relays']['max']}")


if __name__ == "__main__":
    main(sys.argv)
