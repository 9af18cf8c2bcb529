// The two functions every emitted kernel consists of (kernel_abi.h): the body's signature,
// and the entry that binds parameters, declares the threadgroup block and calls the body.
#pragma once

#include <string>
#include <vector>

#include "metile/codegen/dialect.h"
#include "metile/codegen/kernel_abi.h"

namespace metile::codegen {

// The body's parameter declarations, in kernel_abi.h order ("device const float* x", ...).
std::vector<std::string> body_parameters(const KernelABI& abi, const CDialect& dialect);

// "static inline void k_body(\n    device const float* x,\n    ...)" without the opening brace.
std::string body_signature(const KernelABI& abi, const CDialect& dialect);

// The complete entry function.
std::string entry_wrapper(const KernelABI& abi, const CDialect& dialect);

}  // namespace metile::codegen
