# made on 2026-11-21T20:48Z, Open MPI v4.1.4, 2 cores, load average 11.07 9.07 6.26 (a shared machine)
nice -n -5 mpirun -np 2 --mca btl self,tcp latency_checker -message-size 4000 -exchanges 10000
