/* The route table the engine wrote. Format (text, one record per line):
 *   hopbench-routes 1 <ranks>
 *   conn <rank> <count> <rank>...      one per rank, ascending ranks
 *   route <s> <d> <length> <rank>...   one per ordered pair, s ascending then d;
 *                                      length counts the ranks listed (s..d). */
#include "hopbench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(FILE *f, const char *path, const char *what)
{
  fprintf(stderr, "hopbench: %s: %s\n", path, what);
  if (f)
    fclose(f);
  return -1;
}

int routes_read(struct routes *r, const char *path, int ranks)
{
  memset(r, 0, sizeof *r);
  FILE *f = fopen(path, "r");
  if (!f)
    return fail(NULL, path, "cannot open the route table");
  int version = 0, n = 0;
  if (fscanf(f, "hopbench-routes %d %d", &version, &n) != 2 || version != 1)
    return fail(f, path, "not a hopbench route table (expected 'hopbench-routes 1 N')");
  if (n != ranks)
    return fail(f, path, "the route table is for another number of ranks");
  r->ranks = n;
  int64_t pairs = (int64_t)n * n;
  r->offset = calloc((size_t)pairs + 1, sizeof *r->offset);
  r->conn_offset = calloc((size_t)n + 1, sizeof *r->conn_offset);
  int64_t cap = pairs * 2 + 16, used = 0, ccap = (int64_t)n * 2 + 16, cused = 0;
  r->hops = malloc((size_t)cap * sizeof *r->hops);
  r->conn = malloc((size_t)ccap * sizeof *r->conn);
  if (!r->offset || !r->conn_offset || !r->hops || !r->conn)
    return fail(f, path, "out of memory");
  for (int k = 0; k < n; k++) {
    int rank = -1, count = -1;
    if (fscanf(f, " conn %d %d", &rank, &count) != 2 || rank != k || count < 1 || count > n)
      return fail(f, path, "bad or missing 'conn' line");
    r->conn_offset[k] = cused;
    for (int i = 0; i < count; i++) {
      if (cused == ccap) {
        ccap *= 2;
        r->conn = realloc(r->conn, (size_t)ccap * sizeof *r->conn);
      }
      if (fscanf(f, "%d", &r->conn[cused]) != 1 || r->conn[cused] < 0 || r->conn[cused] >= n)
        return fail(f, path, "bad rank in a 'conn' line");
      cused++;
    }
  }
  r->conn_offset[n] = cused;
  for (int64_t p = 0; p < pairs; p++) {
    int s = -1, d = -1, len = -1;
    if (fscanf(f, " route %d %d %d", &s, &d, &len) != 3 || (int64_t)s * n + d != p || len < 1 || len > n)
      return fail(f, path, "bad or missing 'route' line");
    r->offset[p] = used;
    for (int i = 0; i < len; i++) {
      if (used == cap) {
        cap *= 2;
        r->hops = realloc(r->hops, (size_t)cap * sizeof *r->hops);
      }
      if (fscanf(f, "%d", &r->hops[used]) != 1 || r->hops[used] < 0 || r->hops[used] >= n)
        return fail(f, path, "bad rank in a 'route' line");
      used++;
    }
    if (r->hops[r->offset[p]] != s || r->hops[used - 1] != d)
      return fail(f, path, "a route does not run from its source to its destination");
  }
  r->offset[pairs] = used;
  fclose(f);
  return 0;
}

int routes_next(const struct routes *r, int origin, int dst, int cur)
{
  if (cur == dst)
    return dst;
  int64_t p = (int64_t)origin * r->ranks + dst;
  for (int64_t i = r->offset[p]; i + 1 < r->offset[p + 1]; i++)
    if (r->hops[i] == cur)
      return r->hops[i + 1];
  return -1;
}

void routes_free(struct routes *r)
{
  free(r->offset);
  free(r->hops);
  free(r->conn_offset);
  free(r->conn);
  memset(r, 0, sizeof *r);
}
