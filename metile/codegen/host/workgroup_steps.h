// How a kernel divides into the steps of a work-group function (workgroup_emitter.h): whether it
// can run as one at all, and each block cut into runs of thread-local ops (one thread loop each)
// and the rendezvous ops and control flow between them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "metile/ir/ir.h"

namespace metile::codegen::workgroup {

bool is_collective(const ir::Op& op);
// Ops at which threads wait for each other: a barrier or a SIMD collective.
bool is_rendezvous(const ir::Op& op);
bool contains_rendezvous(const ir::Op& op);
// The index of a SIMD collective in DialectTable::collectives (dialect.h's order).
size_t collective_index(ir::OpKind kind);
// " at <file>:<line>" where the op's location is known, else "".
std::string at_line(const ir::Op& op);

// Why the kernel cannot run as a work-group function, or "".
std::string ineligibility(const ir::Kernel& k, const std::vector<bool>& uniform);

// The bytes one value of type t takes in a per-thread array.
int64_t value_bytes(const ir::Type& t);

struct Step {
  std::vector<const ir::Op*> run;      // a run of thread-local ops, or
  const ir::Op* rendezvous = nullptr;  // a barrier, a collective, a for/if containing them, or
                                       // a for with uniform bounds
};
std::vector<Step> steps_of(const ir::Block& block, const std::vector<bool>& uniform);

}  // namespace metile::codegen::workgroup
