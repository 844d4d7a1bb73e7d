nice -n -15 hopsim live --emulate-cluster 2 --link-rate 200mbit --tool imb --tool-path SCRATCH/IMB-MPI1 --workload pingping --ranks 2 --sizes 0,1048576 --out imb-pingping-2x200mbit-t2
