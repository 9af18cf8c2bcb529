#include <metal_stdlib>
using namespace metal;

#include <metal_tensor>
#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>

static inline void gemm_f16_body(
    device const half* left,
    device const half* right,
    device half* output,
    int rows,
    int columns,
    int inner,
    threadgroup uchar* tg_mem,
    uint3 threadgroup_position_in_grid,
    uint3 threadgroups_per_grid,
    uint3 thread_position_in_threadgroup,
    uint3 threads_per_threadgroup,
    uint simd_lane,
    uint simd_group) {
  const int v7 = int(threadgroup_position_in_grid.x);
  const int v8 = 64;
  const int v9 = v7 * v8;
  const int v10 = int(threadgroup_position_in_grid.y);
  const int v11 = 32;
  const int v12 = v10 * v11;
  {
    constexpr auto metile_mpp_descriptor = mpp::tensor_ops::matmul2d_descriptor(64, 32, static_cast<int>(metal::dynamic_extent), false, false, false, mpp::tensor_ops::matmul2d_descriptor::mode::multiply);
    mpp::tensor_ops::matmul2d<metile_mpp_descriptor, metal::execution_simdgroups<8>> metile_mpp_op;
    metal::tensor<device half, metal::dextents<int32_t, 2>, metal::tensor_inline> metile_mpp_a(const_cast<device half*>(left), metal::dextents<int32_t, 2>(inner, rows), metal::array<int32_t, 2>({1, inner}));
    metal::tensor<device half, metal::dextents<int32_t, 2>, metal::tensor_inline> metile_mpp_b(const_cast<device half*>(right), metal::dextents<int32_t, 2>(columns, inner), metal::array<int32_t, 2>({1, columns}));
    metal::tensor<device half, metal::dextents<int32_t, 2>, metal::tensor_inline> metile_mpp_c(const_cast<device half*>(output), metal::dextents<int32_t, 2>(columns, rows), metal::array<int32_t, 2>({1, columns}));
    auto metile_mpp_a_tile = metile_mpp_a.slice(0, v9);
    auto metile_mpp_b_tile = metile_mpp_b.slice(v12, 0);
    auto metile_mpp_c_tile = metile_mpp_c.slice(v12, v9);
    auto metile_mpp_acc = metile_mpp_op.template get_destination_cooperative_tensor<decltype(metile_mpp_a_tile), decltype(metile_mpp_b_tile), float>();
    metile_mpp_op.run(metile_mpp_a_tile, metile_mpp_b_tile, metile_mpp_acc);
    auto metile_mpp_out = metile_mpp_op.template get_destination_cooperative_tensor<decltype(metile_mpp_a_tile), decltype(metile_mpp_b_tile), half>();
    for (int metile_mpp_element = 0; metile_mpp_element < int(metile_mpp_acc.get_capacity()); ++metile_mpp_element) {
      if (!metile_mpp_acc.is_valid_element(metile_mpp_element)) continue;
      const float acc = metile_mpp_acc[metile_mpp_element];
      const half v14 = static_cast<half>(acc);
      metile_mpp_out[metile_mpp_element] = v14;
    }
    metile_mpp_out.store(metile_mpp_c_tile);
  }
}

kernel void gemm_f16(
    device const half* left [[buffer(0)]],
    device const half* right [[buffer(1)]],
    device half* output [[buffer(2)]],
    constant int& rows [[buffer(3)]],
    constant int& columns [[buffer(4)]],
    constant int& inner [[buffer(5)]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint simd_lane [[thread_index_in_simdgroup]],
    uint simd_group [[simdgroup_index_in_threadgroup]]) {
  threadgroup uchar tg_mem[16] __attribute__((aligned(16)));
  gemm_f16_body(left, right, output, rows, columns, inner, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
