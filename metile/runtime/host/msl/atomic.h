// <metal_atomic>'s subset for emitted atomics (codegen/atomic_dialect.cc): atomic_int,
// atomic_uint and atomic_float over plain memory, their relaxed read-modify-writes and
// atomic_thread_fence. The emulator runs threadgroups on several OS threads, so each update is
// a real atomic (GCC's __atomic builtins, sequentially consistent: at least as strong as any
// order the kernel asks for). They are not instrumented in a race-checking build: atomics do
// not race, and the module links no sanitizer runtime for its atomic hooks.
#pragma once

#include <cstring>

#include "sync.h"

namespace metal {

enum memory_order { memory_order_relaxed, memory_order_seq_cst };
enum thread_scope {
  thread_scope_thread,
  thread_scope_simdgroup,
  thread_scope_threadgroup,
  thread_scope_device
};

#define METILE_ATOMIC inline __attribute__((no_sanitize("thread")))

template <class T>
struct metile_atomic {
  T value;
};
using atomic_int = metile_atomic<int>;
using atomic_uint = metile_atomic<unsigned int>;
using atomic_float = metile_atomic<float>;

METILE_ATOMIC void atomic_thread_fence(mem_flags, memory_order,
                                       thread_scope = thread_scope_device) {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

template <class T>
METILE_ATOMIC T atomic_fetch_add_explicit(metile_atomic<T>* a, T v, memory_order) {
  return __atomic_fetch_add(&a->value, v, __ATOMIC_SEQ_CST);
}
// Floats add by compare-and-swap of their bits.
METILE_ATOMIC float atomic_fetch_add_explicit(metile_atomic<float>* a, float v, memory_order) {
  unsigned int* bits = reinterpret_cast<unsigned int*>(&a->value);
  unsigned int old = __atomic_load_n(bits, __ATOMIC_SEQ_CST);
  for (;;) {
    float f;
    std::memcpy(&f, &old, 4);
    const float sum = f + v;
    unsigned int desired;
    std::memcpy(&desired, &sum, 4);
    if (__atomic_compare_exchange_n(bits, &old, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
      return f;
  }
}
template <class T>
METILE_ATOMIC T atomic_fetch_max_explicit(metile_atomic<T>* a, T v, memory_order) {
  T old = __atomic_load_n(&a->value, __ATOMIC_SEQ_CST);
  while (old < v && !__atomic_compare_exchange_n(&a->value, &old, v, false, __ATOMIC_SEQ_CST,
                                                 __ATOMIC_SEQ_CST)) {
  }
  return old;
}
template <class T>
METILE_ATOMIC T atomic_fetch_min_explicit(metile_atomic<T>* a, T v, memory_order) {
  T old = __atomic_load_n(&a->value, __ATOMIC_SEQ_CST);
  while (v < old && !__atomic_compare_exchange_n(&a->value, &old, v, false, __ATOMIC_SEQ_CST,
                                                 __ATOMIC_SEQ_CST)) {
  }
  return old;
}
template <class T>
METILE_ATOMIC T atomic_fetch_and_explicit(metile_atomic<T>* a, T v, memory_order) {
  return __atomic_fetch_and(&a->value, v, __ATOMIC_SEQ_CST);
}
template <class T>
METILE_ATOMIC T atomic_fetch_or_explicit(metile_atomic<T>* a, T v, memory_order) {
  return __atomic_fetch_or(&a->value, v, __ATOMIC_SEQ_CST);
}
template <class T>
METILE_ATOMIC T atomic_fetch_xor_explicit(metile_atomic<T>* a, T v, memory_order) {
  return __atomic_fetch_xor(&a->value, v, __ATOMIC_SEQ_CST);
}
template <class T>
METILE_ATOMIC T atomic_exchange_explicit(metile_atomic<T>* a, T v, memory_order) {
  T old;
  __atomic_exchange(&a->value, &v, &old, __ATOMIC_SEQ_CST);
  return old;
}
template <class T>
METILE_ATOMIC bool atomic_compare_exchange_weak_explicit(metile_atomic<T>* a, T* expected,
                                                         T desired, memory_order, memory_order) {
  return __atomic_compare_exchange(&a->value, expected, &desired, true, __ATOMIC_SEQ_CST,
                                   __ATOMIC_SEQ_CST);
}

#undef METILE_ATOMIC

}  // namespace metal
