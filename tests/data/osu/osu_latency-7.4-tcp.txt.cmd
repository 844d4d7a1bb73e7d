# made on 2026-11-21T20:38Z, Open MPI v4.1.4, 2 cores, load average 7.23 6.52 3.62 (a shared machine)
mpirun -np 2 --mca btl self,tcp osu_latency-7.4 -m 0:1048576 -i 1000 -x 100
