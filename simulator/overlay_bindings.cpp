// hopsim._engine's view of the overlays: thin wrappers over overlay.hpp, so that Python
// (hopsim.topologies) asks the one routing implementation instead of having its own.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "overlay.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace hopsim {
namespace {

py::dict statistics_dict(const Overlay& o) {
  RouteStats st;
  {
    py::gil_scoped_release unlocked;  // seconds at thousands of ranks
    st = route_statistics(o);
  }
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
  return "<Overlay " + o.family() + ": " + std::to_string(o.size()) + " ranks, degree " + std::to_string(o.degree()) +
         ", " + std::to_string(o.digits()) + " digits>";
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

  py::class_<Overlay>(m, "Overlay", "A software-routed overlay (shared/reference/overlays.md).")
      .def_property_readonly("family", &Overlay::family)
      .def_property_readonly("size", &Overlay::size)
      .def_property_readonly("degree", &Overlay::degree)
      .def_property_readonly("digits", &Overlay::digits)
      .def_property_readonly("has_load_counters", &Overlay::has_load_counters)
      .def("out_neighbors", &Overlay::out_neighbors, "rank"_a)
      .def("in_neighbors", &Overlay::in_neighbors, "rank"_a)
      .def("connection_list", &connection_list, "rank"_a)
      .def("next_hop", &Overlay::next_hop, "cur"_a, "dst"_a,
           "Next rank from cur towards dst; moves the load counters of cur (polytope, torus).")
      .def("route", &route, "s"_a, "d"_a, "The ranks from s to d, both included; moves load counters.")
      .def("routes_from", &routes_from, "s"_a, "route(s, d) for d = 0..size-1, in that order.")
      .def("arcs", &arcs_of, "All arcs (u, v), u ascending, then v ascending; self-loops included.")
      .def("fresh", &Overlay::fresh, "The same overlay with its load counters reset.")
      .def("statistics", &statistics_dict,
           "Route statistics over all ordered pairs, computed on a fresh copy: arcs, diameter, mean_hops, "
           "route_lengths (index = hops), relays (per rank), out_degree_counts (index = out-degree).")
      .def("__repr__", &repr);

  m.def("make_overlay", &make_overlay, "family"_a, "ranks"_a, "degree"_a = 0, "seed"_a = 1,
        py::call_guard<py::gil_scoped_release>(), "Build a family for `ranks` ranks; degree 0: RayPlatform's choice.");
  m.def("make_table_overlay", &make_table_overlay, "ranks"_a, "arcs"_a, "seed"_a = 1, "family"_a = "user",
        py::call_guard<py::gil_scoped_release>(), "Route a user graph (arcs (u, v)) by shortest-path tables.");
  m.def("overlay_shape", &overlay_shape, "family"_a, "ranks"_a, "degree"_a = 0,
        "The shape make_overlay would build, or OverlayError.");
  m.def("nearest_sizes", &nearest_sizes, "family"_a, "ranks"_a, "degree"_a = 0,
        "The valid sizes closest to ranks, below and above (ranks 0: none).");
}
