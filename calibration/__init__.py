"""Calibration: from real measurements to platform parameters, and back to a verdict.

    parsers     the tools' outputs (OSU, IMB, NetPIPE, latency_checker, Ray, hopsim JSON)
                -> Measurement lists (docs/calibration.md)
    fit         one fitter per parameter group; calibrate.calibrate_files() runs them
    validate    measured versus simulated, case by case (docs/validation.md)
    rigs, demo  the measurement campaigns (their runs: hopsim.live); regenerate: the
                presets calibrate produces

Dependencies run one way (tests/test_layering.py): calibration uses hopsim.live (the live
and SMPI runs) and hopsim.platforms (the platform model, its TOML writer, the root
finder, the SimGrid export); hopsim.live uses platforms and, of calibration, only the
parsers (one reader per tool's format), which import nothing of live or of the rest of
calibration.
"""
