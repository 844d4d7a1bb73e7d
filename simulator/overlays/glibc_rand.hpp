// The C library draws RayPlatform's random graph was made with, reimplemented so that
// hopsim builds the same graph on any platform:
// - glibc's rand() after srand(seed): the additive feedback generator of random_r with
//   its default state (TYPE_3: 31 words, separation 3). The state is seeded by
//   x[i] = 16807 x[i-1] mod (2^31 - 1) (Schrage's method), the first 310 outputs are
//   discarded, and each output is x[k] = x[k-31] + x[k-3] (mod 2^32) shifted right by 1.
// - libstdc++'s std::random_shuffle(first, last): for i = 1..N-1, swap element i with
//   element rand() % (i + 1).
// tests/cpp/test_overlay.cpp checks both against the C library of the build machine.
#pragma once

#include <cstdint>
#include <utility>

namespace hopsim::overlays {

class GlibcRand {
public:
  explicit GlibcRand(unsigned seed) { srand(seed); }
  void srand(unsigned seed) {
    if (seed == 0) seed = 1;
    state_[0] = seed;
    // glibc keeps the running word in an int32_t: seeds of 2^31 and above start negative.
    int32_t word = static_cast<int32_t>(seed);
    for (int i = 1; i < kDegree; ++i) {
      const long hi = word / 127773, lo = word % 127773;
      word = static_cast<int32_t>(16807 * lo - 2836 * hi);
      if (word < 0) word += 2147483647;
      state_[i] = static_cast<uint32_t>(word);
    }
    front_ = kSeparation;
    rear_ = 0;
    for (int i = 0; i < 10 * kDegree; ++i) rand();
  }
  // In 0..2^31-1, as rand() returns.
  int rand() {
    const uint32_t value = state_[front_] += state_[rear_];
    if (++front_ == kDegree) front_ = 0;
    if (++rear_ == kDegree) rear_ = 0;
    return static_cast<int>(value >> 1);
  }

private:
  static constexpr int kDegree = 31, kSeparation = 3;
  uint32_t state_[kDegree] = {};
  int front_ = kSeparation, rear_ = 0;
};

// std::random_shuffle as libstdc++ writes it, drawing from `rng`.
template <typename T>
void random_shuffle_like_libstdcxx(T* first, T* last, GlibcRand& rng) {
  if (first == last) return;
  for (T* i = first + 1; i != last; ++i) {
    T* j = first + static_cast<long>(rng.rand()) % ((i - first) + 1);
    if (i != j) std::swap(*i, *j);
  }
}

}  // namespace hopsim::overlays
