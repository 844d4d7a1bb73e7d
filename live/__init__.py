"""Live runs: hopsim's workloads measured with real MPI, and their records read back.

    hopbench/   the workloads as one MPI C program (CMake builds it beside the engine;
                `hopsim smpi` compiles its sources with smpicc)
    cluster     the emulated cluster: hosts as network namespaces on a bridge, links
                shaped by tbf (docs/live.md)
    routes      the engine's overlay routes as the table hopbench follows
    result      hopbench's raw records as a hopsim Result; the round-trip figures are the
                engine's own statistics (hopsim._engine.statistics)

The commands that drive them are `hopsim live` (hopsim.calibration.live), `hopsim smpi`
(hopsim.calibration.smpi) and the campaigns of hopsim.calibration.rigs and .demo.
"""
