"""Calibration: from real measurements to platform parameters, and back to a verdict.

    parsers     the tools' outputs (OSU, IMB, NetPIPE, latency_checker, Ray, hopsim JSON)
                -> Measurement lists (docs/calibration.md)
    fit         one fitter per parameter group; calibrate.calibrate_files() runs them
    validate    measured versus simulated, case by case (docs/validation.md)
    live, smpi  the `hopsim live` and `hopsim smpi` commands (what they run: hopsim.live)
    rigs, demo  the measurement campaigns; regenerate: the presets calibrate produces

Dependencies run one way: calibration uses hopsim.platforms (the platform model, its
TOML writer, the root finder, the SimGrid export), never the reverse.
"""
