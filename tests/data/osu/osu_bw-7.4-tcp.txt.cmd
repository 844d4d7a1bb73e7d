# made on 2026-11-21T20:39Z, Open MPI v4.1.4, 2 cores, load average 6.70 6.50 3.87 (a shared machine)
mpirun -np 2 --mca btl self,tcp osu_bw-7.4 -m 1:1048576 -i 20 -x 5
