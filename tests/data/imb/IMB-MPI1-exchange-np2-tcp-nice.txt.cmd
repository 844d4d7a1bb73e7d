# made on 2026-11-21T20:48Z, Open MPI v4.1.4, 2 cores, load average 11.25 9.07 6.24 (a shared machine)
nice -n -5 mpirun -np 2 --mca btl self,tcp IMB-MPI1 PingPong Exchange -msglog 0:20 -iter 200 -time 2
