// The check of every two-stage software pipeline lower_pipelined_loop materialised, on Metal
// IR, against seed 004's contract (schedule/software_pipeline.h). A pipeline is the pipeline
// buffers (threadgroup_buffer {scratch = "pipeline", slots = 2}) whose fragments a `for` reads;
// its prologue is an `if {pipeline = "prologue"}` before the loop, its copy an
// `if {pipeline = "copy"}` in the loop's body, and the loop carries the current slot:
//
//   types                 slots = 2 slots of size / 2 elements; every store and fragment
//                         load moves the buffer's element type
//   threadgroup capacity  every buffer lies inside the kernel's threadgroup_bytes, which
//                         fit the target
//   uniform control flow  the loop bounds and both guards' conditions are the same in every
//                         thread (they derive from no thread index, SIMD lane or loaded value)
//   copy ownership        stores into a buffer happen only in the prologue (into slot 0) and
//                         the copy (into the free slot, current ^ 1), and each writes every
//                         element of its slot exactly once across the threads; fragments are
//                         read only in the loop's body
//   fragment bounds       every fragment load (8 rows of stride elements) of every SIMD group
//                         lies inside one slot
//   publication           a barrier ends the prologue after its stores; in the body a barrier
//                         follows the copy and the last fragment load, and no store follows it
//   slot reuse            the body reads the current slot only, the loop starts at slot 0 and
//                         yields current ^ 1 (rotation)
// A violation is an InternalError naming the rule: lowering made it. Returns, per pipeline
// loop in program order, the rules verified.
#pragma once

#include <string>
#include <vector>

#include "metile/ir/ir.h"
#include "metile/target/target.h"

namespace metile::lower {

std::vector<std::vector<std::string>> verify_software_pipeline(const ir::Kernel& metal,
                                                               const target::Target& target);

}  // namespace metile::lower
