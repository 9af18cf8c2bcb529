// SIMD-group functions. Each is a rendezvous of the lanes that exist in the SIMD group:
// every lane deposits its operand, and each computes its result from all deposits.
// Reductions and scans combine lanes in lane order, so results are deterministic.
// Reading a lane that does not exist (a partial SIMD group, or an index >= 32) is
// reported as an error instead of returning garbage.
#pragma once

#include <cstdio>

#include "math_functions.h"
#include "sync.h"

namespace metal {
namespace detail {

class simd_operands {
 public:
  template <class T>
  simd_operands(const T& value, const char* op, int line) : op_(op), line_(line) {
    static_assert(sizeof(T) <= METILE_HOST_SIMD_SLOT_BYTES, "SIMD operand too large");
    view_ = host_runtime->simd_rendezvous(&value, sizeof(T), op, line);
  }
  unsigned lane() const { return view_.lane; }
  // The result all lanes share, computed by `compute` in the first lane that asks.
  template <class T, class F>
  T shared(F compute) const {
    static_assert(sizeof(T) <= METILE_HOST_SIMD_SLOT_BYTES, "SIMD result too large");
    T value;
    if (*view_.shared_ready) {
      std::memcpy(&value, view_.shared, sizeof(T));
    } else {
      value = compute();
      std::memcpy(view_.shared, &value, sizeof(T));
      *view_.shared_ready = 1;
    }
    return value;
  }
  unsigned lane_count() const { return view_.lane_count; }
  template <class T>
  T at(unsigned lane) const {
    if (lane >= view_.lane_count) fail_missing_lane(lane);
    T value;
    std::memcpy(&value, view_.slots + lane * METILE_HOST_SIMD_SLOT_BYTES, sizeof(T));
    return value;
  }

 private:
  [[noreturn]] void fail_missing_lane(unsigned lane) const {
    char message[256];
    std::snprintf(message, sizeof message,
                  "%s (line %d): lane %u reads lane %u, which does not exist in its SIMD group "
                  "of %u threads",
                  op_, line_, view_.lane, lane, view_.lane_count);
    host_runtime->fail(message);
    __builtin_unreachable();
  }
  const char* op_;
  int line_;
  MetileHostSimdView view_;
};

// Computed once per SIMD group: every lane gets the same value.
template <class T, class Combine>
T simd_reduce(const simd_operands& lanes, Combine combine) {
  return lanes.shared<T>([&] {
    T acc = lanes.at<T>(0);
    for (unsigned l = 1; l < lanes.lane_count(); ++l) acc = combine(acc, lanes.at<T>(l));
    return acc;
  });
}

}  // namespace detail

template <class T>
T simd_shuffle(T value, ushort lane, int line = __builtin_LINE()) {
  return detail::simd_operands(value, "simd_shuffle", line).at<T>(lane);
}
template <class T>
T simd_broadcast(T value, ushort lane, int line = __builtin_LINE()) {
  return detail::simd_operands(value, "simd_broadcast", line).at<T>(lane);
}
template <class T>
T simd_broadcast_first(T value, int line = __builtin_LINE()) {
  return detail::simd_operands(value, "simd_broadcast_first", line).at<T>(0);
}
template <class T>
T simd_shuffle_xor(T value, ushort mask, int line = __builtin_LINE()) {
  detail::simd_operands lanes(value, "simd_shuffle_xor", line);
  return lanes.at<T>(lanes.lane() ^ mask);
}
// Lanes whose source lies outside 0..31 keep their own value (MSL semantics).
template <class T>
T simd_shuffle_up(T value, ushort delta, int line = __builtin_LINE()) {
  detail::simd_operands lanes(value, "simd_shuffle_up", line);
  return lanes.lane() < delta ? value : lanes.at<T>(lanes.lane() - delta);
}
template <class T>
T simd_shuffle_down(T value, ushort delta, int line = __builtin_LINE()) {
  detail::simd_operands lanes(value, "simd_shuffle_down", line);
  const unsigned source = lanes.lane() + delta;
  return source >= METILE_HOST_SIMD_WIDTH ? value : lanes.at<T>(source);
}
template <class T>
T simd_shuffle_rotate_down(T value, ushort delta, int line = __builtin_LINE()) {
  detail::simd_operands lanes(value, "simd_shuffle_rotate_down", line);
  return lanes.at<T>((lanes.lane() + delta) % lanes.lane_count());
}
template <class T>
T simd_shuffle_rotate_up(T value, ushort delta, int line = __builtin_LINE()) {
  detail::simd_operands lanes(value, "simd_shuffle_rotate_up", line);
  const unsigned n = lanes.lane_count();
  return lanes.at<T>((lanes.lane() + n - delta % n) % n);
}

template <class T>
T simd_sum(T value, int line = __builtin_LINE()) {
  return detail::simd_reduce<T>(detail::simd_operands(value, "simd_sum", line),
                                [](T a, T b) { return T(a + b); });
}
template <class T>
T simd_product(T value, int line = __builtin_LINE()) {
  return detail::simd_reduce<T>(detail::simd_operands(value, "simd_product", line),
                                [](T a, T b) { return T(a * b); });
}
template <class T>
T simd_max(T value, int line = __builtin_LINE()) {
  return detail::simd_reduce<T>(detail::simd_operands(value, "simd_max", line),
                                [](T a, T b) { return max(a, b); });
}
template <class T>
T simd_min(T value, int line = __builtin_LINE()) {
  return detail::simd_reduce<T>(detail::simd_operands(value, "simd_min", line),
                                [](T a, T b) { return min(a, b); });
}
template <class T>
T simd_and(T value, int line = __builtin_LINE()) {
  return detail::simd_reduce<T>(detail::simd_operands(value, "simd_and", line),
                                [](T a, T b) { return T(a & b); });
}
template <class T>
T simd_or(T value, int line = __builtin_LINE()) {
  return detail::simd_reduce<T>(detail::simd_operands(value, "simd_or", line),
                                [](T a, T b) { return T(a | b); });
}
template <class T>
T simd_xor(T value, int line = __builtin_LINE()) {
  return detail::simd_reduce<T>(detail::simd_operands(value, "simd_xor", line),
                                [](T a, T b) { return T(a ^ b); });
}

template <class T>
T simd_prefix_exclusive_sum(T value, int line = __builtin_LINE()) {
  detail::simd_operands lanes(value, "simd_prefix_exclusive_sum", line);
  T acc = T(0);
  for (unsigned l = 0; l < lanes.lane(); ++l) acc = T(acc + lanes.at<T>(l));
  return acc;
}
template <class T>
T simd_prefix_inclusive_sum(T value, int line = __builtin_LINE()) {
  detail::simd_operands lanes(value, "simd_prefix_inclusive_sum", line);
  T acc = lanes.at<T>(0);
  for (unsigned l = 1; l <= lanes.lane(); ++l) acc = T(acc + lanes.at<T>(l));
  return acc;
}
template <class T>
T simd_prefix_exclusive_product(T value, int line = __builtin_LINE()) {
  detail::simd_operands lanes(value, "simd_prefix_exclusive_product", line);
  T acc = T(1);
  for (unsigned l = 0; l < lanes.lane(); ++l) acc = T(acc * lanes.at<T>(l));
  return acc;
}

// simd_ballot's result: one bit per lane; existing lanes only.
struct simd_vote {
  using vote_t = ulong;
  vote_t bits = 0;
  vote_t existing = 0;
  explicit operator vote_t() const { return bits; }
  bool all() const { return bits == existing; }
  bool any() const { return bits != 0; }
};
inline simd_vote simd_ballot(bool predicate, int line = __builtin_LINE()) {
  detail::simd_operands lanes(predicate, "simd_ballot", line);
  simd_vote vote;
  for (unsigned l = 0; l < lanes.lane_count(); ++l) {
    vote.existing |= 1ul << l;
    if (lanes.at<bool>(l)) vote.bits |= 1ul << l;
  }
  return vote;
}
inline bool simd_all(bool predicate, int line = __builtin_LINE()) {
  return simd_ballot(predicate, line).all();
}
inline bool simd_any(bool predicate, int line = __builtin_LINE()) {
  return simd_ballot(predicate, line).any();
}
// Every existing lane is active in the emulator, so lane 0 is the first.
inline bool simd_is_first() {
  return detail::host_runtime->simd_lane() == 0;
}

}  // namespace metal
