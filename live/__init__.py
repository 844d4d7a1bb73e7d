"""Live runs: hopsim's workloads measured with real MPI, and their records read back.

    mpirun      `hopsim live`: a workload (hopbench or a third-party benchmark) run by
                Open MPI's mpirun, here, on a hostfile's hosts or an emulated cluster
    smpi        `hopsim smpi`: hopbench compiled with smpicc and run by smpirun on a
                hopsim platform as hopsim.platforms.simgrid exports it
    hopbench/   the workloads as one MPI C program (CMake builds it beside the engine;
                `hopsim smpi` compiles its sources with smpicc)
    cluster     the emulated cluster: hosts as network namespaces on a bridge, links
                shaped by tbf (docs/live.md)
    routes      the engine's overlay routes as the table hopbench follows
    result      hopbench's raw records as a hopsim Result; the round-trip figures are the
                engine's own statistics (hopsim._engine.statistics)

hopsim.live uses hopsim.platforms and, of hopsim.calibration, only its parsers (to read
a third-party tool's output); calibration's --live fits and campaigns use hopsim.live.
"""
