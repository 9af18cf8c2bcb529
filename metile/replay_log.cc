#include "metile/replay_log.h"

#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "metile/support/errors.h"
#include "metile/support/hash.h"

namespace metile {

std::string replay_dir() {
  const char* dir = std::getenv("METILE_REPLAY_DIR");
  return dir && *dir ? dir : "";
}

void write_replay_entry(const std::string& dir, const ReplayEntry& e) {
  namespace fs = std::filesystem;
  const nlohmann::json j = {
      {"kernel", e.kernel}, {"target", e.target},
      {"math", e.math},     {"tile_ir", e.tile_ir},
      {"source", e.source}, {"schedule", e.schedule ? e.schedule->to_json() : nlohmann::json()}};
  const std::string key = content_hash(e.target + "\n" + e.math + "\n" +
                                       (e.schedule ? e.schedule->key() : "") + "\n" + e.tile_ir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::ostringstream tmp_name;
  tmp_name << key << ".tmp." << std::hash<std::thread::id>{}(std::this_thread::get_id()) << "."
           << ::getpid();
  const fs::path tmp = fs::path(dir) / tmp_name.str();
  {
    std::ofstream out(tmp, std::ios::binary);
    out << j.dump(1) << "\n";
    if (!out) throw UserError("METILE_REPLAY_DIR: cannot write " + tmp.string());
  }
  fs::rename(tmp, fs::path(dir) / (key + ".json"), ec);
  if (ec) throw UserError("METILE_REPLAY_DIR: cannot write " + dir + ": " + ec.message());
}

ReplayEntry read_replay_entry(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot read replay entry " + path);
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    ReplayEntry e{j.at("kernel"),  j.at("target"), j.at("math"),
                  j.at("tile_ir"), j.at("source"), std::nullopt};
    if (j.contains("schedule") && !j.at("schedule").is_null())
      e.schedule = schedule::Schedule::from_json(j.at("schedule"));
    else if (const int width = j.value("vector_width", 0); width != 0)
      e.schedule.emplace().vector_width = width;
    return e;
  } catch (const nlohmann::json::exception& e) {
    throw UserError("replay entry " + path + " is malformed: " + e.what());
  }
}

}  // namespace metile
