// A time limit an engine polls while it runs, so the dispatch tournament can stop an entrant
// that has already lost instead of running it to completion (a quadratic case would otherwise
// cost the compiler the slow engine's full time, three times).
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>

namespace metile::flow {

// Thrown by an engine whose deadline passed; the tournament catches it. Never reaches users.
struct SolveCancelled : std::exception {
  const char* what() const noexcept override { return "max-flow solve cancelled at its deadline"; }
};

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  Deadline() = default;  // no limit
  explicit Deadline(Clock::time_point at) : at_(at), armed_(true) {}

  // Cheap enough for inner loops: reads the clock on the first call and every 4096th after.
  void tick() {
    if (armed_ && (ticks_++ & 4095) == 0 && Clock::now() > at_) throw SolveCancelled();
  }

 private:
  Clock::time_point at_{};
  bool armed_ = false;
  uint32_t ticks_ = 0;
};

}  // namespace metile::flow
