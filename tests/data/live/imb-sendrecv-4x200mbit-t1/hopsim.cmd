nice -n -15 hopsim live --emulate-cluster 4 --link-rate 200mbit --tool imb --tool-path SCRATCH/IMB-MPI1 --workload sendrecv --ranks 4 --sizes 0,1048576 --out imb-sendrecv-4x200mbit-t1
