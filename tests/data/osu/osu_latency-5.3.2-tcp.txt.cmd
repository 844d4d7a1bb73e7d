# made on 2026-11-21T20:37Z, Open MPI v4.1.4, 2 cores, load average 6.80 6.35 3.45 (a shared machine)
mpirun -np 2 --mca btl self,tcp osu_latency-5.3.2 -i 1000 -x 100
# note: the table was complete (last row 4194304) but mpirun did not exit (both ranks stayed in finalisation over tcp on a loaded machine); it was killed by its pid after the output was taken
