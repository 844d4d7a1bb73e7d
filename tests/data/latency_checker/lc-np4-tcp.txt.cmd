# made on 2026-11-21T20:40Z, Open MPI v4.1.4, 2 cores, load average 9.00 7.20 4.30 (a shared machine)
mpirun -np 4 --oversubscribe --mca btl self,tcp --mca mpi_yield_when_idle 1 latency_checker -message-size 4000 -exchanges 2000
