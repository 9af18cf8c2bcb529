#include "golden_util.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace metile::codegen::testing {

std::string golden_dir() {
  const char* env = std::getenv("METILE_SOURCE_DIR");
  return std::string(env && *env ? env : METILE_TEST_SOURCE_DIR) + "/tests/codegen/golden";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

bool update_golden() {
  const char* env = std::getenv("METILE_UPDATE_GOLDEN");
  return env && std::string(env) == "1";
}

}  // namespace metile::codegen::testing
