// Matrix fragments in CUDA (docs/fragments.md): an 8x8 fragment is two elements per lane of
// a warp, in a lane map only these helpers know. Multiply-accumulate is mma.sync m16n8k8 for
// f16 and bf16 (the fragment fills the top half of its 16 rows), fused multiply-adds over
// warp shuffles for f32 (exact), and mma.sync on TF32 for f32 when the op's precision is tf32.
#pragma once

#include <string>

#include "metile/codegen/dialect.h"

namespace metile::codegen::cuda_matrix {

// "metile_fragment<float>"
std::string type(ir::DType t, const CDialect& dialect);
// Records the fragment type in `prelude`.
void declare(Prelude& prelude);
std::string element(const std::string& value, const std::string& index);
std::string fill(ir::DType t, const std::string& value, const CDialect& dialect);
// The statement of matrix_load (store = false) or matrix_store, with its helper.
std::string access(bool store, ir::DType t, const std::string& fragment, const std::string& address,
                   const std::string& stride, bool transpose, const CDialect& dialect,
                   Prelude& prelude);
// The statement of matrix_mma, with its helpers.
std::string mma(const std::string& result, const std::string& a, const std::string& b,
                const std::string& c, ir::DType t, bool tf32, const CDialect& dialect,
                Prelude& prelude);

}  // namespace metile::codegen::cuda_matrix
