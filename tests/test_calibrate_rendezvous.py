"""The eager/rendezvous switch decided by the joint fit from the cases that show it: a
both-ways exchange, where a rendezvous's handshake waits behind the other direction's
data from one size on (a ping-pong pays one round trip and hides it). The threshold is
screened over every interval between the exchange's sizes (structure._screen)."""
from types import SimpleNamespace as C

import pytest

from hopsim.calibration import structure
from hopsim.calibration.calibrate import calibrate_files
from hopsim.platforms.parse import parse_platform
from hopsim.platforms.platform import Platform


def test_every_interval_between_the_both_ways_sizes_is_a_threshold():
    C_ = lambda w, b, rpn=1: C(workload=w, bytes=b, ranks=2, ranks_per_node=rpn, measured_us=1.0)
    cases = [C_("exchange", b) for b in (0, 1024, 65536, 1024)] + [C_("pingpong", 4096),
                                                                   C_("exchange", 8192, rpn=2)]
    # 64 KiB messages the first rendezvous: 65535, Open MPI's eager limit with its header.
    assert structure.rendezvous_thresholds(cases) == [1023, 65535]
    assert structure.rendezvous_thresholds([C_("pingpong", 4096)]) == []
    # The MPI's own limit (calibrate --eager-limit) replaces the intervals, where an
    # exchange between nodes can show a threshold at all.
    assert structure.rendezvous_thresholds(cases, 65480) == [65480]
    assert structure.rendezvous_thresholds([C_("pingpong", 4096)], 65480) == []


SIZES = [0, 1024, 4096, 16384, 32768, 65536, 131072, 262144, 524288, 1048576]


RUNS = (("pp.json", "pingpong", dict(iterations=5)), ("ex.json", "exchange", dict(repetitions=3)))


def _decision(text):
    return next(l.strip() for l in text.splitlines() if l.strip().startswith(("eager/rendezvous:", "eager/rendezvous (")))


def test_open_mpis_rendezvous_is_found_from_the_exchange_and_its_empty_request_told(engine_runs):
    # Rig A's kind: a bucket per direction under a node's in + out capacity. A rank answers
    # its second request once its first message is in: meanwhile one direction idles, and
    # the bucket keeps the other from taking the capacity it leaves (12-20% from 64 KiB).
    # The request carries no data, as Open MPI 4.1's TCP transport sends it (a request
    # with the first 64 KiB would leave a 64 KiB message 1 byte to send after the answer,
    # which no file tells from eager).
    truth = Platform(name="t", nodes=2, cores=1, latency_us=4.0, bandwidth_gbps=0.19,
                     bucket_gbps=0.093, bucket_burst_bytes=15000.0, limiter_gbps=0.188,
                     eager_threshold_bytes=65535, rendezvous_first_bytes=0)
    base = truth.replace(name="b", eager_threshold_bytes=None, rendezvous_first_bytes=0)
    r = calibrate_files(engine_runs(truth, SIZES, RUNS), base=base, joint=True, cap=None)
    # Below 64 KiB a rendezvous costs this exchange only its handshake's latency (2% at
    # 32 KiB, 0.3% at 16 KiB), which the fit's latency absorbs: the threshold is told from
    # eager, and from the request carrying data, not to the interval.
    assert _decision(r.text).endswith(tuple(f": rendezvous above {t} B" for t in (16383, 32767, 65535)))
    fitted = parse_platform(r.toml, "fit")
    assert fitted.eager_threshold_bytes in (16383, 32767, 65535)
    assert fitted.rendezvous_first_bytes == 0
    assert fitted.limiter_gbps == pytest.approx(0.188, rel=0.05)
    assert f"async-small-thresh:{fitted.eager_threshold_bytes}" in r.smpi_flags


def test_no_rendezvous_where_there_is_none(engine_runs):
    truth = Platform(name="t", nodes=2, cores=1, latency_us=4.0, bandwidth_gbps=0.19,
                     bucket_gbps=0.093, bucket_burst_bytes=15000.0, limiter_gbps=0.188)
    r = calibrate_files(engine_runs(truth, SIZES, RUNS), base=truth.replace(name="b"), joint=True, cap=None)
    assert "eager/rendezvous:" not in r.text or _decision(r.text).endswith("eager only")
    assert parse_platform(r.toml, "fit").eager_threshold_bytes is None


def test_a_race_jitter_is_found_where_the_exchange_loses_its_races(engine_runs):
    # Full duplex, no capacity: without a jitter a rendezvous moves no exchange case (both
    # ranks end their first message at once and answer each other); with one, the second
    # pair of large messages goes one way after the other (1.5x from 256 KiB here).
    truth = Platform(name="t", nodes=2, cores=1, latency_us=4.0, bandwidth_gbps=0.4,
                     eager_threshold_bytes=65535, rate_jitter=1e-3)
    base = truth.replace(name="b", eager_threshold_bytes=None, rate_jitter=0.0)
    r = calibrate_files(engine_runs(truth, SIZES, RUNS), base=base, joint=True, cap=None)
    assert ", race jitter " in _decision(r.text).rsplit(": ", 1)[1]
    fitted = parse_platform(r.toml, "fit")
    assert fitted.eager_threshold_bytes is not None and fitted.rate_jitter > 0
    assert "network.rate_jitter" in r.toml and "structure: eager/rendezvous" in r.toml


def test_a_rendezvous_whose_request_form_alone_is_undecided_is_written_with_an_empty_request():
    p = Platform(name="p", nodes=2, cores=1, latency_us=4.0, bandwidth_gbps=0.4)
    r = p.replace(eager_threshold_bytes=65535)
    alts = [structure.Alternative("eager only", p, []),
            structure.Alternative("r", r, []),
            structure.Alternative("r first", r.replace(rendezvous_first_bytes=65535), []),
            structure.Alternative("r j", r.replace(rate_jitter=5e-4), []),
            structure.Alternative("r first j", r.replace(rendezvous_first_bytes=65535, rate_jitter=5e-4), [])]
    bic = {"eager only": -1106.0, "r": -1100.4, "r first": -1100.5, "r j": -1116.1,
           "r first j": -1121.5}   # rig D's 2-host fit
    chosen, undecided, form, note = structure._request_verdict(alts, bic, "r first j")
    assert (chosen, undecided, form) == ("r j", False, False)
    assert "10.1 below eager only" in note and "undecided (BIC difference 5.4 under 6)" in note
    # Another alternative within the margin of the one written: nothing is decided.
    assert structure._request_verdict(alts, {**bic, "eager only": -1112.0}, "r first j") is None
    # The two forms apart by the margin: BIC decides between them as usual.
    assert structure._request_verdict(alts, {**bic, "r j": -1110.0}, "r first j") is None
    # Eager best: no rendezvous to write.
    assert structure._request_verdict(alts, {**bic, "eager only": -1130.0}, "eager only") is None


def test_the_mpis_own_eager_limit_is_the_only_threshold_weighed(engine_runs):
    # The truth's threshold, 40000 B, lies in the 32768..65535 interval, where the screen
    # would put 65535: given the limit, the fit weighs that one (its race scanned) against
    # eager-only and writes it.
    truth = Platform(name="t", nodes=2, cores=1, latency_us=4.0, bandwidth_gbps=0.4,
                     eager_threshold_bytes=40000, rate_jitter=1e-3)
    base = truth.replace(name="b", eager_threshold_bytes=None, rate_jitter=0.0)
    r = calibrate_files(engine_runs(truth, SIZES, RUNS), base=base, joint=True, cap=None,
                        eager_limit=40000, eager_limit_from="the test states it")
    decision = _decision(r.text)
    assert "rendezvous above 40000 B" in decision
    # Its provenance says the threshold was given, not found in the data.
    assert decision.startswith("eager/rendezvous (the threshold weighed: 40000 B, the MPI's "
                               "eager limit as the test states it, not screened)")
    assert "above 65535 B" not in decision and "above 32767 B" not in decision
    fitted = parse_platform(r.toml, "fit")
    assert fitted.eager_threshold_bytes == 40000 and fitted.rate_jitter > 0


def _eager_alternatives():
    p = Platform(name="p", nodes=2, cores=1, latency_us=4.0, bandwidth_gbps=0.4)
    r = p.replace(eager_threshold_bytes=65480)
    return [structure.Alternative("eager only", p, []),
            structure.Alternative("r", r, []),
            structure.Alternative("r first", r.replace(rendezvous_first_bytes=65480), []),
            structure.Alternative("r j", r.replace(rate_jitter=1e-3), []),
            structure.Alternative("r first j", r.replace(rendezvous_first_bytes=65480, rate_jitter=1e-3), [])]


def test_base_rejected_by_the_data_is_not_written_where_the_rest_is_undecided():
    # Rig J's 2-host campaign: eager only 17.2 above the plain rendezvous, 18.4 above the
    # best; the rendezvous forms within 6 of each other (two of them). Keeping --base's
    # eager only would write what the data rule out; the least change from it is written.
    alts = _eager_alternatives()
    bic = {"eager only": -368.2, "r": -385.4, "r first": -376.8, "r j": -386.6, "r first j": -377.0}
    chosen, note = structure._rejected_base_verdict("eager/rendezvous", alts, bic, "eager only")
    assert chosen == "r"
    assert "eager only, as --base has it, rejected (BIC 18.4 above r j)" in note
    assert "r j vs r: undecided (BIC difference 1.2 under 6)" in note
    # Among the open ones the least change wins even at a higher BIC: the jitter alone
    # open beside the first bytes alone (one field each), the lower BIC of those.
    only = {**bic, "r": -370.0, "r first": -384.0}
    assert structure._rejected_base_verdict("eager/rendezvous", alts, only, "eager only")[0] == "r j"
    # --base's alternative within the margin of the best: kept, as before.
    assert structure._rejected_base_verdict(
        "eager/rendezvous", alts, {**bic, "eager only": -381.0}, "eager only") is None
    # --base's alternative the best: nothing to replace.
    assert structure._rejected_base_verdict(
        "eager/rendezvous", alts, {**bic, "eager only": -390.0}, "eager only") is None


class _Fit:
    """A joint fit's stand-in: decide() asks it only for these."""

    def __init__(self, platform):
        self.platform, self.cost, self.evaluations, self.chosen_k = platform, 1.0, 1, 0
        self.bic, self.cases = 0.0, [None] * 60

    def median_abs_error_pct(self):
        return 5.0

    def restore(self):
        pass


def test_decide_writes_the_least_change_where_base_is_rejected(monkeypatch):
    # decide() itself, its fits and BICs stood in for: J's campaign BICs again.
    alts = _eager_alternatives()
    bic = {"eager only": -368.2, "r": -385.4, "r first": -376.8, "r j": -386.6, "r first j": -377.0}
    monkeypatch.setattr(structure, "_eager", lambda *a: (alts, "eager only", 0))
    monkeypatch.setattr(structure, "MECHANISMS", (("eager/rendezvous", structure._eager),))
    monkeypatch.setattr(structure, "core_free", lambda p, cases: [])
    monkeypatch.setattr(structure, "fit_joint", lambda p, *a, **k: _Fit(p))
    monkeypatch.setattr(structure, "compare", lambda fits: ({label: bic[label] for label, _ in fits}, 40))
    sf = structure.decide(alts[0].platform, alts[0].platform, cases=[object()] * 60)
    d = sf.decisions[0]
    assert (d.chosen, d.undecided) == ("r", True)
    assert sf.fit.platform.eager_threshold_bytes == 65480 and sf.fit.platform.rate_jitter == 0
    assert "written: r, the least change from --base's" in d.line()


# Rig M's fit (2 Gbit/s): the jitter forms and eager only within 6 of each other, the
# plain rendezvous 7.2 above the best.
M_BIC = {"eager only": -30.7, "r": -28.1, "r first": -28.1, "r j": -35.3, "r first j": -33.6}


def test_a_given_eager_limit_writes_the_mpis_rendezvous_where_the_data_leave_it_open():
    alts = _eager_alternatives()
    chosen, note = structure._given_limit_verdict(alts, M_BIC, "eager only", "given by --eager-limit")
    # Of the rendezvous forms still open, the least change from eager only (threshold and
    # jitter: two fields, where the first bytes would make three).
    assert chosen == "r j"
    assert note.startswith("r j vs r first j vs eager only: undecided (BIC difference 4.6 under 6)")
    assert note.endswith("written: r j, not --base's eager only: the MPI sends a rendezvous above "
                         "its eager limit (given by --eager-limit), and these files do not rule that out")
    # The plain rendezvous open too: it changes least, though not the best.
    assert structure._given_limit_verdict(alts, {**M_BIC, "r": -31.0}, "eager only", "x")[0] == "r"
    # No rendezvous within the margin: the data decide eager only, nothing to replace.
    decided = {"eager only": -40.0, "r": -20.0, "r first": -20.0, "r j": -30.0, "r first j": -20.0}
    assert structure._given_limit_verdict(alts, decided, "eager only", "x") is None
    # --base's alternative a rendezvous already: left to the other rules.
    assert structure._given_limit_verdict(alts, M_BIC, "r", "x") is None


def _decide_on_m(monkeypatch, **kw):
    alts = _eager_alternatives()
    monkeypatch.setattr(structure, "_eager", lambda *a: (alts, "eager only", 0))
    monkeypatch.setattr(structure, "MECHANISMS", (("eager/rendezvous", structure._eager),))
    monkeypatch.setattr(structure, "core_free", lambda p, cases: [])
    monkeypatch.setattr(structure, "fit_joint", lambda p, *a, **k: _Fit(p))
    monkeypatch.setattr(structure, "compare", lambda fits: ({label: M_BIC[label] for label, _ in fits}, 14))
    return structure.decide(alts[0].platform, alts[0].platform, cases=[object()] * 60, **kw)


def test_decide_follows_a_given_eager_limit_and_only_a_given_one(monkeypatch):
    sf = _decide_on_m(monkeypatch, eager_limit=65480)
    d = sf.decisions[0]
    assert (d.chosen, d.undecided) == ("r j", True)
    assert sf.fit.platform.eager_threshold_bytes == 65480 and sf.fit.platform.rate_jitter == 1e-3
    assert "not --base's eager only" in d.line()
    # Without the MPI's limit (a threshold screened from the data) --base's stays.
    sf = _decide_on_m(monkeypatch)
    assert (sf.decisions[0].chosen, sf.decisions[0].undecided) == ("eager only", True)
    assert sf.fit.platform.eager_threshold_bytes is None
