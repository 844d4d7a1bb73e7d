"""Shared capacity in the joint fit (calibration/structure.py): a per-node limiter
(network.limiter_gbps) or a backbone (network.backbone_gbps), decided from exchanges that
load both directions at once, and osu_bw's streaming rate as a start for a token bucket
that the ping-pong's pauses hide.

The files are hopsim JSON written by `hopsim.simulate` on known platforms: the structure
the fit picks must flip with the mechanism the engine ran, and stay undecided where the
runs cannot tell (on 2 nodes every byte crosses both nodes' limiters and the backbone).
"""
import pytest

import hopsim
from hopsim.calibration.calibrate import calibrate_files
from hopsim.calibration.parsers import parse_file
from hopsim.calibration.structure import BACKBONE, LIMITER, _bucket_starts, decide
from hopsim.calibration.validate import cases_of
from hopsim.platforms.platform import Platform

PLAIN = Platform(name="plain", nodes=4, cores=1, latency_us=20.0, bandwidth_gbps=1.0)
# In + out of a node at 1.4 Gbit/s where each direction alone runs at 1: an exchange of
# 2 nodes takes 4s/D (D = 175 bytes/us) where the NICs alone give 2s/R (R = 125).
LIMITED = PLAIN.replace(name="limited", limiter_gbps=1.4)
BACKBONED = PLAIN.replace(name="backboned", backbone_gbps=1.4)
PP_SIZES = [0, 1000, 16000, 100000, 400000, 1000000]
EX_SIZES = [0, 1000, 100000, 1000000]


def _write(d, name, platform, workload, **params):
    path = d / name
    path.write_text(hopsim.simulate(platform, workload, **params).to_json() + "\n")
    return str(path)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = {}
    for truth in (LIMITED, BACKBONED):
        d = tmp_path_factory.mktemp(truth.name)
        out[truth.name] = {
            "pp": _write(d, "pp.json", truth, "pingpong", ranks=2, sizes=PP_SIZES, iterations=3),
            "ex2": _write(d, "ex-2x1.json", truth, "exchange", ranks=2, sizes=EX_SIZES, repetitions=3),
            "ex4": _write(d, "ex-4x1.json", truth, "exchange", ranks=4, sizes=EX_SIZES, repetitions=3),
        }
    return out


def _capacity(paths):
    cases = cases_of([m for f in paths for m in parse_file(f)])[0]
    sf = decide(PLAIN, PLAIN, cases, cap=None)
    return next(d for d in sf.decisions if d.mechanism == "shared capacity"), sf


@pytest.mark.parametrize("name", ["limited", "backboned"])
def test_two_nodes_decide_a_capacity_but_not_its_form(runs, name):
    # Both truths give the same 2-node runs: the capacity beats none, the form is undecided
    # (printed with why), and the per-node form is written at the true rate.
    d, sf = _capacity([runs[name]["pp"], runs[name]["ex2"]])
    assert d.form_undecided and not d.undecided, d.line()
    assert d.chosen == LIMITER
    assert "runs on 2 nodes" in d.line() and "--holdout" in d.line()
    bic = {label: j.bic for label, j in d.fits}
    assert bic["none"] - bic[LIMITER] >= 6
    assert abs(bic[LIMITER] - bic[BACKBONE]) < 6
    assert sf.fit.platform.limiter_gbps == pytest.approx(1.4, rel=0.02)
    assert sf.fit.platform.backbone_gbps == 0


@pytest.mark.parametrize("name, form, field", [("limited", LIMITER, "limiter_gbps"),
                                               ("backboned", BACKBONE, "backbone_gbps")])
def test_four_nodes_decide_the_form_the_engine_ran(runs, name, form, field):
    # On 4 nodes a node's limiter carries its own 4 transfers, the backbone all 8: the
    # exchange 4x1 takes L + 4s/D with the limiter, L + 8s/B with the backbone.
    d, sf = _capacity([runs[name]["pp"], runs[name]["ex2"], runs[name]["ex4"]])
    assert d.chosen == form and not d.undecided and not d.form_undecided, d.line()
    assert getattr(sf.fit.platform, field) == pytest.approx(1.4, rel=0.02)


def test_no_capacity_is_offered_without_a_run_that_loads_both_ways(runs):
    cases = cases_of(parse_file(runs["limited"]["pp"]))[0]
    sf = decide(PLAIN, PLAIN, cases, cap=None)
    assert all(d.mechanism != "shared capacity" for d in sf.decisions)


def test_holdout_on_four_nodes_decides_the_form_two_nodes_left_open(runs):
    r = calibrate_files([runs["backboned"]["pp"], runs["backboned"]["ex2"]], nodes=4, joint=True,
                        cap=None, holdout=[runs["backboned"]["ex4"]])
    p = r.fit.platform
    assert p.backbone_gbps == pytest.approx(1.4, rel=0.02) and p.limiter_gbps == 0
    line = next(l for l in r.text.splitlines() if "form by held-out error" in l)
    assert line.rstrip().endswith(f"backbone {p.backbone_gbps} Gbit/s")
    assert "form by held-out error" in p.provenance["network.backbone_gbps"]


def test_holdout_can_move_the_form_off_the_backbone_base_has(runs):
    # --base has a backbone (2 Gbit/s, off the true 1.4 so that the fit moves it): the
    # 2-node files leave the form undecided, so the backbone is written as --base has it
    # and the per-node limiter is the other form. The limited truth's 4-node exchange,
    # held out, prefers the limiter: it is written at the true rate, and the backbone is
    # off (0, not a value the engine would read as a capacity).
    base = PLAIN.replace(name="bb", backbone_gbps=2.0)
    r = calibrate_files([runs["limited"]["pp"], runs["limited"]["ex2"]], base=base, nodes=4,
                        joint=True, cap=None, holdout=[runs["limited"]["ex4"]])
    p = r.fit.platform
    assert p.limiter_gbps == pytest.approx(1.4, rel=0.02) and p.backbone_gbps == 0
    line = next(l for l in r.text.splitlines() if "form by held-out error" in l)
    assert line.lstrip().startswith("shared capacity's form by held-out error: backbone ")
    assert line.rstrip().endswith(f"per-node limiter {p.limiter_gbps} Gbit/s")


def test_the_reported_simulation_count_is_every_joint_fits_own(runs, monkeypatch):
    # --base's backbone at the true 1.4 Gbit/s leaves the capacity undetermined: it is
    # held and the rest refitted (calibration/determine.py). The report's "N simulations
    # of every case" must be the sum of what every joint fit ran, each counted as it
    # returns (the structure's fits and the refit alike), none twice.
    from hopsim.calibration import determine, joint, structure

    ran = []

    def counted(*args, **kwargs):
        j = joint.fit_joint(*args, **kwargs)
        ran.append(j.evaluations)
        return j

    monkeypatch.setattr(structure, "fit_joint", counted)
    monkeypatch.setattr(determine, "fit_joint", counted)
    # A scan of one value (the first guess) adds no start: the fit stays where it leaves
    # the capacity undetermined; the scan's own simulations still count.
    monkeypatch.setattr(structure, "SCAN_FACTORS", (1.0,))
    r = calibrate_files([runs["limited"]["pp"], runs["limited"]["ex2"]], base=BACKBONED, nodes=4,
                        joint=True, cap=None)
    assert "not determined by these files" in r.text
    line = next(l for l in r.text.splitlines() if "simulations of every case" in l)
    assert f", {sum(ran)} simulations of every case;" in line, (line, ran)


def test_osu_bw_streaming_rate_gives_the_bucket_the_ping_pong_hides(tmp_path):
    # A 2 Gbit/s line under a 0.4 Gbit/s bucket of 4 MB: the ping-pong (1.4 MB in all each
    # way) never drains it and runs at 2 Gbit/s throughout; osu_bw's 64-message windows
    # (8 MiB each) drain it and stream at 0.4. The closed form sees no bucket; the joint
    # fit, replaying osu_bw, finds it; its second start is osu_bw's own rate.
    truth = PLAIN.replace(name="bucket", bandwidth_gbps=2.0, bucket_gbps=0.4,
                          bucket_burst_bytes=4e6)
    pp = _write(tmp_path, "pp.json", truth, "pingpong", ranks=2,
                sizes=[0, 16000, 400000, 1000000], iterations=1)
    bw = _write(tmp_path, "bw.json", truth, "bandwidth", ranks=2, sizes=[131072], iterations=10)
    cases = cases_of(parse_file(pp) + parse_file(bw))[0]
    closed = PLAIN.replace(bandwidth_gbps=2.0)
    (label, start), = _bucket_starts(closed, cases)
    # 10 windows of 64 x 131072 B = 83.886 MB; the first 4 MB pass at once, the rest at
    # 0.4 Gbit/s: 0.4 x 83.886 / 79.886 = 0.42003 Gbit/s on average.
    assert start.bucket_gbps == pytest.approx(0.4 * 83.886080 / 79.886080, rel=0.002)
    assert start.bucket_burst_bytes == 1000000 and "osu_bw" in label
    sf = decide(closed, closed, cases, cap=None)
    d = next(d for d in sf.decisions if d.mechanism == "token bucket")
    assert d.chosen == "token bucket" and not d.undecided, d.line()
    assert sf.fit.platform.bucket_gbps == pytest.approx(0.4, rel=0.05)


def test_the_capacity_scan_starts_near_the_true_rate_and_binds_nothing_where_there_is_none(runs, tmp_path):
    # The scan's start is "none"'s platform with the grid value at the least cost (one
    # simulation each, no fit): next to the true 1.4 Gbit/s on the limited truth's
    # exchange (the grid's values are a factor sqrt(2) apart); on files without a
    # capacity, a value that binds nothing, which simulates them exactly as "none" does.
    from hopsim.calibration.joint import fit_joint
    from hopsim.calibration.structure import SCAN_FACTORS, Alternative, _scanned

    def scanned(paths, truth):
        cases = cases_of([m for f in paths for m in parse_file(f)])[0]
        grid = tuple(0.5 * f for f in SCAN_FACTORS)    # 0.25 .. 8 Gbit/s
        alt = Alternative(LIMITER, truth.replace(limiter_gbps=0.5), ["limiter_gbps"],
                          nests="none", scan=("limiter_gbps", grid))
        start, how, n = _scanned(alt, truth, cases, None)
        assert n == len(grid) and f"the best of {len(grid)} scanned" in how
        return start, cases

    start, _ = scanned([runs["limited"]["pp"], runs["limited"]["ex2"]], PLAIN)
    assert 1.4 / 2 ** 0.25 <= start.limiter_gbps <= 1.4 * 2 ** 0.25
    plain = [_write(tmp_path, "pp.json", PLAIN, "pingpong", ranks=2, sizes=PP_SIZES, iterations=3),
             _write(tmp_path, "ex.json", PLAIN, "exchange", ranks=2, sizes=EX_SIZES, repetitions=3)]
    start, cases = scanned(plain, PLAIN)
    assert fit_joint(start, cases, [], cap=None).cost == pytest.approx(
        fit_joint(PLAIN, cases, [], cap=None).cost, abs=1e-12)


def _bucket_decision(tmp_path, monkeypatch, factors):
    # A 1 Gbit/s line under a 0.3 Gbit/s bucket of 100 kB, fitted from a start at a
    # quarter of that rate with one evaluation per fit: the bucket's own fit stops far
    # above no bucket's cost, so only its second start can decide it.
    from hopsim.calibration import structure

    monkeypatch.setattr(structure, "SCAN_FACTORS", factors)
    truth = PLAIN.replace(name="bucket", bucket_gbps=0.3, bucket_burst_bytes=1e5)
    pp = _write(tmp_path, "pp.json", truth, "pingpong", ranks=2, sizes=PP_SIZES, iterations=3)
    ex = _write(tmp_path, "ex.json", truth, "exchange", ranks=2, sizes=EX_SIZES, repetitions=3)
    cases = cases_of(parse_file(pp) + parse_file(ex))[0]
    start = truth.replace(bucket_gbps=0.075)
    sf = decide(start, PLAIN, cases, cap=None, max_nfev=1)
    return next(d for d in sf.decisions if d.mechanism == "token bucket"), sf


def test_a_bucket_fit_stopped_above_no_bucket_starts_again_from_a_scan(tmp_path, monkeypatch):
    from hopsim.calibration.structure import SCAN_FACTORS

    d, sf = _bucket_decision(tmp_path, monkeypatch, SCAN_FACTORS)
    assert d.chosen == "token bucket" and not d.undecided, d.line()
    # 0.075 x 2^(4/2) = 0.3: the scan's start is the truth, the refit stays there.
    assert "bucket_gbps = 0.3, the best of 11 scanned on no bucket's fit" in d.line()
    assert "first fit had stopped above it" in d.line()
    assert sf.fit.platform.bucket_gbps == pytest.approx(0.3, rel=1e-3)


def test_without_the_scan_the_stopped_bucket_fit_stays_undecided(tmp_path, monkeypatch):
    # The same with a scan of its first guess alone: the second start is no better, and
    # the verdict says why it cannot be trusted (the control of the test above).
    d, _ = _bucket_decision(tmp_path, monkeypatch, (1.0,))
    assert d.undecided and "did not reach its optimum" in d.line(), d.line()


# A limiter that serves rendezvous messages only (network.limiter_scope): the 2-node
# exchange's eager sizes (16 and 32 kB) run at the NICs' 2s/R under it and at 4s/D under
# a limiter on every byte, 43% slower; its rendezvous sizes take 4s/D under both.
EAGER = 65480
SCOPE_EX_SIZES = [0, 1000, 16000, 32000, 100000, 400000, 1000000]


@pytest.mark.parametrize("scope, expected", [("rendezvous", "rendezvous messages only"),
                                             ("all", "every byte")])
def test_the_limiters_scope_is_decided_by_the_exchanges_eager_sizes(tmp_path, scope, expected):
    truth = PLAIN.replace(name="scoped", limiter_gbps=1.4, limiter_scope=scope,
                          eager_threshold_bytes=EAGER)
    paths = [_write(tmp_path, "pp.json", truth, "pingpong", ranks=2, sizes=PP_SIZES, iterations=3),
             _write(tmp_path, "ex.json", truth, "exchange", ranks=2, sizes=SCOPE_EX_SIZES,
                    repetitions=3)]
    cases = cases_of([m for f in paths for m in parse_file(f)])[0]
    # The threshold comes with --base: under a limiter on rendezvous messages only, a
    # rendezvous without the limiter explains the large sizes no better than none (the
    # eager/rendezvous decision, before the scope's, stays undecided, left as --base's).
    base = PLAIN.replace(eager_threshold_bytes=EAGER)
    sf = decide(base, base, cases, cap=None, eager_limit=EAGER)
    d = next(d for d in sf.decisions if d.mechanism == "limiter scope")
    assert not d.undecided, d.line()
    assert d.chosen == expected, d.line()
    assert sf.fit.platform.limiter_scope == scope
    assert sf.fit.platform.limiter_gbps == pytest.approx(1.4, rel=0.05)


def test_an_undecided_form_is_written_beside_the_fit_and_held_out_files_decide_it(runs, tmp_path):
    # The limited truth on 2 nodes: the limiter is written (the per-node form), the backbone
    # is the runner-up at the rate its own fit gave, in its own platform file; the same fit
    # with the 4-node exchange held out decides the form, and the runner-up's file, written
    # by the first run, goes: it would read as this fit's.
    import subprocess
    import sys

    from hopsim import platforms

    pp, ex2, ex4 = runs["limited"]["pp"], runs["limited"]["ex2"], runs["limited"]["ex4"]
    out = tmp_path / "fit.toml"
    alt = tmp_path / "fit.undecided-shared-capacity-form.toml"

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "hopsim", "calibrate", pp, ex2, "--nodes", "4",
                               "--out", str(out), *args], capture_output=True, text=True, cwd=tmp_path)

    r = cli()
    assert r.returncode == 0, r.stderr
    assert f", {alt}" in r.stdout.splitlines()[-1]
    assert "shared-capacity-form: shared capacity's form as backbone instead of per-node limiter" in r.stdout
    fitted, other = platforms.load_file(out), platforms.load_file(alt)
    assert fitted.limiter_gbps == pytest.approx(1.4, rel=0.02) and fitted.backbone_gbps == 0
    assert other.backbone_gbps == pytest.approx(1.4, rel=0.02) and other.limiter_gbps == 0
    assert "undecided alternative" in other.provenance["network.backbone_gbps"]
    # Everything else is the fit's.
    assert other.replace(limiter_gbps=fitted.limiter_gbps, backbone_gbps=0.0,
                         provenance=fitted.provenance, name=fitted.name) == fitted.replace(name=fitted.name)
    r = cli("--holdout", ex4)
    assert r.returncode == 0, r.stderr
    assert "shared capacity's form by held-out error: per-node limiter" in r.stdout
    assert not alt.exists() and "undecided by these files" not in r.stdout
    assert not list(tmp_path.glob("fit.undecided-*"))


class _Fit:
    """A decision's fit as calibrate.undecided reads it: its platform and BIC."""

    def __init__(self, platform, bic):
        self.platform, self.bic, self.cases = platform, bic, [0]

    def median_abs_error_pct(self):
        return 1.0


def test_the_runner_up_of_an_undecided_mechanism_is_the_lowest_bic_of_the_others():
    # A decision left as --base has it ("every byte"), two others: the runner-up is the
    # one with the lower BIC, and only the mechanism's own fields change.
    from hopsim.calibration.calibrate import undecided
    from hopsim.calibration.structure import Decision, StructureFit

    fitted = LIMITED.replace(eager_threshold_bytes=65480, gap_us=2.0)
    fits = [("every byte", _Fit(fitted, -10.0)),
            ("rendezvous messages only", _Fit(fitted.replace(limiter_scope="rendezvous",
                                                            limiter_gbps=0.9, gap_us=7.0), -12.0)),
            ("none", _Fit(fitted.replace(limiter_gbps=0.0, gap_us=7.0), -9.0))]
    open_ = Decision("limiter scope", fits, "every byte", "every byte", True, bics={}, compared=3)
    decided = Decision("gap between sends", [("gap", _Fit(fitted, -50.0)),
                                             ("no gap", _Fit(fitted.replace(gap_us=0.0), -10.0))],
                       "gap", "no gap", False, compared=3)
    # Undecided where no case moves: the runner-up's values are its start, not the data's.
    unmoved = Decision("pacing", [("per-link", _Fit(fitted, -5.0)),
                                  ("per-connection", _Fit(fitted.replace(pacing_gbps=1.0), -6.0))],
                       "per-link", "per-link", True, compared=0)
    [u] = undecided(fitted, StructureFit(None, [unmoved, decided, open_]))
    assert (u.mechanism, u.chosen, u.other) == ("limiter scope", "every byte", "rendezvous messages only")
    assert dict(u.changes) == {"limiter_scope": "rendezvous", "limiter_gbps": 0.9}
    q = u.on(fitted)
    assert q.limiter_scope == "rendezvous" and q.gap_us == 2.0
    assert u.slug == "limiter-scope"


def test_held_out_files_take_each_open_decision_in_turn(monkeypatch):
    # Three open decisions, the held-out error lower with each runner-up: eager only
    # wins first, which leaves a rendezvous-only limiter nothing to serve (refused by the
    # platform): that one is not weighed, and the gap's runner-up is weighed on the
    # platform the first decision left.
    from hopsim.calibration import calibrate, holdout

    class Table:
        def __init__(self, p):
            self.p = p

        def median_over_files(self):
            return 10.0 - (self.p.eager_threshold_bytes is None) * 4 - (self.p.gap_us == 0) * 3

    monkeypatch.setattr(holdout, "predict", lambda p, *a, **k: Table(p))
    p = LIMITED.replace(eager_threshold_bytes=65480, gap_us=2.0)
    open_ = [calibrate.Undecided("eager/rendezvous", "rendezvous above 65480 B", "eager only",
                                 (("eager_threshold_bytes", None),), "v1"),
             calibrate.Undecided("limiter scope", "every byte", "rendezvous messages only",
                                 (("limiter_scope", "rendezvous"),), "v2"),
             calibrate.Undecided("gap between sends", "per-message gap", "no gap",
                                 (("gap_us", 0.0),), "v3")]
    q, lines = calibrate._by_holdout(p, open_, ["held.txt"], None, None)
    assert q.eager_threshold_bytes is None and q.gap_us == 0.0 and q.limiter_scope == "all"
    assert lines[0].endswith("rendezvous above 65480 B 10.0% vs eager only 6.0% (median |error| "
                             "over the held-out files): eager only")
    assert "rendezvous messages only not weighed" in lines[1]
    assert lines[2].endswith("per-message gap 6.0% vs no gap 3.0% (median |error| over the "
                             "held-out files): no gap")
    assert "eager/rendezvous by held-out error" in q.provenance["host.eager_threshold_bytes"]


def test_a_folder_where_any_runner_up_could_go_is_refused_before_the_fit(runs, tmp_path, monkeypatch, capsys):
    # Which runner-ups a fit writes is known only after it; a folder in the way of any of
    # them is one line and exit 2 before a file is parsed, not minutes into the fit.
    from hopsim import cli
    from hopsim.calibration import calibrate
    from hopsim.calibration.cli import alternative_path
    from hopsim.calibration.structure import MECHANISM_FIELDS

    slugs = calibrate.possible_slugs()
    assert set(slugs) == {calibrate.Undecided(m, "", "", (), "").slug
                          for m in (*MECHANISM_FIELDS, calibrate.CAPACITY_FORM)}
    assert {"limiter-scope", "shared-capacity-form", "gap-between-sends", "pacing"} <= set(slugs)
    fitted = []
    monkeypatch.setattr(calibrate, "calibrate_files", lambda *a, **kw: fitted.append(a))
    out = tmp_path / "fit.toml"
    for slug in slugs:
        folder = alternative_path(out, slug)
        folder.mkdir()
        assert cli.main(["calibrate", runs["limited"]["pp"], "--nodes", "4", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(folder) in err and "a folder" in err, err
        folder.rmdir()
    assert fitted == [] and list(tmp_path.iterdir()) == []


def test_a_base_without_a_limiter_has_no_scope_to_keep(runs):
    # The scope is a field of the limiter: --base without one (its limiter_scope is only
    # the default) gives no alternative to leave it at; a base with one gives its own.
    from hopsim.calibration.structure import EVERY_BYTE, RENDEZVOUS_ONLY, _limiter_scope

    cases = cases_of([m for f in runs["limited"].values() for m in parse_file(f)])[0]
    fitted = LIMITED.replace(eager_threshold_bytes=EAGER)
    labels = lambda base: _limiter_scope(fitted, base, cases)[1]
    assert labels(PLAIN) == ""
    assert labels(LIMITED) == EVERY_BYTE
    assert labels(LIMITED.replace(limiter_scope="rendezvous", eager_threshold_bytes=EAGER)) == RENDEZVOUS_ONLY


def test_an_undecided_scope_without_one_in_base_writes_the_lower_bic_and_says_so():
    from hopsim.calibration.structure import Decision

    class Fit:
        cases, bic = [0], 0.0

        def median_abs_error_pct(self):
            return 1.0

    fits = [("every byte", Fit()), ("rendezvous messages only", Fit())]
    bics = {"every byte": -260.4, "rendezvous messages only": -264.0}
    line = Decision("limiter scope", fits, "rendezvous messages only", "", True, bics=bics,
                    compared=73).line()
    assert line.endswith("undecided (BIC difference under 6); --base has none of these to keep; "
                         "written: rendezvous messages only, the lowest BIC"), line
    kept = Decision("limiter scope", fits, "every byte", "every byte", True, bics=bics,
                    compared=73).line()
    assert kept.endswith("left as --base has it: every byte"), kept


# Open MPI's rendezvous race and a bucket slowed below the ping-pong's rate can take a
# 2-node exchange's loss before a capacity on rendezvous messages is weighed (rig S): the
# limiter scope's alternative without the race gives them back.
RACE_TRUTH = PLAIN.replace(name="no-race", bandwidth_gbps=10.0, bucket_gbps=1.0,
                           bucket_burst_bytes=32768.0, eager_threshold_bytes=EAGER,
                           limiter_gbps=1.5, limiter_scope="rendezvous")


@pytest.fixture(scope="module")
def race_cases(tmp_path_factory):
    d = tmp_path_factory.mktemp("race")
    paths = [_write(d, "pp.json", RACE_TRUTH, "pingpong", ranks=2,
                    sizes=[0, 1000, 16000, 65536, 262144, 1048576], iterations=3),
             _write(d, "ex.json", RACE_TRUTH, "exchange", ranks=2,
                    sizes=[0, 1000, 16000, 32000, 65536, 131072, 262144, 1048576], repetitions=3)]
    return cases_of([m for f in paths for m in parse_file(f)])[0]


def _scope_only(monkeypatch, cases, without_race=True):
    from hopsim.calibration import structure

    monkeypatch.setattr(structure, "MECHANISMS", (("limiter scope", structure._limiter_scope),))
    if not without_race:
        monkeypatch.setattr(structure, "_without_race", lambda *a: [])
    # As the eager/rendezvous decision leaves it where a race took the loss: no limiter.
    start = RACE_TRUTH.replace(limiter_gbps=0.0, limiter_scope="all", rate_jitter=0.005)
    sf = structure.decide(start, PLAIN, cases, cap=None)
    return sf.decisions[0], sf.fit.platform


def test_the_exchanges_loss_is_given_back_from_the_race_to_a_capacity(monkeypatch, race_cases):
    from hopsim.calibration.structure import NO_RACE, decision_keys

    d, p = _scope_only(monkeypatch, race_cases)
    assert d.chosen == NO_RACE and not d.undecided, d.line()
    assert p.rate_jitter == 0.0 and p.limiter_scope == "rendezvous"
    assert p.limiter_gbps == pytest.approx(1.5, rel=0.03)
    assert "network.rate_jitter" in decision_keys(d) and "network.bucket_gbps" in decision_keys(d)
    # The control: without it the race stays and the limiter beside it is off the truth.
    d, p = _scope_only(monkeypatch, race_cases, without_race=False)
    assert d.chosen != NO_RACE and p.rate_jitter == 0.005, d.line()
    assert "network.rate_jitter" not in decision_keys(d)


def test_the_alternative_without_the_race_puts_the_bucket_back_at_the_closed_forms_rate(race_cases):
    from hopsim.calibration.structure import NO_RACE, _limiter_scope

    fitted = RACE_TRUTH.replace(limiter_gbps=0.0, limiter_scope="all", rate_jitter=0.005,
                                bucket_gbps=0.9)
    alts, _ = _limiter_scope(fitted, PLAIN, race_cases, RACE_TRUTH)
    alt = next(a for a in alts if a.label == NO_RACE)
    assert (alt.platform.bucket_gbps, alt.platform.rate_jitter) == (1.0, 0.0)
    assert alt.platform.limiter_scope == "rendezvous" and alt.free == ["limiter_gbps"]
    # It gives back the race's choice (counted as a parameter where it was made) and holds
    # no other alternative as a limit.
    assert alt.chosen == -1 and alt.nests is None and alt.scan_from == "no limiter"
    assert NO_RACE not in [a.label for a in _limiter_scope(fitted.replace(rate_jitter=0.0), PLAIN,
                                                            race_cases, RACE_TRUTH)[0]]


def test_where_none_is_rejected_the_least_change_keeps_the_race():
    # With no limiter rejected and both limiters open, the one that keeps the race and the
    # bucket changes two fields from none, the one without it four: the former is written
    # though its BIC is higher (the fields a runner-up sets count, not only the scope's).
    from hopsim.calibration.structure import (NO_LIMITER, NO_RACE, RENDEZVOUS_ONLY, Alternative,
                                              _least_change)

    none = RACE_TRUTH.replace(limiter_gbps=0.0, limiter_scope="all", rate_jitter=0.005,
                              bucket_gbps=0.9)
    alts = [Alternative(NO_LIMITER, none, []),
            Alternative(RENDEZVOUS_ONLY, none.replace(limiter_gbps=1.6, limiter_scope="rendezvous"), []),
            Alternative(NO_RACE, none.replace(limiter_gbps=1.5, limiter_scope="rendezvous",
                                              rate_jitter=0.0, bucket_gbps=1.0), [])]
    bic = {NO_LIMITER: -100.0, RENDEZVOUS_ONLY: -110.0, NO_RACE: -113.0}
    assert _least_change("limiter scope", alts, bic, NO_LIMITER,
                         [RENDEZVOUS_ONLY, NO_RACE]) == [RENDEZVOUS_ONLY, NO_RACE]


def _headers_fit(tmp_path, monkeypatch, low):
    # A 0.3 Gbit/s bucket of 5 kB that small ping-pong messages drain, charging 4 B a
    # message beyond the payload; the header step alone, from the physical headers'
    # 132 B with one evaluation per fit: only a start near the charge's low end reaches it.
    from hopsim.calibration import structure

    monkeypatch.setattr(structure, "LOW_START_HEADER_BYTES", low)
    monkeypatch.setattr(structure, "MECHANISMS", [(n, m) for n, m in structure.MECHANISMS
                                                  if m is structure._headers])
    truth = PLAIN.replace(name="headers", bucket_gbps=0.3, bucket_burst_bytes=5000.0,
                          bucket_message_bytes=4.0)
    pp = _write(tmp_path, "pp.json", truth, "pingpong", ranks=2,
                sizes=[0, 64, 256, 1000, 4000, 16000, 64000], iterations=50)
    cases = cases_of(parse_file(pp))[0]
    sf = decide(truth.replace(bucket_message_bytes=132.0), PLAIN, cases, cap=None, max_nfev=1)
    d = next(d for d in sf.decisions if d.mechanism == "bucket headers")
    return d, dict(d.fits)["headers"].platform.bucket_message_bytes


def test_the_header_charge_is_fitted_from_both_ends(tmp_path, monkeypatch):
    # Rig B's fit from 132 B stopped at the charge's bound with a seventh of its bucket's
    # burst; its fit from the charge's low end had been 350 BIC better.
    d, charge = _headers_fit(tmp_path, monkeypatch, 4.0)
    assert d.starts.get("headers") == "started at bucket_message_bytes = 4", d.line()
    assert charge == pytest.approx(4.0, rel=0.01)


def test_without_the_low_start_the_header_charge_stays_near_its_first_guess(tmp_path, monkeypatch):
    # The control: no second start (the low one above half the first guess), and the
    # one-evaluation fit cannot leave 132 B.
    d, charge = _headers_fit(tmp_path, monkeypatch, 100.0)
    assert "headers" not in d.starts and charge > 50, d.line()


def test_a_runner_up_names_what_a_later_step_put_in_its_fields():
    # Rig A: the shared capacity left at none, then the limiter scope's step gave a
    # per-node limiter; the backbone runner-up drops that limiter, and its label says so
    # rather than "instead of none".
    from hopsim.calibration.calibrate import undecided
    from hopsim.calibration.structure import Decision, StructureFit

    fitted = LIMITED.replace(limiter_gbps=0.179, limiter_scope="rendezvous", eager_threshold_bytes=65480)
    at_step = fitted.replace(limiter_gbps=0.0, limiter_scope="all")
    shared = Decision("shared capacity", [("none", _Fit(at_step, -10.0)),
                                          ("backbone", _Fit(at_step.replace(backbone_gbps=0.186), -9.0))],
                      "none", "none", True, bics={}, compared=3)
    [u] = undecided(fitted, StructureFit(None, [shared]))
    assert u.chosen == "none (with limiter_gbps = 0.179 from a later step)"
    assert dict(u.changes) == {"limiter_gbps": 0.0, "backbone_gbps": 0.186}
    # Without a later step's limiter, the label is the decision's own.
    [v] = undecided(at_step, StructureFit(None, [shared]))
    assert v.chosen == "none"


def _gap_fit(tmp_path, monkeypatch, low, hold=()):
    # A 0.3 Gbit/s bucket of 5 kB charging 4 B a message, and a 3 us gap between a rank's
    # sends that osu_bw's small messages show. The header step (its low start off) leaves
    # the charge at 132 B with half the burst, as rig B's came to the gap; with one
    # evaluation per fit, only a gap fit started with the charge given back reaches it.
    from hopsim.calibration import structure

    def headers_from_132(p, base, cases):
        alternatives, base_label = structure._headers(p, base, cases)
        for a in alternatives:
            a.starts = []
            a.free = a.free + ["bucket_burst_bytes"] if a.free else a.free
        return alternatives, base_label

    monkeypatch.setattr(structure, "LOW_START_HEADER_BYTES", low)
    monkeypatch.setattr(structure, "MECHANISMS", [("bucket headers", headers_from_132),
                                                  ("gap between sends", structure._gap)])
    truth = PLAIN.replace(name="gap", bucket_gbps=0.3, bucket_burst_bytes=5000.0,
                          bucket_message_bytes=4.0, gap_us=3.0)
    pp = _write(tmp_path, "pp.json", truth, "pingpong", ranks=2,
                sizes=[0, 64, 256, 1000, 4000, 16000, 64000], iterations=50)
    bw = _write(tmp_path, "bw.json", truth, "bandwidth", ranks=2, sizes=[1, 64, 256, 1000],
                iterations=20, window=64)
    cases = cases_of([m for f in (pp, bw) for m in parse_file(f)])[0]
    start = truth.replace(bucket_message_bytes=132.0, bucket_burst_bytes=2500.0, gap_us=0.0)
    sf = decide(start, PLAIN, cases, cap=None, max_nfev=1, hold=hold)
    d = next(d for d in sf.decisions if d.mechanism == "gap between sends")
    return d, sf.fit.platform


def test_the_gap_is_fitted_with_the_header_charge_given_back(tmp_path, monkeypatch):
    d, p = _gap_fit(tmp_path, monkeypatch, 4.0)
    assert d.chosen == "per-message gap", d.line()
    assert d.starts.get("per-message gap", "").startswith("started with the header charge given back"), d.line()
    assert p.bucket_message_bytes == pytest.approx(4.0, rel=0.05)
    assert p.bucket_burst_bytes > 4000


def test_without_the_given_back_start_the_gap_keeps_the_header_charge(tmp_path, monkeypatch):
    # The control: with the low start above half the charge, no such start.
    d, p = _gap_fit(tmp_path, monkeypatch, 100.0)
    assert "per-message gap" not in d.starts and p.bucket_message_bytes > 50, d.line()


def test_a_start_does_not_move_what_hold_keeps(tmp_path, monkeypatch):
    # calibrate --hold network.bucket_burst_bytes: the start that doubles the burst is
    # not tried (its fit would keep a burst nobody fitted).
    d, p = _gap_fit(tmp_path, monkeypatch, 4.0, hold=("bucket_burst_bytes",))
    assert "per-message gap" not in d.starts and p.bucket_burst_bytes == 2500.0, d.line()
