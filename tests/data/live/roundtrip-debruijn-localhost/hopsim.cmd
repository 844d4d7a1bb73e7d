hopsim live --workload roundtrip --ranks 4 --overlay debruijn --degree 2 --reply-bytes 0 --exchanges 200 --oversubscribe
