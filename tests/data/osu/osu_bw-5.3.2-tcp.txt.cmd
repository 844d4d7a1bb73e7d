# made on 2026-11-21T20:39Z, Open MPI v4.1.4, 2 cores, load average 6.83 6.52 3.84 (a shared machine)
mpirun -np 2 --mca btl self,tcp osu_bw-5.3.2 -i 20 -x 5
# note: the table was complete (last row 4194304) but mpirun did not exit (ranks stayed in finalisation over tcp on a loaded machine); it was killed by its pid after the output was taken
