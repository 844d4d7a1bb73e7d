// Simulations in forked children: SimGrid's engine can be set up once per process, so
// every run gets a process of its own, and a batch keeps up to `jobs` of them running at
// once. All forks happen on the calling thread: forking from other threads meets the
// atfork handlers of libraries loaded beside hopsim (OpenBLAS's joins its own threads,
// and hangs when the fork comes from a thread it does not expect).
#include "engine.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>
#include <new>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace hopsim {

namespace {

bool write_all(int fd, const std::string& data)
{
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// The child's first steps: die with the parent, and leave interrupts to it.
void become_child(pid_t parent)
{
  // SIGKILL when the parent dies (even by SIGKILL), so no simulation outlives it; the
  // getppid() check closes the race of a parent that died before prctl ran.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent)
    _exit(1);
  // Ctrl-C reaches the whole foreground group: the parent decides, and kills this child.
  // Blocked rather than ignored: SimGrid's engine installs its own SIGINT handler (which
  // exits without a result), and a handler does not unblock a blocked signal.
  sigset_t interrupt;
  sigemptyset(&interrupt);
  sigaddset(&interrupt, SIGINT);
  sigprocmask(SIG_BLOCK, &interrupt, nullptr);
}

// The progress counter's shared page, unmapped however the run ends.
class SharedPage {
public:
  SharedPage()
  {
    void* page = mmap(nullptr, sizeof(ProgressCounter), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
      throw std::runtime_error(std::string("mmap: ") + std::strerror(errno));
    counter_ = new (page) ProgressCounter(0);
  }
  ~SharedPage() { munmap(counter_, sizeof(ProgressCounter)); }
  SharedPage(const SharedPage&) = delete;
  SharedPage& operator=(const SharedPage&) = delete;
  ProgressCounter* counter() const { return counter_; }
  double fraction() const { return static_cast<double>(counter_->load(std::memory_order_relaxed)) / kProgressScale; }

private:
  ProgressCounter* counter_;
};

// One run in a child: forked at construction, its result read from a pipe, and killed and
// reaped if it is abandoned (the destructor).
class Child {
public:
  Child(const PlatformSpec& platform, const WorkloadSpec& workload)
  {
    int fds[2];
    if (pipe(fds) != 0)
      throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    pid_t parent = getpid();
    pid_ = fork();
    if (pid_ < 0) {
      close(fds[0]);
      close(fds[1]);
      throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    }
    if (pid_ == 0) {
      become_child(parent);
      close(fds[0]);
      // First byte: 'R' result, 'V' invalid input, 'E' any other failure.
      std::string message;
      try {
        message = "R" + run_simulation(platform, workload, progress_.counter());
      } catch (const std::invalid_argument& ex) {
        message = std::string("V") + ex.what();
      } catch (const std::exception& ex) {
        message = std::string("E") + ex.what();
      }
      bool ok = write_all(fds[1], message);
      close(fds[1]);
      _exit(ok ? 0 : 1);
    }
    close(fds[1]);
    fd_ = fds[0];
  }
  ~Child()
  {
    if (fd_ >= 0)
      close(fd_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  int fd() const { return fd_; }
  double fraction() const { return progress_.fraction(); }

  // Reads what the pipe holds; false once the child has closed it.
  bool read_some()
  {
    char buf[65536];
    ssize_t n = read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      return true;
    if (n <= 0)
      return false;
    data_.append(buf, static_cast<size_t>(n));
    return true;
  }

  // Reaps the child: its outcome, with its peak memory appended to a result.
  RunOutcome finish()
  {
    close(fd_);
    fd_ = -1;
    int status = 0;
    struct rusage usage {};
    while (wait4(pid_, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    if (data_.empty()) {
      if (WIFSIGNALED(status))
        return {'E', "the simulation died with signal " + std::to_string(WTERMSIG(status))};
      return {'E', "the simulation ended without a result"};
    }
    char tag = data_[0];
    std::string body = data_.substr(1);
    if (tag == 'V')
      return {'V', body};
    if (tag != 'R')
      return {'E', "simulation failed: " + body};
    body.pop_back();
    body += ",\"peak_rss_kib\":" + std::to_string(usage.ru_maxrss) + "}";
    return {'R', body};
  }

private:
  SharedPage progress_;  // before the fork: the child writes, the parent reads
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string data_;
};

}  // namespace

std::vector<RunOutcome> simulate_batch(const std::vector<RunRequest>& runs, int jobs,
                                       const std::function<void(double)>& tick)
{
  const size_t n = runs.size();
  std::vector<RunOutcome> out(n, RunOutcome{'N', ""});
  if (jobs < 1)
    jobs = 1;
  // Running children by index; a null entry is a run not started or already reaped.
  std::vector<std::unique_ptr<Child>> running(n);
  size_t next = 0, live = 0, done = 0;
  size_t first_failed = n;  // nothing after it runs: the outcome is the same for any jobs
  for (;;) {
    while (live < static_cast<size_t>(jobs) && next < first_failed) {
      try {
        validate(runs[next].platform, runs[next].workload);  // fail fast, in this process
      } catch (const std::invalid_argument& ex) {
        out[next] = {'V', ex.what()};
        first_failed = next;
        break;
      }
      running[next] = std::make_unique<Child>(runs[next].platform, runs[next].workload);
      ++next;
      ++live;
    }
    if (live == 0)
      break;
    std::vector<struct pollfd> fds;
    std::vector<size_t> index;
    double fraction = static_cast<double>(done);
    for (size_t i = 0; i < n; ++i) {
      if (running[i]) {
        fds.push_back({running[i]->fd(), POLLIN, 0});
        index.push_back(i);
        fraction += running[i]->fraction();
      }
    }
    // Wake at least every 50 ms, so that an interrupt is handled while the children run.
    int ready = poll(fds.data(), fds.size(), kProgressPollMs);
    if (tick)
      tick(fraction / static_cast<double>(n));  // may throw: every child is killed as it leaves
    if (ready <= 0)
      continue;
    for (size_t k = 0; k < fds.size(); ++k) {
      size_t i = index[k];
      if (fds[k].revents == 0 || not running[i] || running[i]->read_some())
        continue;
      out[i] = running[i]->finish();
      running[i].reset();
      --live;
      ++done;
      if (out[i].tag != 'R' && i < first_failed) {
        first_failed = i;
        for (size_t j = i + 1; j < n; ++j) {
          if (running[j]) {
            running[j].reset();  // killed: after a failure, only earlier runs matter
            --live;
          }
        }
      }
    }
  }
  // An interrupt that came as the last child ended still wins over its result.
  if (tick)
    tick(1.0);
  return out;
}

std::string simulate(const PlatformSpec& platform, const WorkloadSpec& workload,
                     const std::function<void(double)>& tick)
{
  validate(platform, workload);  // fail fast, in the caller's process
  RunOutcome r = simulate_batch({RunRequest{platform, workload}}, 1, tick)[0];
  if (r.tag == 'V')
    throw std::invalid_argument(r.text);
  if (r.tag != 'R')
    throw std::runtime_error(r.text);
  return r.text;
}

}  // namespace hopsim
