// Graphs given by their arcs (random graphs, user graphs): compressed adjacency rows and
// breadth-first distances, shared by the table-routed families.
#pragma once

#include "common.hpp"

namespace hopsim::overlays {

struct Adjacency {  // compressed rows, each row ascending and without duplicates
  std::vector<int> start, target;
  const int* begin(int r) const { return target.data() + start[r]; }
  const int* end(int r) const { return target.data() + start[r + 1]; }
};

Adjacency adjacency(int n, std::vector<std::pair<int, int>> arcs);

constexpr uint16_t kUnset = 0xFFFF;

// dist[root * n + u]: hops between root and u along `rows` (out-arcs: from root; in-arcs:
// to root), by one breadth-first search per root. Throws OverlayError naming a pair that
// is not connected.
std::vector<uint16_t> all_distances(const std::string& family, int n, const Adjacency& rows, bool rows_are_in_arcs);

// The lowest rank that rank 0 cannot reach over symmetric arcs, or -1.
int first_unreachable(int n, const std::vector<std::pair<int, int>>& arcs);

}  // namespace hopsim::overlays
