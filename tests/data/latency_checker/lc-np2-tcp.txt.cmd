# made on 2026-11-21T20:40Z, Open MPI v4.1.4, 2 cores, load average 7.89 6.85 4.11 (a shared machine)
mpirun -np 2 --mca btl self,tcp latency_checker -message-size 4000 -exchanges 10000
