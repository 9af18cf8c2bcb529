// metile::Schedule: the execution requirements a caller may state (seed 002, "Checked
// expert controls"). Every control left automatic is the compiler's choice; every explicit
// one is a requirement that plan_schedule meets or rejects, never downgrades.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace metile::schedule {

// How matrix work is lowered. Auto lets plan_schedule choose; a plan never holds Auto.
enum class Backend : uint8_t {
  Auto,
  Elementwise,      // no matrix work: tiles become per-thread registers (lower_to_metal)
  Simdgroup,        // whole-GEMM SIMD-group tiling of `dot` on distributed 2-D tiles
  SimdgroupInline,  // matrix fragments the kernel itself places, one per SIMD group
  TensorOps,        // the target's opaque tensor backend (Metal 4 matmul2d; later wgmma)
  Nax,              // Apple's neural accelerator: no Target has it
};

// Where supported matrix temporaries live. Auto lets plan_schedule choose.
enum class Staging : uint8_t { Auto, Device, Threadgroup };

// Which language the kernel reaches the GPU in (issue 33): the target's source language
// (MSL, CUDA C++), or PTX written by meTile itself (CUDA targets only; codegen/ptx/).
enum class Route : uint8_t { Source, Ptx };

std::string_view route_name(Route r);  // "source", "ptx"
Route route_from_name(std::string_view name);
std::string_view backend_name(Backend b);  // "auto", "simdgroup", ...
std::string_view staging_name(Staging s);  // "auto", "device", "threadgroup"
// UserError listing the accepted names.
Backend backend_from_name(std::string_view name);
Staging staging_from_name(std::string_view name);

inline constexpr int kMaxSimdgroups = 32;

struct Schedule {
  Backend backend = Backend::Auto;
  std::optional<int> num_simdgroups;  // 1 through 32
  Staging staging = Staging::Auto;
  std::optional<int> vector_width;    // 1: no compiler vectorization; 4: required
  std::optional<bool> double_buffer;  // true: required; false: prohibited
  Route route = Route::Source;

  bool operator==(const Schedule&) const = default;
  // The part of the compilation cache key that identifies it ("backend=auto ...").
  std::string key() const;
  nlohmann::json to_json() const;
  // The inverse of to_json (replay entries); UserError for a malformed control.
  static Schedule from_json(const nlohmann::json& j);
};

// UserError naming the control when a value or a combination breaks the contract: 1-32
// SIMD groups, vector width 1 or 4, and width 4 with required double buffering.
void check_schedule(const Schedule& schedule);

}  // namespace metile::schedule

namespace metile {
using Schedule = schedule::Schedule;
}  // namespace metile
