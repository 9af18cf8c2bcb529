// Where the golden files live and how they are read and (on request) rewritten.
#pragma once

#include <string>

#include "metile/codegen/dialect.h"

namespace metile::codegen::testing {

// The repository root: METILE_SOURCE_DIR (set by CTest) or the compiled-in source dir.
std::string source_dir();
// The goldens of one dialect: tests/codegen/golden/<its language in lower case>, e.g. msl.
std::string golden_dir(const CDialect& dialect);
// The golden of one kernel in one dialect: <golden_dir>/<name>.metal for MSL, .cu for CUDA.
std::string golden_file(const CDialect& dialect, const std::string& name);
std::string read_file(const std::string& path);  // "" when missing
void write_file(const std::string& path, const std::string& text);
// METILE_UPDATE_GOLDEN=1 rewrites goldens instead of comparing; the diff must be reviewed.
bool update_golden();

}  // namespace metile::codegen::testing
