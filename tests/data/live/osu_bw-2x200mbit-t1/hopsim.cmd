nice -n -15 hopsim live --emulate-cluster 2 --link-rate 200mbit --tool osu --tool-path SCRATCH/osu_bw --workload bandwidth --ranks 2 --sizes 1,1048576 --out osu_bw-2x200mbit-t1
