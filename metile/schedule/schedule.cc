#include "metile/schedule/schedule.h"

#include <array>
#include <utility>

#include "metile/support/errors.h"

namespace metile::schedule {

namespace {
constexpr std::array<std::pair<Backend, std::string_view>, 6> kBackends = {{
    {Backend::Auto, "auto"},
    {Backend::Simdgroup, "simdgroup"},
    {Backend::SimdgroupInline, "simdgroup_inline"},
    {Backend::TensorOps, "tensor_ops"},
    {Backend::Nax, "nax"},
    {Backend::Elementwise, "elementwise"},
}};
constexpr std::array<std::pair<Staging, std::string_view>, 3> kStagings = {{
    {Staging::Auto, "auto"},
    {Staging::Device, "device"},
    {Staging::Threadgroup, "threadgroup"},
}};

template <typename Table>
std::string known_names(const Table& table) {
  std::string names;
  for (const auto& [value, name] : table) names += (names.empty() ? "" : ", ") + std::string(name);
  return names;
}

std::string optional_text(const std::optional<int>& v) {
  return v ? std::to_string(*v) : "None";
}
}  // namespace

std::string_view route_name(Route r) {
  return r == Route::Ptx ? "ptx" : "source";
}

Route route_from_name(std::string_view name) {
  if (name == "source") return Route::Source;
  if (name == "ptx") return Route::Ptx;
  throw UserError("Schedule: route must be one of source, ptx, got '" + std::string(name) + "'");
}

std::string_view backend_name(Backend b) {
  for (const auto& [value, name] : kBackends)
    if (value == b) return name;
  throw InternalError("backend_name: unknown backend");
}

std::string_view staging_name(Staging s) {
  for (const auto& [value, name] : kStagings)
    if (value == s) return name;
  throw InternalError("staging_name: unknown staging");
}

Backend backend_from_name(std::string_view name) {
  for (const auto& [value, known] : kBackends)
    if (known == name) return value;
  throw UserError("Schedule: backend must be one of " + known_names(kBackends) + ", got '" +
                  std::string(name) + "'");
}

Staging staging_from_name(std::string_view name) {
  for (const auto& [value, known] : kStagings)
    if (known == name) return value;
  throw UserError("Schedule: staging must be one of " + known_names(kStagings) + ", got '" +
                  std::string(name) + "'");
}

std::string Schedule::key() const {
  return "backend=" + std::string(backend_name(backend)) +
         " num_simdgroups=" + optional_text(num_simdgroups) +
         " staging=" + std::string(staging_name(staging)) +
         " vector_width=" + optional_text(vector_width) +
         " double_buffer=" + (double_buffer ? (*double_buffer ? "True" : "False") : "None") +
         // Only a non-default route is named, so the keys of existing entries do not change.
         (route == Route::Source ? "" : " route=" + std::string(route_name(route)));
}

nlohmann::json Schedule::to_json() const {
  nlohmann::json j;
  j["backend"] = backend_name(backend);
  j["num_simdgroups"] = num_simdgroups ? nlohmann::json(*num_simdgroups) : nlohmann::json();
  j["staging"] = staging_name(staging);
  j["vector_width"] = vector_width ? nlohmann::json(*vector_width) : nlohmann::json();
  j["double_buffer"] = double_buffer ? nlohmann::json(*double_buffer) : nlohmann::json();
  if (route != Route::Source) j["route"] = route_name(route);
  return j;
}

Schedule Schedule::from_json(const nlohmann::json& j) {
  Schedule s;
  s.backend = backend_from_name(j.at("backend").get<std::string>());
  s.staging = staging_from_name(j.at("staging").get<std::string>());
  if (!j.at("num_simdgroups").is_null()) s.num_simdgroups = j.at("num_simdgroups").get<int>();
  if (!j.at("vector_width").is_null()) s.vector_width = j.at("vector_width").get<int>();
  if (!j.at("double_buffer").is_null()) s.double_buffer = j.at("double_buffer").get<bool>();
  if (j.contains("route")) s.route = route_from_name(j.at("route").get<std::string>());
  check_schedule(s);
  return s;
}

void check_schedule(const Schedule& s) {
  if (s.num_simdgroups && (*s.num_simdgroups < 1 || *s.num_simdgroups > kMaxSimdgroups))
    throw UserError("Schedule: num_simdgroups is an integer from 1 through " +
                    std::to_string(kMaxSimdgroups) + ", got " + std::to_string(*s.num_simdgroups));
  if (s.vector_width && *s.vector_width != 1 && *s.vector_width != 4)
    throw UserError("Schedule: vector_width is None, 1 or 4, got " +
                    std::to_string(*s.vector_width));
  if (s.vector_width == 4 && s.double_buffer == true)
    throw UserError(
        "Schedule: vector_width=4 and double_buffer=True cannot be combined (the software "
        "double buffer's copies are not vectorized)");
}

}  // namespace metile::schedule
