// How precisely the emitted code computes transcendental functions (STRICT_MATH,
// RELAXED_PRECISION), and the names the frontends, tools and reports use for it.
#pragma once

#include <string>
#include <string_view>

namespace metile {

enum class MathMode { Default, Strict, Relaxed };

std::string_view math_mode_name(MathMode m);  // "default" | "strict" | "relaxed"
// UserError naming the modes for any other name.
MathMode math_mode_from_name(std::string_view name);

}  // namespace metile
