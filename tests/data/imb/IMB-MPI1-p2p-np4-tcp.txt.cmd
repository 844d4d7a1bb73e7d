# made on 2026-11-21T20:39Z, Open MPI v4.1.4, 2 cores, load average 6.81 6.52 3.89 (a shared machine)
mpirun -np 4 --oversubscribe --mca btl self,tcp --mca mpi_yield_when_idle 1 IMB-MPI1 PingPong PingPing Sendrecv Exchange -npmin 2 -msglog 0:16 -iter 200 -time 2
