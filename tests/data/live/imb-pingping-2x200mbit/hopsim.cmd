hopsim live --tool imb --tool-path IMB-MPI1 --emulate-cluster 2 --link-rate 200mbit --workload pingping --ranks 2 --sizes 0,1048576
