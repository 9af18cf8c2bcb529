#include "metile/schedule/schedule_debug.h"

#include <filesystem>
#include <fstream>
#include <iostream>

#include "metile/support/errors.h"
#include "metile/support/hash.h"

namespace metile::schedule {

std::string write_schedule_debug(const ExecutionReport& report, const std::string& debug_dir,
                                 const std::string& identity) {
  const nlohmann::json j = report.to_json();
  std::cerr << "METILE_DEBUG=schedule: kernel '" << report.kernel << "' on " << report.target
            << "\nschedule_plan: " << j["schedule_plan"].dump(2)
            << "\nexecution_report: " << j.dump(2) << "\n";
  const std::filesystem::path folder = std::filesystem::path(debug_dir) / "schedule";
  std::filesystem::create_directories(folder);
  const std::filesystem::path file =
      folder / (report.kernel + "-" + content_hash(identity).substr(0, 16) + ".json");
  std::ofstream out(file);
  out << j.dump(2) << "\n";
  if (!out) throw UserError("METILE_DEBUG: cannot write " + file.string());
  return file.string();
}

}  // namespace metile::schedule
