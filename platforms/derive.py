"""Derive the preset numbers no publication gives, by calibration over the engine.

    python -m hopsim.platforms.derive [PRESET ...]

For each preset, the values no publication lists (docs/calibration.md) are solved for
over the engine by hopsim.platforms.solve (scipy's bisect: the figures are step
functions of the value, and bisection lands on the steps the presets record) so that
the simulated workload reproduces a published figure; the other published figures for
the same environment are then simulated as a check, not fitted. The printed values go
into the preset file together with this command and its output (see the presets'
[provenance] tables), and tests/test_presets.py re-simulates the fitted figures.

ec2-10gbe   network.latency_us solved to latency_checker's average of average round
            trips on 10 ranks, 1 per instance (235.200785 us).
qlogic-ib   network.latency_us fitted to Ray's any-source mean round trip on 36 ranks
            (16 us) and host.pass_us to its round-robin one (18 us), alternately until
            both hold (the pass cost is what separates the two policies).
qdr-ib      host.pass_us fitted to Ray's round-robin AverageForAllRanks on 1024 ranks
            with routing off (1081.61 us); the latency is qlogic-ib's fit, reused. The
            published run made 1000 round trips per rank; the fit simulates 100 (a
            1024-rank run of 1000 takes too long to solve over).
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from ..api import simulate
from ..errors import InputError
from .presets import load_preset
from .solve import solve


@dataclass(frozen=True)
class Figure:
    """A published measurement and the simulation that reproduces it."""

    label: str
    value_us: float
    metric: tuple[str, ...]  # path into Result.results
    run: dict                # keyword arguments of hopsim.simulate beyond the platform


# Published figures (docs/calibration.md), "Amazon EC2 cc2.8xlarge, 10 instances in one placement group (2013)".
# latency_checker: 4000-byte request and reply, 10000 exchanges per rank, and every rank
# seeded with srand(time(NULL)): one destination sequence shared by all ranks.
_LC = dict(workload="roundtrip", request_bytes=4000, reply_bytes=4000, exchanges=10000,
           destinations="shared", reception="any-source", seed=1)
EC2_10_RANKS = Figure("latency_checker 10 ranks, 1 per instance", 235.200785,
                      ("lc_average_of_averages_us",), dict(_LC, ranks=10, ranks_per_node=1))
EC2_20_RANKS = Figure("latency_checker 20 ranks, 2 per instance", 313.960899,
                      ("lc_average_of_averages_us",), dict(_LC, ranks=20, ranks_per_node=2))

# Published figures (docs/calibration.md), "InfiniBand and QLogic clusters running Ray's network test (2011-2012)".
# RayPlatform 1.0.x network test: 4000-byte request, empty reply, 1000 round trips per
# rank, no routing. Node size is not published: 12 ranks per node places both published
# rank counts (36, 120) on whole nodes.
_RAY = dict(workload="roundtrip", request_bytes=4000, reply_bytes=0, exchanges=1000,
            destinations="independent", seed=1)
QLOGIC = {
    (36, "any-source"): 16.0, (120, "any-source"): 19.0,
    (36, "round-robin"): 18.0, (120, "round-robin"): 23.0,
}


# Published figures (docs/calibration.md): a QDR InfiniBand cluster, 64 nodes x 16 cores = 1024 ranks, round-robin
# reception, routing off (complete graph): AverageForAllRanks 1081.61 us. The run made
# 1000 round trips per rank; 100 here keeps a fit over 1024 ranks to about a minute.
QDR_EXCHANGES = 100
QDR_1024 = Figure("Ray network test 1024 ranks, 16 per node, round-robin, complete graph "
                  f"({QDR_EXCHANGES} round trips per rank)", 1081.61,
                  ("ray_average_for_all_ranks_us",),
                  dict(_RAY, ranks=1024, ranks_per_node=16, reception="round-robin",
                       exchanges=QDR_EXCHANGES, overlay="complete"))


def qlogic_figure(ranks: int, reception: str) -> Figure:
    return Figure(f"Ray network test {ranks} ranks, {reception}", QLOGIC[(ranks, reception)],
                  ("rtt_us", "mean"),
                  dict(_RAY, ranks=ranks, ranks_per_node=12, reception=reception))


def measure(platform, figure: Figure) -> float:
    value = simulate(platform, **figure.run).results
    for key in figure.metric:
        value = value[key]
    return value


def bisect(f, target: float, lo: float, hi: float, tol: float) -> float:
    """x in [lo, hi] with f(x) = target for a monotone f, to within tol in x: scipy's
    bisection (hopsim.platforms.solve). The figures are step functions of a platform
    value (round trips in whole microseconds), so the root finder decides which step a
    fit lands on: bisection is what the presets' values come from."""
    try:
        return solve(f, target, lo, hi, tol, "derive", method="bisect")
    except InputError as e:
        raise SystemExit(f"derive: {e}") from None


def fit(platform, field: str, figure: Figure, lo: float, hi: float, tol: float) -> float:
    return bisect(lambda x: measure(platform.replace(**{field: x}), figure),
                  figure.value_us, lo, hi, tol)


def _stored(x: float) -> float:
    """The value as the preset stores it: 6 significant digits, far finer than the fit."""
    return float(f"{x:.6g}")


def _report(platform, figures, out):
    for fig in figures:
        sim = measure(platform, fig)
        out.write(f"  {fig.label}: published {fig.value_us} us, simulated {sim:.6f} us "
                  f"({100 * (sim - fig.value_us) / fig.value_us:+.2f}%)\n")


def derive_ec2(out) -> None:
    base = load_preset("ec2-10gbe")
    latency = _stored(fit(base, "latency_us", EC2_10_RANKS, 0.0, 400.0, 1e-5))
    platform = base.replace(latency_us=latency)
    out.write(f"ec2-10gbe: network.latency_us = {latency}\n  fitted:\n")
    _report(platform, [EC2_10_RANKS], out)
    out.write("  checks (not fitted):\n")
    _report(platform, [EC2_20_RANKS], out)
    pingpong = simulate(platform, "pingpong", ranks=2, sizes=[0], iterations=100).results
    out.write(f"  osu_latency 0 bytes: published 70 to 90 us elsewhere on EC2, simulated "
              f"{pingpong['rows'][0]['latency_us']:.2f} us\n")


def derive_qlogic(out) -> None:
    platform = load_preset("qlogic-ib")
    any_source, round_robin = qlogic_figure(36, "any-source"), qlogic_figure(36, "round-robin")
    # The latency sets both policies' round trips; the pass cost mostly the round-robin
    # one. Alternate the two one-dimensional fits until neither moves.
    platform = platform.replace(pass_us=0.0)
    for step in range(1, 11):
        platform = platform.replace(
            latency_us=fit(platform, "latency_us", any_source, 0.0, 8.0, 1e-5))
        platform = platform.replace(
            pass_us=fit(platform, "pass_us", round_robin, 0.0, 1.0, 1e-6))
        misses = [measure(platform, f) - f.value_us for f in (any_source, round_robin)]
        out.write(f"  round {step}: latency_us {platform.latency_us:.6f}, pass_us "
                  f"{platform.pass_us:.6f}, misses {misses[0]:+.4f} {misses[1]:+.4f} us\n")
        # Round trips are whole microseconds (as the tools time them), so the means move
        # in steps of a few hundredths of a microsecond: closer than 0.05 us (the figures
        # are published to the microsecond) is as good as a fit gets.
        if max(map(abs, misses)) < 0.05:
            break
    else:
        raise SystemExit("derive: qlogic-ib: the alternating fit did not converge")
    platform = platform.replace(latency_us=_stored(platform.latency_us),
                                pass_us=_stored(platform.pass_us))
    out.write(f"qlogic-ib: network.latency_us = {platform.latency_us}, "
              f"host.pass_us = {platform.pass_us}\n  fitted:\n")
    _report(platform, [any_source, round_robin], out)
    out.write("  checks (not fitted):\n")
    _report(platform, [qlogic_figure(120, "any-source"), qlogic_figure(120, "round-robin")], out)


def derive_qdr(out) -> None:
    base = load_preset("qdr-ib").replace(latency_us=load_preset("qlogic-ib").latency_us)
    pass_us = _stored(fit(base, "pass_us", QDR_1024, 0.0, 4.0, 1e-5))
    platform = base.replace(pass_us=pass_us)
    out.write(f"qdr-ib: host.pass_us = {pass_us} (network.latency_us = {platform.latency_us}, "
              f"qlogic-ib's)\n  fitted:\n")
    _report(platform, [QDR_1024], out)
    debruijn = measure(platform, Figure("", 0.0, QDR_1024.metric,
                                        dict(QDR_1024.run, overlay="debruijn", degree=2)))
    out.write(f"  checks (not fitted):\n  same run with de Bruijn routing (degree 2): "
              f"published 'markedly faster', simulated {debruijn:.6f} us\n")


DERIVATIONS = {"ec2-10gbe": derive_ec2, "qlogic-ib": derive_qlogic, "qdr-ib": derive_qdr}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hopsim.platforms.derive",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("presets", nargs="*", metavar="PRESET",
                        help=f"one of {', '.join(DERIVATIONS)} (default: all)")
    args = parser.parse_args(argv)
    for name in args.presets:
        if name not in DERIVATIONS:
            parser.error(f"no derivation for {name!r} (known: {', '.join(DERIVATIONS)})")
    for name in args.presets or DERIVATIONS:
        DERIVATIONS[name](sys.stdout)
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
