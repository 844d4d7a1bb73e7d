hopsim live --tool netpipe --emulate-cluster 2 --link-rate 200mbit --workload pingpong --ranks 2 --sizes 0,1048576
