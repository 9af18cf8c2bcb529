// Tile IR -> Tile IR, before expand_tensor_access: a descriptor GEMM (metile_kernels.gemm's
// canonical K loop) becomes one descriptor_matmul op that a tensor backend lowers whole,
// reading its operands from device memory itself (seed 002, "Pointwise GEMM epilogues").
//
// The shape it takes, at the kernel's top level:
//   acc = for k in [0, inner) step BK, carrying zeros((BM, BN), f32):
//           yield dot(A.load((row[:, None], (k + arange(BK))[None, :])),
//                     B.load(((k + arange(BK))[:, None], column[None, :])), acc)
//   C.store((row[:, None], column[None, :]), epilogue(acc))
// with row = r0 + arange(BM), column = c0 + arange(BN), A [rows, inner], B [inner, columns]
// and C [rows, columns] row-major descriptors (unit inner stride), and an epilogue built from
// the stored value's pure SSA dependencies: elementwise arithmetic, comparisons, selections,
// float casts and unary math of the accumulator, constants and runtime scalar parameters.
// The epilogue becomes the op's region; the loop and the store go (dce removes the rest).
//
// It runs only where plan_schedule will pick the tensor backend (tensor_backend_wanted). With
// backend='tensor_ops' required, a kernel of another shape is NotSupported naming the op that
// does not fit; with backend='auto' it is returned unchanged for the SIMD-group path.
#pragma once

#include <optional>
#include <string>

#include "metile/ir/pass_result.h"
#include "metile/lower/lower.h"
#include "metile/schedule/schedule.h"
#include "metile/target/target.h"

namespace metile::lower {

// Whether plan_schedule may choose the tensor backend: the target has Metal 4 tensor ops and
// the Schedule requires tensor_ops, or leaves the backend automatic without a control that
// only the SIMD-group path honours (an explicit vector width, double_buffer=True,
// staging='threadgroup').
bool tensor_backend_wanted(const target::Target& target,
                           const std::optional<schedule::Schedule>& schedule);

// `unformed`, when given, receives the epilogue of a descriptor GEMM the pass leaves for the
// SIMD-group path (which runs it on the accumulator's registers before the store).
// `declined`, when given, receives why a kernel with a dot was not formed although the tensor
// backend was wanted automatically (the op and the reason), for plan_schedule's reason.
ir::PassResult form_descriptor_matmul(ir::Kernel tile, const target::Target& target,
                                      const std::optional<schedule::Schedule>& schedule,
                                      std::optional<FusedEpilogue>* unformed = nullptr,
                                      std::string* declined = nullptr);

}  // namespace metile::lower
