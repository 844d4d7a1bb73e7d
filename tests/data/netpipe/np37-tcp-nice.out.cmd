# made on 2026-11-21T20:51Z, Open MPI v4.1.4, 2 cores, load average 11.65 10.89 7.59 (a shared machine)
nice -n -5 mpirun -np 2 --mca btl self,tcp NPopenmpi -u 1048576 -p 0 -o np.out
# output: the file np.out it wrote (its stdout discarded)
