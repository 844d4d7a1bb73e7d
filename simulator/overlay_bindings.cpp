// hopsim._engine's view of the overlays: thin wrappers over overlay.hpp, so that Python
// (hopsim.topologies) asks the one routing implementation instead of having its own.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>

#include "overlay.hpp"
#include "python_tick.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace hopsim {
namespace {

py::dict statistics_dict(const Overlay& o, bool shared_counters, const py::object& progress) {
  RouteStats st;
  try {
    // Seconds at thousands of ranks: the walk runs in the engine's worker thread, this
    // thread waits without the GIL and takes it back briefly at each wake-up
    // (python_tick.hpp), so Ctrl-C stops the walk at once and progress is called here,
    // never from the worker.
    py::gil_scoped_release unlocked;
    st = route_statistics_polled(o, shared_counters, PythonTick(progress));
  } catch (const PythonRaised&) {
    throw py::error_already_set();
  }
  if (not progress.is_none()) progress(1.0);
  return py::dict("arcs"_a = st.arcs, "diameter"_a = st.diameter, "mean_hops"_a = st.mean_hops,
                  "route_lengths"_a = st.route_lengths, "relays"_a = st.relays,
                  "out_degree_counts"_a = st.out_degree_counts);
}

std::vector<std::pair<int, int>> arcs_of(const Overlay& o) {
  std::vector<std::pair<int, int>> arcs;
  for (int u = 0; u < o.size(); ++u)
    for (int v : o.out_neighbors(u)) arcs.emplace_back(u, v);
  return arcs;
}

std::vector<std::vector<int>> routes_from(Overlay& o, int s) {
  std::vector<std::vector<int>> routes;
  routes.reserve(o.size());
  for (int d = 0; d < o.size(); ++d) routes.push_back(route(o, s, d));
  return routes;
}

std::string repr(const Overlay& o) {
  return "<Overlay " + o.label() + ": " + std::to_string(o.size()) + " ranks, degree " + std::to_string(o.degree()) +
         ", " + std::to_string(o.digits()) + " digits>";
}

// A message's origin defaults to where it is: the first hop of the route cur -> dst.
int next_hop_of(Overlay& o, int cur, int dst, std::optional<int> origin) {
  return o.next_hop(origin.value_or(cur), cur, dst);
}

}  // namespace
}  // namespace hopsim

void bind_overlay(py::module_& m) {
  using namespace hopsim;
  py::register_exception<OverlayError>(m, "OverlayError", PyExc_ValueError);

  py::class_<OverlayShape>(m, "OverlayShape", "Ranks and parameters of one size of a family (ranks 0: none).")
      .def_readonly("ranks", &OverlayShape::ranks)
      .def_readonly("degree", &OverlayShape::degree)
      .def_readonly("digits", &OverlayShape::digits)
      .def("__repr__", [](const OverlayShape& s) {
        return "OverlayShape(ranks=" + std::to_string(s.ranks) + ", degree=" + std::to_string(s.degree) +
               ", digits=" + std::to_string(s.digits) + ")";
      });

  py::class_<Overlay>(m, "Overlay", "A software-routed overlay (docs/overlays.md).")
      .def_property_readonly("family", &Overlay::family)
      .def_property_readonly("size", &Overlay::size)
      .def_property_readonly("degree", &Overlay::degree)
      .def_property_readonly("digits", &Overlay::digits)
      .def_property_readonly("label", &Overlay::label)
      .def_property_readonly("has_load_counters", &Overlay::has_load_counters)
      .def_property_readonly("routes_depend_on_origin", &Overlay::routes_depend_on_origin)
      .def("out_neighbors", &Overlay::out_neighbors, "rank"_a)
      .def("in_neighbors", &Overlay::in_neighbors, "rank"_a)
      .def("connection_list", &connection_list, "rank"_a)
      .def("next_hop", &next_hop_of, "cur"_a, "dst"_a, "origin"_a = py::none(),
           "Next rank from cur towards dst for a message sent by origin (default: cur); moves the "
           "load counters of cur (polytope, torus).")
      .def("route", &route, "s"_a, "d"_a, "The ranks from s to d, both included; moves load counters.")
      .def("routes_from", &routes_from, "s"_a, "route(s, d) for d = 0..size-1, in that order.")
      .def("arcs", &arcs_of, "All arcs (u, v), u ascending, then v ascending; self-loops included.")
      .def("fresh", &Overlay::fresh, "The same overlay with its load counters reset.")
      .def("statistics", &statistics_dict, "shared_counters"_a = false, "progress"_a = py::none(),
           "Route statistics over all ordered pairs, computed on a fresh copy: arcs, diameter, mean_hops, "
           "route_lengths (index = hops), relays (per rank), out_degree_counts (index = out-degree). "
           "shared_counters: one load table for all ranks, as RayPlatform's files (polytope, torus). "
           "progress(fraction), if given: the fraction of the pairs walked, at most every 0.2 s and 1 at the end.")
      .def("__repr__", &repr);

  m.def("make_overlay", &make_overlay, "family"_a, "ranks"_a, "degree"_a = 0, "seed"_a = 1,
        py::call_guard<py::gil_scoped_release>(), "Build a family for `ranks` ranks; degree 0: RayPlatform's choice; family ray-random: "
        "RayPlatform's own random graph and routes (seed unused).");
  m.def("make_table_overlay", &make_table_overlay, "ranks"_a, "arcs"_a, "seed"_a = 1, "family"_a = "user",
        py::call_guard<py::gil_scoped_release>(), "Route a user graph (arcs (u, v)) by shortest-path tables.");
  m.def("overlay_shape", &overlay_shape, "family"_a, "ranks"_a, "degree"_a = 0,
        "The shape make_overlay would build, or OverlayError.");
  m.def("overlay_label", &overlay_label, "family"_a, "degree"_a, "digits"_a,
        "The name Overlay.label gives a family built with these parameters.");
  m.def("nearest_sizes", &nearest_sizes, "family"_a, "ranks"_a, "degree"_a = 0,
        "The valid sizes closest to ranks, below and above (ranks 0: none).");
}
