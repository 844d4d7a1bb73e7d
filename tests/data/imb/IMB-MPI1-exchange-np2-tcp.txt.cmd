# made on 2026-11-21T20:39Z, Open MPI v4.1.4, 2 cores, load average 7.65 6.73 4.02 (a shared machine)
mpirun -np 2 --mca btl self,tcp IMB-MPI1 PingPong Exchange -msglog 0:20 -iter 200 -time 2
