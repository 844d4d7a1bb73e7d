"""What the files leave undetermined (calibration/determine.py): held at --base and the
rest refitted, unless that fits the files worse than the joint fit by the BIC margin."""
import hopsim
from hopsim.calibration.determine import determine
from hopsim.calibration.joint import fit_joint
from hopsim.calibration.parsers import parse_file
from hopsim.calibration.structure import BIC_MARGIN, StructureFit
from hopsim.calibration.validate import cases_of
from hopsim.platforms.platform import Platform

TRUTH = Platform(name="t", nodes=2, cores=1, latency_us=20.0, bandwidth_gbps=1.0)
FAR = Platform(name="far", nodes=2, cores=1, latency_us=2000.0, bandwidth_gbps=0.01)


def _cases(tmp_path):
    f = tmp_path / "pp.json"
    f.write_text(hopsim.simulate(TRUTH, "pingpong", ranks=2, iterations=3,
                                 sizes=[0, 64, 1000, 10000, 100000, 1000000]).to_json())
    return cases_of(parse_file(str(f)))[0]


def _noisy_cases(tmp_path):
    # The engine's ping-pong, every other size measured 2.5x slower, the others 2.5x
    # faster: both parameters seen, neither within the SE limit.
    cases = _cases(tmp_path)
    for i, c in enumerate(cases):
        c.measured_us *= 2.5 if i % 2 else 0.4
    return cases


def test_noisy_files_keep_the_fit_when_base_would_fit_them_far_worse(tmp_path):
    cases = _noisy_cases(tmp_path)
    j = fit_joint(TRUTH, cases, ["latency_us", "bandwidth_gbps"], cap=None)
    assert set(j.undetermined) == {"latency_us", "bandwidth_gbps"}
    d = determine(StructureFit(j), TRUTH, FAR, "far", {}, None, 12)
    p = d.fit.platform
    # The fit's values, not --base's 2000 us and 0.01 Gbit/s.
    assert (p.latency_us, p.bandwidth_gbps) == (j.platform.latency_us, j.platform.bandwidth_gbps)
    assert d.fit.median_abs_error_pct() < 200
    lines = [l for l in d.lines if "kept at the fit's value" in l]
    assert len(lines) == 2 and all("held at --base far: " in l for l in lines)
    assert all(float(l.rsplit("worse by BIC ", 1)[1]) >= BIC_MARGIN for l in lines)
    assert "kept at the fit's value" in d.provenance["network.latency_us"]


def test_noisy_files_take_base_when_it_fits_them_about_as_well(tmp_path):
    cases = _noisy_cases(tmp_path)
    j = fit_joint(TRUTH, cases, ["latency_us", "bandwidth_gbps"], cap=None)
    near = TRUTH.replace(name="near", latency_us=j.platform.latency_us * 1.05)
    d = determine(StructureFit(j), TRUTH, near, "near", {}, None, 12)
    assert d.fit.platform.latency_us == near.latency_us
    assert any("not determined by these files" in l and "left at --base near" in l for l in d.lines)


def test_a_decided_mechanisms_flat_rate_is_not_switched_off(tmp_path):
    # A per-node limiter well above the link rate: no case of a one-way ping-pong moves
    # with it (flat). The structure chose it; --base and the closed form have none, and
    # their 0 would switch it off: it stays at the fit's value, said so.
    cases = _cases(tmp_path)
    start = TRUTH.replace(limiter_gbps=50.0)
    j = fit_joint(start, cases, ["latency_us", "limiter_gbps"], cap=None)
    assert "limiter_gbps" in j.undetermined and "latency_us" not in j.undetermined
    d = determine(StructureFit(j), TRUTH, TRUTH, "t", {}, None, 12)
    assert d.fit.platform.limiter_gbps == j.platform.limiter_gbps > 0
    line = next(l for l in d.lines if l.strip().startswith("network.limiter_gbps"))
    assert "would switch off the mechanism decided above" in line
    # Flat: the report says the decided mechanism binds nothing here (rigs E and G's fits
    # printed "a shared capacity" beside a value no case moves with).
    assert "binds no case of these files" in line
