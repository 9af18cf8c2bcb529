// Structured control flow: tile_range loops with loop-carried values, and if_.
//
//   tile_range(0, n, BLOCK, [&](Value start) { ... });                 // no state
//   Value m = tile_range(0, n, BLOCK, full({BLOCK}, -1e38f, f32),
//                        [&](Value start, Value& m) { m = maximum(m, x); });
//   auto [s, q] = tile_range(0, n, BLOCK, {s0, q0},
//                            [&](Value start, Value& s, Value& q) { s += x; q += x * x; });
//
// The body runs once, at trace time, building the loop body. It updates the carried values
// through its reference parameters, or returns the new values (a Value, a std::array or a
// std::vector). A carried value keeps its type across iterations: state that becomes a
// tile must start as one (full(shape, value, dtype)).
//
//   Value r = if_(c, [&] { return a; }, [&] { return b; });   // c is an i1 scalar
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "metile/dsl/value.h"

namespace metile::dsl {

namespace detail {
// The non-template halves of tile_range and if_ (control.cc).
struct LoopFrame {
  Value induction_var;
  std::vector<Value> carried;
};
LoopFrame begin_loop(const Operand& start, const Operand& end, const Operand& step,
                     const std::vector<Value>& init, const Here& here);
std::vector<Value> end_loop(const std::vector<Value>& yields, const Here& here);
void begin_if(const Value& cond, const Here& here);
void begin_else(const std::vector<Value>& then_yields, const Here& here);
std::vector<Value> end_if(const std::vector<Value>& else_yields, const Here& here);

template <typename T>
struct IsValueArray : std::false_type {};
template <std::size_t N>
struct IsValueArray<std::array<Value, N>> : std::true_type {};

// Region results to and from the builder's vector form.
template <typename R>
std::vector<Value> as_vector(const R& r) {
  if constexpr (std::same_as<R, Value>) {
    return {r};
  } else {
    return std::vector<Value>(r.begin(), r.end());
  }
}
template <typename R>
R from_vector(const std::vector<Value>& v) {
  if constexpr (std::same_as<R, Value>) {
    return v[0];
  } else if constexpr (IsValueArray<R>::value) {
    R r;
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = v[i];
    return r;
  } else {
    return v;
  }
}
template <typename R>
concept RegionResult = std::is_void_v<R> || std::same_as<R, Value> || IsValueArray<R>::value ||
    std::same_as<R, std::vector<Value>>;
}  // namespace detail

// for i in [start, end) by step; bounds are integer scalars or C++ numbers.
template <typename Body>
requires std::invocable<Body&, Value>
void tile_range(const Operand& start, const Operand& end, const Operand& step, Body&& body,
                Here here = Here::current()) {
  detail::LoopFrame frame = detail::begin_loop(start, end, step, {}, here);
  body(frame.induction_var);
  detail::end_loop({}, here);
}

// One carried value: body(i, carried&) updates it or returns the next value.
template <typename Body>
requires std::invocable<Body&, Value, Value&> Value tile_range(const Operand& start,
                                                               const Operand& end,
                                                               const Operand& step,
                                                               const Value& init, Body&& body,
                                                               Here here = Here::current()) {
  detail::LoopFrame frame = detail::begin_loop(start, end, step, {init}, here);
  Value carried = frame.carried[0];
  if constexpr (std::is_void_v<std::invoke_result_t<Body&, Value, Value&>>) {
    body(frame.induction_var, carried);
  } else {
    carried = body(frame.induction_var, carried);
  }
  return detail::end_loop({carried}, here)[0];
}

// N >= 2 carried values from a braced list: body(i, c0&, c1&, ...); `auto [a, b] = ...`.
template <std::size_t N, typename Body>
requires(N >= 2) std::array<Value, N> tile_range(const Operand& start, const Operand& end,
                                                 const Operand& step, const Value (&init)[N],
                                                 Body&& body, Here here = Here::current()) {
  detail::LoopFrame frame =
      detail::begin_loop(start, end, step, std::vector<Value>(init, init + N), here);
  std::vector<Value>& c = frame.carried;
  auto call = [&]<std::size_t... I>(std::index_sequence<I...>) {
    return body(frame.induction_var, c[I]...);
  };
  using R = decltype(call(std::make_index_sequence<N>()));
  if constexpr (std::is_void_v<R>) {
    call(std::make_index_sequence<N>());
  } else {
    static_assert(std::same_as<R, std::array<Value, N>>,
                  "the body returns nothing or std::array<Value, N>");
    c = detail::as_vector(call(std::make_index_sequence<N>()));
  }
  return detail::from_vector<std::array<Value, N>>(detail::end_loop(c, here));
}

// Any number of carried values: body(i, std::vector<Value>& carried).
template <typename Body>
requires std::invocable < Body&, Value, std::vector<Value>
& > std::vector<Value> tile_range(const Operand& start, const Operand& end, const Operand& step,
                                  const std::vector<Value>& init, Body&& body,
                                  Here here = Here::current()) {
  detail::LoopFrame frame = detail::begin_loop(start, end, step, init, here);
  std::vector<Value>& c = frame.carried;
  using R = std::invoke_result_t<Body&, Value, std::vector<Value>&>;
  if constexpr (std::is_void_v<R>) {
    body(frame.induction_var, c);
  } else {
    static_assert(std::same_as<R, std::vector<Value>>,
                  "the body returns nothing or std::vector<Value>");
    c = body(frame.induction_var, c);
  }
  return detail::end_loop(c, here);
}

// if (cond) then_fn(); cond is an i1 scalar.
template <typename Then>
requires std::invocable<Then&>
void if_(const Value& cond, Then&& then_fn, Here here = Here::current()) {
  detail::begin_if(cond, here);
  then_fn();
  detail::begin_else({}, here);
  detail::end_if({}, here);
}

// cond ? then_fn() : else_fn(); both return nothing, a Value, a std::array<Value, N> or a
// std::vector<Value> of matching types, which if_ returns.
template <typename Then, typename Else>
requires std::invocable<Then&> && std::invocable<Else&>
auto if_(const Value& cond, Then&& then_fn, Else&& else_fn, Here here = Here::current())
    -> std::invoke_result_t<Then&> {
  using R = std::invoke_result_t<Then&>;
  static_assert(detail::RegionResult<R>,
                "if_ branches return nothing, a Value, std::array<Value, N> or std::vector<Value>");
  static_assert(std::same_as<R, std::invoke_result_t<Else&>>,
                "both branches of if_ return the same C++ type");
  detail::begin_if(cond, here);
  if constexpr (std::is_void_v<R>) {
    then_fn();
    detail::begin_else({}, here);
    else_fn();
    detail::end_if({}, here);
  } else {
    detail::begin_else(detail::as_vector(then_fn()), here);
    return detail::from_vector<R>(detail::end_if(detail::as_vector(else_fn()), here));
  }
}

}  // namespace metile::dsl
