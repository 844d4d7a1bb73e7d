# made on 2026-11-21, run from 20:30Z to 20:34Z, Open MPI v4.1.4, NetPIPE 3.7 from Debian's netpipe-openmpi, 2 cores, machine loaded by parallel builds (load average about 7) (a shared machine)
mpirun -np 2 --mca btl self,tcp NPopenmpi -u 1048576 -o np37_tcp.out
# output: the file np37_tcp.out it wrote (renamed np37-tcp.out; its stdout discarded)
