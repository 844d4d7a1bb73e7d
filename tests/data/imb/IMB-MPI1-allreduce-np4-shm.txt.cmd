# made on 2026-11-21T20:40Z, Open MPI v4.1.4, 2 cores, load average 7.79 6.81 4.09 (a shared machine)
mpirun -np 4 --oversubscribe --mca mpi_yield_when_idle 1 IMB-MPI1 Allreduce -npmin 2 -msglog 0:12 -iter 100 -time 2
