// The post-lowering check of every exchange and reduction through threadgroup scratch
// (threadgroup_buffer {scratch = exchange | reduction | private_reduction}), on Metal IR:
//   allocation    scratch overlaps no shared_alloc; private reduction scratch overlaps nothing
//                 but another private reduction's whose accesses a barrier separates from its
//                 own, and there are exactly as many as the kernel's private_reductions
//   pointers      a scratch pointer is only offset (ptr_add) and accessed (load, store,
//                 matrix_load, matrix_store): no alias escapes through selects, stores of the
//                 pointer or control flow
//   unconditional every access and its barriers run in every thread: no exchange or private
//                 reduction inside an `if` (a shared reduction may sit in one, since lowering
//                 admits it only under a uniform condition, and so may anything inside a
//                 software pipeline's guard {pipeline = ...}); pipeline slots (scratch =
//                 pipeline) overlap nothing and follow verify_software_pipeline's rules
//   sequence      stores, a publication barrier, loads, then (shared scratch) a release
//                 barrier before the next stores; private scratch is written once, outside
//                 loops, never after its publication
//   geometry      a reduction holds one partial per SIMD group; in an exchange every thread's
//                 addresses are compile-time functions of its thread index, each element is
//                 published once, and every element read was published; a fragment access
//                 (matrix_load / matrix_store) has one pointer, offset and stride in all the
//                 lanes of its SIMD group and moves the group's 64 elements
// A violation is an InternalError naming the buffer and the rule: lowering made it.
#pragma once

#include "metile/ir/ir.h"

namespace metile::lower {

void verify_scratch(const ir::Kernel& metal, int simd_width);

}  // namespace metile::lower
