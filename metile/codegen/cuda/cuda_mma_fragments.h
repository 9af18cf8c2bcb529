// mma.sync's native fragments in CUDA (docs/fragments.md): the m16n8k16 operands, a 16x16 A
// and a 16x8 B of f16 or bf16 loaded from threadgroup memory by ldmatrix, and the 16x8 f32
// accumulator, each in mma.sync's own lane map, so a multiply-accumulate is one instruction
// with no data movement. The lowering takes them for 16-bit dots on targets with mma.sync
// (lower_dot_simdgroup.cc); 8x8 fragments stay with cuda_matrix.h.
#pragma once

#include <string>

#include "metile/codegen/prelude.h"
#include "metile/ir/types.h"

namespace metile::codegen::cuda_mma_fragments {

// Whether fragment type t is one of these shapes rather than 8x8.
bool is_native(const ir::Type& t);
// "metile_mma_a<metile_bfloat16>"; `element` is the dialect's name of t's dtype.
std::string type(const ir::Type& t, const std::string& element);
// Records the fragment types in `prelude`.
void declare(Prelude& prelude);
// Element `index` of this lane's share of accumulator `value` (operands have none).
std::string element(const ir::Type& t, const std::string& value, const std::string& index);
// An accumulator whose every element is `value`.
std::string fill(const ir::Type& t, const std::string& value);
// The statement of matrix_load (store = false) or matrix_store, with its helper.
std::string access(bool store, const ir::Type& t, const std::string& element,
                   const std::string& fragment, const std::string& address,
                   const std::string& stride, bool transpose, Prelude& prelude);
// The statement of matrix_mma: one mma.sync.m16n8k16, with its helper.
std::string mma(const std::string& result, const std::string& a, const std::string& b,
                const std::string& c, const ir::Type& a_type, const std::string& element,
                Prelude& prelude);

}  // namespace metile::codegen::cuda_mma_fragments
