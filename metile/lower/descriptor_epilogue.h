// The pointwise epilogue of a descriptor GEMM (match_descriptor_gemm.h) that the tensor
// backend runs on its accumulator before the store: the stored value's pure SSA dependencies
// on the accumulator, built from elementwise arithmetic, comparisons, selections, float casts
// and unary math of the accumulator, constants and runtime scalar parameters, and read by
// nothing but the epilogue and the store.
#pragma once

#include <variant>
#include <vector>

#include "metile/lower/lower.h"
#include "metile/lower/match_descriptor_gemm.h"

namespace metile::lower {

// The epilogue's ops in program order (its splats of scalars included), or the op that breaks
// the rules above.
std::variant<std::vector<const ir::Op*>, GemmMismatch> match_pointwise_epilogue(
    const KernelValues& values, const DescriptorGemm& gemm);

// The report's record of an epilogue a register path (SIMD-group or wgmma) runs on the
// accumulator: its ops in order, the parameters it reads and the output conversion; the path
// that applies it names its backend.
FusedEpilogue describe_register_epilogue(const KernelValues& values, const DescriptorGemm& gemm,
                                         const std::vector<const ir::Op*>& epilogue);

}  // namespace metile::lower
