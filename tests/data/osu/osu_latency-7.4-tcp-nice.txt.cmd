# made on 2026-11-21T20:47Z, Open MPI v4.1.4, 2 cores, load average 10.70 8.80 6.08 (a shared machine)
nice -n -5 mpirun -np 2 --mca btl self,tcp osu_latency-7.4 -m 0:1048576 -i 1000 -x 100
