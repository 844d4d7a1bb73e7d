"""Each calibrated preset reproduces the published figures it was fitted to.

If the engine's model changes, these fail: re-run `python -m hopsim.platforms.derive`
and update the preset and its provenance with the new output.
"""
import pytest

from hopsim import platforms
from hopsim.platforms import derive

FITTED = [
    ("ec2-10gbe", derive.EC2_10_RANKS),
    ("qlogic-ib", derive.qlogic_figure(36, "any-source")),
    ("qlogic-ib", derive.qlogic_figure(36, "round-robin")),
    ("qdr-ib", derive.QDR_1024),
]


@pytest.mark.parametrize("preset, figure", FITTED, ids=lambda x: getattr(x, "label", x))
def test_preset_reproduces_the_figure_it_was_fitted_to(preset, figure):
    simulated = derive.measure(platforms.load(preset), figure)
    # The fit is bisected to far below this; the preset stores 4 decimals.
    assert simulated == pytest.approx(figure.value_us, rel=2e-3)


@pytest.mark.parametrize("preset, keys", [("ec2-10gbe", ["network.latency_us"]),
                                          ("qlogic-ib", ["network.latency_us", "host.pass_us"]),
                                          ("qdr-ib", ["host.pass_us"])])
def test_fitted_values_record_the_derivation(preset, keys):
    provenance = platforms.load(preset).provenance
    for key in keys:
        assert f"python -m hopsim.platforms.derive {preset}" in provenance[key]


def test_bisect_finds_the_crossing_and_refuses_an_unbracketed_target():
    assert derive.bisect(lambda x: x * x, 2.0, 0.0, 2.0, 1e-9) == pytest.approx(2 ** 0.5, abs=1e-8)
    with pytest.raises(SystemExit, match="outside"):
        derive.bisect(lambda x: x, 5.0, 0.0, 1.0, 1e-3)


def test_the_ec2_check_line_is_the_one_the_preset_records():
    # The 20-rank check (2 per instance) printed by `derive ec2-10gbe` and kept in the
    # preset's header: simulated 242.295350 us against 313.960899 published, i.e.
    # 100 x (242.2954 - 313.9609) / 313.9609 = -22.83%.
    import io
    import re

    out = io.StringIO()
    derive._report(platforms.load("ec2-10gbe"), [derive.EC2_20_RANKS], out)
    m = re.fullmatch(r"  latency_checker 20 ranks, 2 per instance: published 313.960899 us, "
                     r"simulated (\S+) us \((\S+)%\)\n", out.getvalue())
    assert m, out.getvalue()
    simulated, pct = float(m[1]), float(m[2])
    assert simulated == pytest.approx(242.295350, abs=1e-4)
    assert pct == -22.83
