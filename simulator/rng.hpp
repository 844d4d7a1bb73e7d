// Deterministic random numbers, identical on every platform and standard library
// (std::uniform_int_distribution is implementation-defined, so it is not used).
#pragma once

#include <cstdint>

namespace hopsim {

// splitmix64: a full-period 64-bit generator, good enough for destination draws.
class Rng {
public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next()
  {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound), without modulo bias (Lemire's multiply-and-reject).
  uint64_t below(uint64_t bound)
  {
    __uint128_t m = static_cast<__uint128_t>(next()) * bound;
    auto low = static_cast<uint64_t>(m);
    if (low < bound) {
      uint64_t threshold = -bound % bound;
      while (low < threshold) {
        m = static_cast<__uint128_t>(next()) * bound;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

private:
  uint64_t state_;
};

// Mixes a seed with a stream number, so that per-rank streams are independent.
inline uint64_t stream_seed(uint64_t seed, uint64_t stream)
{
  Rng mix(seed ^ (0xD1B54A32D192ED03ULL * (stream + 1)));
  return mix.next();
}

}  // namespace hopsim
