hopsim live --emulate-cluster 4 --link-rate 200mbit --workload exchange --ranks 8 --ranks-per-node 2 --out tests/data/live/exchange-4x200mbit-8ranks
