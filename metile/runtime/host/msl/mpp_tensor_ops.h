// Metal 4 tensors and MetalPerformancePrimitives' matmul2d, exactly the subset the emitter uses
// (codegen/mpp_dialect.cc): rank-2 tensor_inline views over buffers with extents and strides
// listed innermost first, slice(), a matmul2d_descriptor of M x N with a dynamic K, matmul2d
// on execution_simdgroups<N>, and its destination cooperative tensor.
//
// A cooperative destination spreads the M x N tile over the N * 32 threads that run the
// product: thread t holds the elements t, t + N * 32, ... of the tile in row-major order
// (Apple's mapping is not published; the emitted code never relies on one). run() computes
// each of the calling thread's elements as an f32 sum over K of products read from the views,
// 0 outside a view's extents; store() writes the elements inside the view's extents only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "host_runtime_abi.h"
#include "scalar_types.h"
#include "sync.h"

namespace metal {

inline constexpr size_t dynamic_extent = static_cast<size_t>(-1);

template <class T, size_t N>
struct array {
  T elements[N];
  T operator[](size_t i) const { return elements[i]; }
};

template <class Index, size_t Rank>
struct dextents {
  static_assert(Rank == 2, "the host emulator implements rank-2 tensors");
  Index extent[Rank];
  dextents(Index inner, Index outer) : extent{inner, outer} {}
};

struct tensor_inline {};

template <size_t SimdGroups>
struct execution_simdgroups {
  static constexpr unsigned threads = SimdGroups * METILE_HOST_SIMD_WIDTH;
};

template <class T, class Extents, class Kind = tensor_inline>
struct tensor {
  T* data;
  int32_t extent[2];  // innermost first
  int32_t stride[2];

  tensor(T* base, Extents extents, array<int32_t, 2> strides)
      : data(base), extent{extents.extent[0], extents.extent[1]}, stride{strides[0], strides[1]} {}

  // The view from (i0, i1) on, with the extents left (none when it starts past them).
  tensor slice(int32_t i0, int32_t i1) const {
    tensor s = *this;
    s.data = data + static_cast<ptrdiff_t>(i0) * stride[0] + static_cast<ptrdiff_t>(i1) * stride[1];
    s.extent[0] = extent[0] > i0 ? extent[0] - i0 : 0;
    s.extent[1] = extent[1] > i1 ? extent[1] - i1 : 0;
    return s;
  }
  bool contains(int32_t i0, int32_t i1) const {
    return i0 >= 0 && i1 >= 0 && i0 < extent[0] && i1 < extent[1];
  }
  T& at(int32_t i0, int32_t i1) const {
    return data[static_cast<ptrdiff_t>(i0) * stride[0] + static_cast<ptrdiff_t>(i1) * stride[1]];
  }
  float read(int32_t i0, int32_t i1) const { return contains(i0, i1) ? float(at(i0, i1)) : 0.0f; }
};

}  // namespace metal

namespace mpp::tensor_ops {

struct matmul2d_descriptor {
  enum class mode { multiply, multiply_accumulate };
  int m, n, k;
  bool transpose_left, transpose_right, relaxed_precision;
  mode matmul_mode;

  constexpr matmul2d_descriptor(int m_, int n_, int k_ = static_cast<int>(metal::dynamic_extent),
                                bool transpose_left_ = false, bool transpose_right_ = false,
                                bool relaxed_precision_ = false, mode mode_ = mode::multiply)
      : m(m_),
        n(n_),
        k(k_),
        transpose_left(transpose_left_),
        transpose_right(transpose_right_),
        relaxed_precision(relaxed_precision_),
        matmul_mode(mode_) {}
};

template <class E, int M, int N, unsigned Threads>
struct cooperative_tensor {
  static constexpr int kCapacity = static_cast<int>((M * N + Threads - 1) / Threads);
  E elements[kCapacity];

  int get_capacity() const { return kCapacity; }
  // Element i of the calling thread: logical index thread + i * Threads of the tile.
  static int logical_index(int i) {
    return static_cast<int>(metal::detail::host_runtime->thread_index()) +
           i * static_cast<int>(Threads);
  }
  bool is_valid_element(int i) const { return i >= 0 && i < kCapacity && logical_index(i) < M * N; }
  E& operator[](int i) { return elements[i]; }
  const E& operator[](int i) const { return elements[i]; }

  template <class View>
  void store(const View& destination) const {
    for (int i = 0; i < kCapacity; ++i) {
      if (!is_valid_element(i)) continue;
      const int row = logical_index(i) / N, column = logical_index(i) % N;
      if (destination.contains(column, row)) destination.at(column, row) = elements[i];
    }
  }
};

template <matmul2d_descriptor Descriptor, class Scope>
struct matmul2d {
  static_assert(!Descriptor.transpose_left && !Descriptor.transpose_right,
                "the host emulator implements matmul2d without transposes");
  static_assert(Descriptor.matmul_mode == matmul2d_descriptor::mode::multiply,
                "the host emulator implements matmul2d's multiply mode");
  template <class E>
  using destination = cooperative_tensor<E, Descriptor.m, Descriptor.n, Scope::threads>;

  template <class A, class B, class E>
  destination<E> get_destination_cooperative_tensor() const {
    return {};
  }

  // C = A * B over the K extent of A (B reads 0 past its own), each sum in f32.
  template <class A, class B, class E>
  void run(const A& a, const B& b, destination<E>& c) const {
    const int32_t inner =
        Descriptor.k == static_cast<int>(metal::dynamic_extent) ? a.extent[0] : Descriptor.k;
    for (int i = 0; i < c.get_capacity(); ++i) {
      if (!c.is_valid_element(i)) continue;
      const int index = destination<E>::logical_index(i);
      const int row = index / Descriptor.n, column = index % Descriptor.n;
      float sum = 0.0f;
      for (int32_t k = 0; k < inner; ++k) sum += a.read(k, row) * b.read(column, k);
      c[i] = E(sum);
    }
  }
};

}  // namespace mpp::tensor_ops
