/* hopbench: the three workloads of hopsim as a real MPI program (docs/live.md).
 *
 *   hopbench pingpong  [--sizes 0,1,..] [--iterations N] [--warmup N]
 *   hopbench exchange  [--sizes 0,1,..] [--repetitions N]
 *   hopbench roundtrip [--request-bytes B] [--reply-bytes B] [--exchanges N]
 *                      [--destinations independent|shared] [--seed S]
 *                      [--reception any-source|round-robin] [--routes FILE]
 *   hopbench routes --routes FILE --ranks N   (one process: print the route it would
 *                      follow for every pair, walking its own next-hop lookup)
 *
 * Rank 0 prints raw records (see print_* below); hopsim turns them into the tools'
 * text and JSON. Bad arguments: one line on stderr, exit status 2. */
#include "hopbench.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

enum { KIND_REQUEST = 1, KIND_REPLY = 2, KIND_DONE = 3, KIND_STOP = 4 };
/* The routing header travels in the tag, as in RayPlatform 1.0.x, so that message
 * sizes stay exactly those of the tools: kind (3 bits), origin and final destination
 * (14 bits each). */
#define RANK_BITS 14
#define MAX_RANKS (1 << RANK_BITS)
#define TAG(kind, origin, dst) (((kind) << (2 * RANK_BITS)) | ((origin) << RANK_BITS) | (dst))
#define TAG_KIND(t) ((t) >> (2 * RANK_BITS))
#define TAG_ORIGIN(t) (((t) >> RANK_BITS) & (MAX_RANKS - 1))
#define TAG_DST(t) ((t) & (MAX_RANKS - 1))

struct options {
  const char *workload;
  int64_t *sizes;
  int nsizes;
  int64_t iterations, repetitions;
  int64_t warmup; /* -1: osu_latency's with its counts, none with --iterations */
  int64_t request_bytes, reply_bytes, exchanges;
  int shared_destinations, round_robin;
  uint64_t seed;
  const char *routes;
  int ranks;
};

static int rank_, size_;

static void usage_error(const char *fmt, const char *arg)
{
  if (rank_ == 0) {
    fprintf(stderr, "hopbench: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
  }
  MPI_Finalize();
  exit(2);
}

static int64_t parse_int(const char *text, const char *flag, int64_t minimum)
{
  char *end = NULL;
  long long v = strtoll(text, &end, 10);
  if (end == text || *end != '\0' || v < minimum)
    usage_error("bad value for %s", flag);
  return v;
}

static void parse_sizes(struct options *o, const char *text)
{
  int n = 1;
  for (const char *p = text; *p; p++)
    n += *p == ',';
  o->sizes = malloc((size_t)n * sizeof *o->sizes);
  char *copy = strdup(text), *save = NULL;
  o->nsizes = 0;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
    o->sizes[o->nsizes++] = parse_int(tok, "--sizes", 0);
  free(copy);
  if (o->nsizes == 0)
    usage_error("%s: expected comma-separated byte counts", "--sizes");
}

static void parse(struct options *o, int argc, char **argv)
{
  memset(o, 0, sizeof *o);
  o->request_bytes = o->reply_bytes = 4000;
  o->exchanges = 1000;
  o->seed = 1;
  o->warmup = -1;
  if (argc < 2)
    usage_error("%s", "usage: hopbench {pingpong|exchange|roundtrip} [options]");
  o->workload = argv[1];
  if (strcmp(o->workload, "pingpong") && strcmp(o->workload, "exchange") && strcmp(o->workload, "roundtrip") &&
      strcmp(o->workload, "routes"))
    usage_error("unknown workload %s (pingpong, exchange, roundtrip, routes)", o->workload);
  for (int i = 2; i < argc; i++) {
    const char *flag = argv[i];
    if (i + 1 >= argc)
      usage_error("%s needs a value", flag);
    const char *v = argv[++i];
    if (!strcmp(flag, "--sizes"))
      parse_sizes(o, v);
    else if (!strcmp(flag, "--iterations"))
      o->iterations = parse_int(v, flag, 0);
    else if (!strcmp(flag, "--warmup"))
      o->warmup = parse_int(v, flag, 0);
    else if (!strcmp(flag, "--repetitions"))
      o->repetitions = parse_int(v, flag, 0);
    else if (!strcmp(flag, "--request-bytes"))
      o->request_bytes = parse_int(v, flag, 0);
    else if (!strcmp(flag, "--reply-bytes"))
      o->reply_bytes = parse_int(v, flag, 0);
    else if (!strcmp(flag, "--exchanges"))
      o->exchanges = parse_int(v, flag, 1);
    else if (!strcmp(flag, "--seed"))
      o->seed = (uint64_t)parse_int(v, flag, 0);
    else if (!strcmp(flag, "--routes"))
      o->routes = v;
    else if (!strcmp(flag, "--ranks"))
      o->ranks = (int)parse_int(v, flag, 1);
    else if (!strcmp(flag, "--destinations")) {
      if (strcmp(v, "independent") && strcmp(v, "shared"))
        usage_error("--destinations must be independent or shared, got %s", v);
      o->shared_destinations = !strcmp(v, "shared");
    } else if (!strcmp(flag, "--reception")) {
      if (strcmp(v, "any-source") && strcmp(v, "round-robin"))
        usage_error("--reception must be any-source or round-robin, got %s", v);
      o->round_robin = !strcmp(v, "round-robin");
    } else
      usage_error("unknown option %s", flag);
  }
  if (o->nsizes == 0) {
    /* osu_latency's and IMB-MPI1's sweep: 0 and the powers of two up to 4 MiB */
    o->nsizes = 24;
    o->sizes = malloc(24 * sizeof *o->sizes);
    o->sizes[0] = 0;
    for (int k = 0; k < 23; k++)
      o->sizes[k + 1] = (int64_t)1 << k;
  }
}

static void *buffer(int64_t bytes)
{
  void *p = calloc(1, bytes > 0 ? (size_t)bytes : 1);
  if (!p) {
    fprintf(stderr, "hopbench: out of memory for %lld-byte buffers\n", (long long)bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return p;
}

static int64_t max_size(const struct options *o)
{
  int64_t m = 0;
  for (int i = 0; i < o->nsizes; i++)
    m = o->sizes[i] > m ? o->sizes[i] : m;
  return m;
}

/* osu_latency: blocking send and receive, 100 warm-up and 10000 timed round trips
 * (10 and 1000 above 8192 bytes). Record: pingpong <bytes> <warmup> <timed> <seconds>. */
static int64_t run_pingpong(const struct options *o)
{
  int64_t big = max_size(o), messages = 0;
  char *sbuf = buffer(big), *rbuf = buffer(big);
  for (int k = 0; k < o->nsizes; k++) {
    int64_t bytes = o->sizes[k];
    int64_t warmup = o->warmup >= 0 ? o->warmup : o->iterations > 0 ? 0 : (bytes > 8192 ? 10 : 100);
    int64_t timed = o->iterations > 0 ? o->iterations : (bytes > 8192 ? 1000 : 10000);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = 0;
    for (int64_t i = 0; i < warmup + timed; i++) {
      if (i == warmup)
        t0 = MPI_Wtime();
      if (rank_ == 0) {
        MPI_Send(sbuf, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(rbuf, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank_ == 1) {
        MPI_Recv(rbuf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(sbuf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
      }
      messages += rank_ < 2 ? 1 : 0;
    }
    double seconds = MPI_Wtime() - t0;
    if (rank_ == 0)
      printf("pingpong %lld %lld %lld %.9f\n", (long long)bytes, (long long)warmup, (long long)timed, seconds);
  }
  free(sbuf);
  free(rbuf);
  return messages;
}

/* IMB-MPI1's repetition count: 1000, fewer for big messages (40 MiB per sample). */
static int64_t imb_repetitions(int64_t bytes)
{
  if (bytes <= 0)
    return 1000;
  int64_t r = (40LL << 20) / bytes;
  return r < 1 ? 1 : (r > 1000 ? 1000 : r);
}

/* IMB Exchange: a periodic chain; each repetition sends to the right and the left
 * neighbour, receives from both, then waits for its sends.
 * Record: exchange <bytes> <repetitions> <seconds per repetition of each rank>... */
static int64_t run_exchange(const struct options *o)
{
  int64_t big = max_size(o), messages = 0;
  char *sbuf = buffer(2 * big), *rbuf = buffer(2 * big);
  int left = (rank_ + size_ - 1) % size_, right = (rank_ + 1) % size_;
  double *all = rank_ == 0 ? malloc((size_t)size_ * sizeof *all) : NULL;
  for (int k = 0; k < o->nsizes; k++) {
    int64_t bytes = o->sizes[k];
    int64_t reps = o->repetitions > 0 ? o->repetitions : imb_repetitions(bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int64_t i = 0; i < reps; i++) {
      MPI_Request req[2];
      MPI_Isend(sbuf, (int)bytes, MPI_BYTE, right, 2, MPI_COMM_WORLD, &req[0]);
      MPI_Isend(sbuf + bytes, (int)bytes, MPI_BYTE, left, 2, MPI_COMM_WORLD, &req[1]);
      MPI_Recv(rbuf, (int)bytes, MPI_BYTE, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Recv(rbuf + bytes, (int)bytes, MPI_BYTE, right, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
      messages += 2;
    }
    double per_rep = (MPI_Wtime() - t0) / (double)reps;
    MPI_Gather(&per_rep, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank_ == 0) {
      printf("exchange %lld %lld", (long long)bytes, (long long)reps);
      for (int r = 0; r < size_; r++)
        printf(" %.9f", all[r]);
      printf("\n");
    }
  }
  free(all);
  free(sbuf);
  free(rbuf);
  return messages;
}

static uint64_t splitmix(uint64_t *state)
{
  uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static int draw(uint64_t *state, int n) { return (int)(((__uint128_t)splitmix(state) * (uint64_t)n) >> 64); }

/* The tools time round trips with gettimeofday in whole microseconds. */
static int64_t now_us(void)
{
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

struct loop {
  const struct options *o;
  const struct routes *routes; /* NULL: every rank talks to every rank */
  char *out, *in;
  int64_t messages, relays;
};

static int next_hop(const struct loop *L, int origin, int dst, int cur)
{
  if (!L->routes)
    return dst;
  int next = routes_next(L->routes, origin, dst, cur);
  if (next < 0) {
    fprintf(stderr, "hopbench: rank %d is not on the route %d -> %d\n", cur, origin, dst);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return next;
}

/* One non-blocking send, never waited for (latency_checker frees its requests too);
 * the send buffer is never written after set-up. */
static void post(struct loop *L, int to, int64_t bytes, int tag)
{
  MPI_Request req;
  MPI_Isend(L->out, (int)bytes, MPI_BYTE, to, tag, MPI_COMM_WORLD, &req);
  MPI_Request_free(&req);
  if (TAG_KIND(tag) <= KIND_REPLY)
    L->messages++;
}

/* latency_checker's and RayPlatform's pass loop, as the engine's rank loop runs it: one
 * probe per pass (any source, or the next source of the round-robin list), at most one
 * message received, a relayed message forwarded in the same pass, then the rank's own
 * work; the next request leaves on the pass after the reply arrived.
 * Records: rtt <rank> <count> <whole microseconds>..., relays <per rank>..., elapsed. */
static int64_t run_roundtrip(const struct options *o, const struct routes *routes)
{
  int64_t big = o->request_bytes > o->reply_bytes ? o->request_bytes : o->reply_bytes;
  struct loop L = {o, routes, buffer(big), buffer(big), 0, 0};
  int32_t *rtt = calloc((size_t)o->exchanges, sizeof *rtt);
  uint64_t stream = o->seed * 0x100000001B3ULL + (o->shared_destinations ? 0 : (uint64_t)rank_ + 1);
  int list_len = routes ? (int)(routes->conn_offset[rank_ + 1] - routes->conn_offset[rank_]) : size_;
  const int *list = routes ? routes->conn + routes->conn_offset[rank_] : NULL;
  int rr = 0, waiting = 0, stopped = 0, done_seen = 0, reported = 0;
  int64_t done = 0, sent_at = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t_start = MPI_Wtime();
  while (!stopped) {
    int flag = 0;
    MPI_Status st;
    if (o->round_robin) {
      int source = list ? list[rr] : rr;
      MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
      rr = (rr + 1) % list_len;
    } else {
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    }
    /* Once its own round trips are done, a rank also looks for the end-of-run
     * messages, which round-robin lists may not cover. */
    if (!flag && reported)
      MPI_Iprobe(rank_ == 0 ? MPI_ANY_SOURCE : 0, rank_ == 0 ? TAG(KIND_DONE, 0, 0) : TAG(KIND_STOP, 0, 0),
                 MPI_COMM_WORLD, &flag, &st);
    int reply_now = 0;
    if (flag) {
      int count = 0;
      MPI_Get_count(&st, MPI_BYTE, &count);
      MPI_Recv(L.in, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      int kind = TAG_KIND(st.MPI_TAG), origin = TAG_ORIGIN(st.MPI_TAG), dst = TAG_DST(st.MPI_TAG);
      if (kind == KIND_DONE)
        done_seen++;
      else if (kind == KIND_STOP)
        stopped = 1;
      else if (dst != rank_) {
        L.relays++;
        post(&L, next_hop(&L, origin, dst, rank_), count, st.MPI_TAG);
      } else if (kind == KIND_REQUEST) {
        post(&L, next_hop(&L, rank_, origin, rank_), o->reply_bytes, TAG(KIND_REPLY, rank_, origin));
      } else {
        rtt[done++] = (int32_t)(now_us() - sent_at);
        waiting = 0;
        reply_now = 1;
      }
    }
    if (!reply_now && !waiting && done < o->exchanges) {
      int dst = draw(&stream, size_);
      sent_at = now_us();
      waiting = 1;
      post(&L, next_hop(&L, rank_, dst, rank_), o->request_bytes, TAG(KIND_REQUEST, rank_, dst));
    }
    if (done == o->exchanges && !reported) {
      reported = 1;
      if (rank_ == 0)
        done_seen++;
      else
        post(&L, 0, 0, TAG(KIND_DONE, 0, 0));
    }
    if (rank_ == 0 && done_seen == size_ && !stopped) {
      for (int r = 1; r < size_; r++)
        post(&L, r, 0, TAG(KIND_STOP, 0, 0));
      stopped = 1;
    }
  }
  double elapsed = MPI_Wtime() - t_start;
  int32_t *all = rank_ == 0 ? malloc((size_t)size_ * (size_t)o->exchanges * sizeof *all) : NULL;
  int64_t *relays = rank_ == 0 ? malloc((size_t)size_ * sizeof *relays) : NULL;
  MPI_Gather(rtt, (int)o->exchanges, MPI_INT32_T, all, (int)o->exchanges, MPI_INT32_T, 0, MPI_COMM_WORLD);
  MPI_Gather(&L.relays, 1, MPI_INT64_T, relays, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  double slowest = 0;
  MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank_ == 0) {
    for (int r = 0; r < size_; r++) {
      printf("rtt %d %lld", r, (long long)o->exchanges);
      for (int64_t i = 0; i < o->exchanges; i++)
        printf(" %d", all[(size_t)r * o->exchanges + i]);
      printf("\n");
    }
    printf("relays");
    for (int r = 0; r < size_; r++)
      printf(" %lld", (long long)relays[r]);
    printf("\nelapsed %.9f\n", slowest);
  }
  free(all);
  free(relays);
  free(rtt);
  free(L.out);
  free(L.in);
  return L.messages;
}

/* Every pair's route as hopbench's relays walk it: path <s> <d> <ranks>... */
static int print_routes(const struct options *o)
{
  struct routes r;
  if (!o->routes || o->ranks < 1)
    usage_error("%s", "routes needs --routes FILE and --ranks N");
  if (routes_read(&r, o->routes, o->ranks) != 0)
    return 2;
  for (int s = 0; s < o->ranks; s++)
    for (int d = 0; d < o->ranks; d++) {
      printf("path %d %d %d", s, d, s);
      for (int cur = s, steps = 0; cur != d && steps <= o->ranks; steps++) {
        cur = routes_next(&r, s, d, cur);
        if (cur < 0)
          break;
        printf(" %d", cur);
      }
      printf("\n");
    }
  routes_free(&r);
  return 0;
}

/* Open MPI's TCP transport connects lazily: one empty message each way between every
 * pair, before anything is timed or counted, keeps connection set-up out of the
 * measurements. */
static void connect_all(void)
{
  MPI_Request *req = malloc(2 * (size_t)size_ * sizeof *req);
  char dummy = 0;
  for (int r = 0; r < size_; r++) {
    MPI_Irecv(NULL, 0, MPI_BYTE, r, 0, MPI_COMM_WORLD, &req[2 * r]);
    MPI_Isend(&dummy, 0, MPI_BYTE, r, 0, MPI_COMM_WORLD, &req[2 * r + 1]);
  }
  MPI_Waitall(2 * size_, req, MPI_STATUSES_IGNORE);
  free(req);
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  struct options o;
  parse(&o, argc, argv);
  if (!strcmp(o.workload, "routes")) {
    int status = rank_ == 0 ? print_routes(&o) : 0;
    MPI_Finalize();
    return status;
  }
  if (!strcmp(o.workload, "pingpong") && size_ != 2)
    usage_error("pingpong (osu_latency) runs on exactly 2 ranks%s", "");
  struct routes routes, *rp = NULL;
  if (!strcmp(o.workload, "roundtrip")) {
    void *ub = NULL;
    int found = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found);
    if (size_ > MAX_RANKS || (found && *(int *)ub < TAG(KIND_STOP, MAX_RANKS - 1, MAX_RANKS - 1)))
      usage_error("%s", "roundtrip needs at most 16384 ranks and MPI tags up to 2^31-1");
    if (o.routes) {
      if (routes_read(&routes, o.routes, size_) != 0) {
        MPI_Finalize();
        return 2;
      }
      rp = &routes;
    }
  }
  char name[MPI_MAX_PROCESSOR_NAME] = {0};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  char *names = rank_ == 0 ? malloc((size_t)size_ * MPI_MAX_PROCESSOR_NAME) : NULL;
  MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank_ == 0) {
    printf("hopbench 1 %s ranks %d\n", o.workload, size_);
    for (int r = 0; r < size_; r++)
      printf("host %d %s\n", r, names + (size_t)r * MPI_MAX_PROCESSOR_NAME);
  }
  free(names);
  connect_all();
  int64_t messages;
  if (!strcmp(o.workload, "pingpong"))
    messages = run_pingpong(&o);
  else if (!strcmp(o.workload, "exchange"))
    messages = run_exchange(&o);
  else
    messages = run_roundtrip(&o, rp);
  int64_t total = 0;
  MPI_Reduce(&messages, &total, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank_ == 0) {
    printf("messages %lld\nend\n", (long long)total);
    fflush(stdout);
  }
  if (rp)
    routes_free(rp);
  free(o.sizes);
  MPI_Finalize();
  return 0;
}
