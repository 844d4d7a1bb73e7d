// Shift routing on words of D digits in base b, shared by de Bruijn and Kautz
// (docs/overlays.md, "Shift routing"): the largest overlap ov between the tail of cur and
// the head of dst, then one left shift bringing in digit ov of dst. Computed on the fly:
// no table, whatever the size.
#pragma once

#include <cstdint>
#include <vector>

namespace hopsim::overlays {

// pow[k] = b^k for k = 0..D.
inline int64_t shift_overlap(int64_t cur, int64_t dst, int D, const std::vector<int64_t>& pow) {
  for (int k = D - 1; k >= 1; --k)
    if (cur / pow[D - k] == dst % pow[k]) return k;
  return 0;
}

inline int64_t shift_next(int64_t cur, int64_t dst, int64_t b, int D, const std::vector<int64_t>& pow) {
  const int64_t ov = shift_overlap(cur, dst, D, pow);
  return cur / b + (dst / pow[ov]) % b * pow[D - 1];
}

}  // namespace hopsim::overlays
