# made on 2026-11-21T20:42Z, Open MPI v4.1.4, 2 cores, load average 8.76 7.65 4.74 (a shared machine)
mpirun -np 2 --mca btl self,tcp NPmpi-5 --end 1048576 --quick -o np.out
# output: the file np.out it wrote (its stdout discarded)
