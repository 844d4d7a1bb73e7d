"""Calibration: from real measurements to platform parameters.

Measurement parsers (OSU, IMB, NetPIPE, latency_checker, Ray, hopbench live runs), the
one Measurement shape they produce, and the fits that turn them into a Platform arrive
with a later issue. Until then, presets are derived by hopsim.platforms.derive, which
fits individual platform values to published figures by bisection over the engine.
"""
