hopsim live --emulate-cluster 2 --link-rate 200mbit --workload roundtrip --ranks 4 --ranks-per-node 2 --exchanges 200 --oversubscribe
