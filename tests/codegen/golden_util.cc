#include "golden_util.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace metile::codegen::testing {

std::string source_dir() {
  const char* env = std::getenv("METILE_SOURCE_DIR");
  return env && *env ? env : METILE_TEST_SOURCE_DIR;
}

std::string golden_dir(const CDialect& dialect) {
  std::string folder(dialect.table().language);
  for (char& c : folder) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return source_dir() + "/tests/codegen/golden/" + folder;
}

std::string golden_file(const CDialect& dialect, const std::string& name) {
  const bool cuda = dialect.table().language == "CUDA";
  return golden_dir(dialect) + "/" + name + (cuda ? ".cu" : ".metal");
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
