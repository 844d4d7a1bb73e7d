// hopsim's own seeded draws for the seeded random family: the same seed gives the same
// graph and tables everywhere, which rules out std::uniform_int_distribution (its
// algorithm differs between libraries).
#pragma once

#include <cstdint>

namespace hopsim::overlays {

inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() { return mix64(state_ += 0x9E3779B97F4A7C15ULL); }
  // Uniform in [0, bound): reject the lowest 2^64 mod bound values so that every residue
  // is equally likely.
  uint64_t below(uint64_t bound) {
    uint64_t threshold = (0 - bound) % bound;
    for (;;) {
      uint64_t x = next();
      if (x >= threshold) return x % bound;
    }
  }

private:
  uint64_t state_;
};

// A seeded shuffle of 0..m-1 that needs no array (n^2 pairs at 16384 ranks would need
// 1 GiB): a balanced Feistel network over the smallest even number of bits that covers
// m, cycle-walking the values that fall outside.
class SeededOrder {
public:
  SeededOrder(uint64_t m, uint64_t seed) : m_(m) {
    while ((uint64_t(1) << (2 * half_)) < m) ++half_;
    mask_ = (uint64_t(1) << half_) - 1;
    SplitMix64 rng(seed ^ 0x6A09E667F3BCC909ULL);
    for (uint64_t& k : keys_) k = rng.next();
  }
  uint64_t operator()(uint64_t i) const {
    do i = encrypt(i);
    while (i >= m_);
    return i;
  }

private:
  uint64_t encrypt(uint64_t x) const {
    uint64_t left = x >> half_, right = x & mask_;
    for (uint64_t k : keys_) {
      uint64_t next_right = left ^ (mix64(right ^ k) & mask_);
      left = right;
      right = next_right;
    }
    return (left << half_) | right;
  }
  uint64_t m_;
  int half_ = 1;
  uint64_t mask_ = 1;
  uint64_t keys_[4] = {};
};

}  // namespace hopsim::overlays
