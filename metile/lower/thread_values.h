// The value of a Metal IR integer in one thread, where it is a compile-time function of the
// thread: thread_index, simd_lane, simd_group, integer constants and the scalar integer ops
// over them (evaluated exactly, as constant folding does), and simd_broadcast of such a value. The
// scratch and software-pipeline verifiers read addresses and masks per thread through it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>

#include "metile/ir/ir.h"

namespace metile::lower {

// One thread's values found so far (a thread's own memo: values differ between threads).
using ThreadValueMemo = std::map<ir::ValueId, std::optional<int64_t>>;

// The value of v in thread t, or nullopt when it is not a compile-time function of the thread
// (a float, a load, a parameter). `definer` gives the op that defines a value (null for none).
std::optional<int64_t> thread_value(const ir::Kernel& k,
                                    const std::function<const ir::Op*(ir::ValueId)>& definer,
                                    int simd_width, ir::ValueId v, int64_t t,
                                    ThreadValueMemo& memo);

}  // namespace metile::lower
