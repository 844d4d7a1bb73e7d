hopsim live --tool osu --tool-path osu_bw --emulate-cluster 2 --link-rate 200mbit --workload bandwidth --ranks 2 --sizes 1,1048576
