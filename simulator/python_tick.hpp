// The tick the bindings hand to the engine's waiting loops (simulate() and
// route_statistics_polled()), which call it on the Python caller's thread every
// kProgressPollMs: it takes the GIL briefly to run Python's signal handlers, so that
// Ctrl-C stops a run at once, and passes the fraction done to the caller's progress
// callable at most every 0.2 s (the wake-ups would redraw a bar faster than anyone
// reads it). The engine's own workers never call it.
#pragma once

#include <pybind11/pybind11.h>

#include <chrono>

namespace hopsim {

// Thrown through the engine with the Python error set (KeyboardInterrupt, whatever a
// signal handler or progress raised); the binding turns it back into that error once it
// holds the GIL again: catch (const PythonRaised&) { throw pybind11::error_already_set(); }
struct PythonRaised {};

class PythonTick {
public:
  explicit PythonTick(const pybind11::object& progress) : progress_(&progress) {}

  void operator()(double fraction)
  {
    pybind11::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0)
      throw PythonRaised{};
    auto now = std::chrono::steady_clock::now();
    if (progress_->is_none() || now - last_ < kEvery)
      return;
    last_ = now;
    try {
      (*progress_)(fraction);
    } catch (pybind11::error_already_set& e) {
      e.restore();
      throw PythonRaised{};
    }
  }

private:
  static constexpr std::chrono::milliseconds kEvery{200};
  const pybind11::object* progress_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace hopsim
