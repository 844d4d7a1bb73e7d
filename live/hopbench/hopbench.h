/* hopbench: hopsim's workloads as one real MPI program (docs/live.md).
 *
 * It measures and prints raw integers and times only; every statistic (modes, means,
 * cut-offs, IMB's t_min/t_max/t_avg) is computed by hopsim.live.result, the round-trip
 * ones by the engine's own statistics, so a live run and a simulated one have one
 * definition of each figure. */
#ifndef HOPBENCH_H
#define HOPBENCH_H

#include <stdint.h>

/* Per-pair routes written by the engine (hopsim.live.routes), and the
 * round-robin reception lists. route(s, d) is stored whole, not as a next hop per
 * destination, because routes may depend on the source (the random family). */
struct routes {
  int ranks;
  int64_t *offset;  /* ranks*ranks+1 offsets into hops */
  int *hops;        /* route s..d, both included */
  int64_t *conn_offset; /* ranks+1 offsets into conn */
  int *conn;        /* in-neighbours plus itself, ascending */
};

/* Reads FILE; on a problem prints one line to stderr and returns -1. */
int routes_read(struct routes *r, const char *path, int ranks);
/* The rank after `cur` on the route from `origin` to `dst`; -1 if cur is not on it. */
int routes_next(const struct routes *r, int origin, int dst, int cur);
void routes_free(struct routes *r);

#endif
