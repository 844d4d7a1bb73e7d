// hopsim._engine.collectives: the schedules and Open MPI's decisions, for checks and
// docs (the engine runs them; Python only reads them back).
#include "collectives/schedule.hpp"
#include "collectives/workload.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>

namespace py = pybind11;

void bind_collectives(py::module_& m)
{
  using namespace hopsim::coll;
  auto c = m.def_submodule("collectives", "collectives as schedules of point-to-point messages");
  c.def("algorithms", [](const std::string& name) { return algorithms(collective_from(name)); },
        "the algorithm names --algorithm accepts for a collective");
  c.def("decision", [](const std::string& name, int ranks, int64_t bytes) {
    Collective k = collective_from(name);
    return openmpi_algorithm_name(k, openmpi_decision(k, ranks, bytes));
  }, "Open MPI 4.1's fixed-rule choice for (collective, communicator size, bytes)");
  c.def("schedule", [](const std::string& name, const std::string& algorithm, int ranks, int64_t bytes) {
    Collective k = collective_from(name);
    int64_t element = k == Collective::Allreduce || k == Collective::Reduce ? 4 : 1;
    auto s = make_schedule(k, algorithm, ranks, bytes, element);
    // [rank][step] = (sends [(to, bytes, tag)], receives, reduce)
    py::list out;
    Step step;
    for (int r = 0; r < ranks; r++) {
      py::list steps;
      for (int k2 = 0; k2 < s->steps(r); k2++) {
        s->step(r, k2, step);
        py::list sends;
        for (const Send& x : step.sends)
          sends.append(py::make_tuple(x.to, x.bytes, x.tag));
        steps.append(py::make_tuple(sends, step.recvs, step.reduce));
      }
      out.append(steps);
    }
    return out;
  }, "per rank, per step: ([(to, bytes, tag)], receives, reduce)");
  c.def("messages", [](const std::string& name, const std::string& algorithm, int ranks, int64_t bytes) {
    Collective k = collective_from(name);
    int64_t element = k == Collective::Allreduce || k == Collective::Reduce ? 4 : 1;
    auto s = make_schedule(k, algorithm, ranks, bytes, element);
    int64_t n = 0;
    Step step;
    for (int r = 0; r < ranks; r++)
      for (int k2 = 0; k2 < s->steps(r); k2++) {
        s->step(r, k2, step);
        n += static_cast<int64_t>(step.sends.size());
      }
    return n;
  }, "the point-to-point messages one repetition of the collective sends, all ranks together");
  c.def("openmpi_number", [](const std::string& name, const std::string& algorithm) {
    // coll_tuned_<collective>_algorithm's number for a name (a live run forces it by MCA).
    Collective k = collective_from(name);
    for (int i = 1;; i++) {
      std::string n;
      try {
        n = openmpi_algorithm_name(k, i);
      } catch (const std::invalid_argument&) {
        throw std::invalid_argument(name + " has no Open MPI algorithm " + algorithm);
      }
      if (n == algorithm)
        return i;
    }
  }, "Open MPI 4.1's coll/tuned number of a collective's algorithm (its MCA value)");
  c.def("imb_sizes", [](const std::string& name) {
    return hopsim::CollectiveWorkload::imb_sizes(collective_from(name));
  }, "the message sizes IMB-MPI1 sweeps for the collective");
  c.def("imb_base_repetitions", &hopsim::CollectiveWorkload::imb_base_repetitions,
        "IMB's repetitions before its 10-second rule");
}
