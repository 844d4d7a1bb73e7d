hopsim live --emulate-cluster 2 --link-rate 200mbit --workload pingpong --ranks 2 --sizes 0,1,1024,4096,65536,1048576 --iterations 200
