hopsim live --tool imb --tool-path IMB-MPI1 --emulate-cluster 4 --link-rate 200mbit --workload sendrecv --ranks 4 --sizes 0,1048576
