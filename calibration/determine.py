"""After the structure is chosen: what the files determine, what they leave to --base, and
the provenance of every number the joint fit touched.

A parameter the files do not determine (calibration/joint.py: a flat Jacobian column or
a relative standard error above SE_LIMIT) goes back to --base's value (without --base:
to the closed-form value the joint fit started from), and the determined ones are fitted
once more with it held. Unless that fits the files worse than the joint fit by BIC_MARGIN
or more (noisy files leave every parameter's SE above the limit, and --base's values can
be a hundred times off: a platform that misses its own files by 1000%): then the fit's
values are kept, each undetermined one reported as kept, with its SE and the BIC difference.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..platforms.platform import Platform
from .joint import SE_LIMIT, JointFit, fit_joint, key
from .structure import BIC_MARGIN, StructureFit, decision_keys
from .unexplained import report_lines


@dataclass
class Determined:
    fit: JointFit
    lines: list[str]
    provenance: dict[str, str]
    fixed: dict[str, str]          # field -> why it was left where it is
    evaluations: int = 0
    seconds: float = 0.0           # wall time (stderr only: the report stays deterministic)


# Rates and costs whose 0 means a mechanism is off.
SWITCHES = ("pacing_gbps", "bucket_gbps", "bucket_burst_bytes", "bucket_message_bytes", "limiter_gbps",
            "backbone_gbps", "nic_message_us", "gap_us")


def _se_text(se: float) -> str:
    return "a flat Jacobian column (no case moves with it)" if math.isinf(se) else \
        f"relative SE {100 * se:.0f}% > {100 * SE_LIMIT:.0f}%"


def determine(sf: StructureFit, start: Platform, base: Platform | None, base_label: str | None,
              start_provenance: dict, cap, max_nfev) -> Determined:
    j = sf.fit
    fixed: dict[str, str] = {}
    # Hold what is not determined, refit the rest, and look again (a parameter that only
    # traded off against a held one can be undetermined once that one is held).
    while j.undetermined:
        changes = {}
        for f in j.undetermined:
            if f in SWITCHES and getattr(j.platform, f) > 0 and not (
                    base is not None and float(getattr(base, f) or 0) > 0) and not getattr(start, f):
                # Held where it is: the fallback, 0, would switch off the mechanism the
                # structure decided for (its rate no longer moves any case, not "none").
                changes[f] = getattr(j.platform, f)
                fixed[f] = (f"not determined by these files ({_se_text(j.se_rel[f])}): left at "
                            f"the fit's value {getattr(j.platform, f)} (0, the closed form's, "
                            f"would switch off the mechanism decided above)"
                            + (": at this value it binds no case of these files, so the "
                               "mechanism decided above is in effect none here"
                               if math.isinf(j.se_rel[f]) else ""))
            elif base is not None and float(getattr(base, f) or 0) > 0:
                changes[f] = getattr(base, f)
                fixed[f] = (f"not determined by these files ({_se_text(j.se_rel[f])}): left at "
                            f"--base {base_label}: {getattr(base, f)}")
            else:
                changes[f] = getattr(start, f)
                fixed[f] = (f"not determined by these files ({_se_text(j.se_rel[f])}): left at "
                            f"the closed-form value {getattr(start, f)}"
                            + ("" if base is None else f" (--base {base_label} has none)"))
        held = j.platform.replace(**changes)
        rest = [f for f in j.free if f not in fixed]
        before = j
        j = fit_joint(held, j.cases, rest, cap=cap, max_nfev=max_nfev)
        j.evaluations += before.evaluations - (sf.fit.evaluations if before is sf.fit else 0)
        j.seconds += before.seconds - (sf.fit.seconds if before is sf.fit else 0.0)
        for f in fixed:
            j.se_rel.setdefault(f, before.se_rel.get(f, math.inf))
    refits = (j.evaluations, j.seconds) if j is not sf.fit else (0, 0.0)
    if fixed and j.bic - sf.fit.bic >= BIC_MARGIN:
        worse = j.bic - sf.fit.bic
        j = sf.fit
        j.restore()   # the refits moved the cases
        # Only what the joint fit itself left undetermined is reported so; a parameter
        # undetermined only once others were held is determined at this optimum.
        fixed = {f: (f"not determined by these files ({_se_text(j.se_rel[f])}): kept at the "
                     f"fit's value, since held at {text.split(': left at ', 1)[1]} with the "
                     f"rest refitted the files fit worse by BIC {worse:.1f}")
                 for f, text in fixed.items() if f in j.undetermined}
    files = sorted({c.file for c in j.cases})
    prov = {}
    how = (f"joint fit, every case simulated by the engine: {j.n} cases of {len(files)} file(s) "
           f"({', '.join(files)}), log residuals weighted per file, scipy least_squares "
           f"(soft_l1)")
    evaluations = sf.evaluations + refits[0]
    lines = [f"joint fit: {j.n} cases of {len(files)} file(s), {evaluations} simulations of "
             f"every case; median |error| on them "
             f"{j.median_abs_error_pct():.1f}% (at most {cap} iterations per case)"]
    lines.append("structure (BIC on the robust log residuals, lower is better):")
    for d in sf.decisions:
        lines.append("  " + d.line())
        for k in decision_keys(d):
            prov[k] = d.provenance()
            # Left as --base has it: where --base's value came from still holds.
            origin = start_provenance.get(k, "")
            if d.undecided and origin and d.chosen == d.base_label and \
                    origin.removeprefix("from --base ") != origin and ": " in origin:
                prov[k] += "; --base's origin: " + origin.split(": ", 1)[1]
    lines.append("parameters:")
    for f in dict.fromkeys(list(j.free) + list(fixed)):
        k = key(f)
        v = getattr(j.platform, f)
        if f in fixed:
            prov[k] = (fixed[f] + f"; the closed form had: {start_provenance.get(k, 'none')}"
                       + (f"; {prov[k]}" if k in prov else ""))
            lines.append(f"  {k} = {v}    {fixed[f]}")
        else:
            se = j.se_rel.get(f, math.nan)
            prov[k] = (f"{how}; value {v}, relative SE {100 * se:.1f}%; started from the closed "
                       f"form: {start_provenance.get(k, getattr(start, f))}"
                       + (f"; {prov[k]}" if k in prov else ""))
            lines.append(f"  {k} = {v}    (relative SE {100 * se:.1f}%, determined)")
    lines += report_lines(j.cases, j.simulated)
    seconds = sf.seconds + refits[1]
    return Determined(j, lines, prov, fixed, evaluations, seconds)
