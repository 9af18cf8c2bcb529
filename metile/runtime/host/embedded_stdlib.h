// The metal_stdlib emulation headers, embedded in the library at build time so that a
// kernel compiles without the source tree. The compiler writes them into the cache.
#pragma once

#include <string_view>
#include <vector>

namespace metile::runtime::host {

struct EmbeddedFile {
  std::string_view path;  // where it goes in the bundle (as if under metile/runtime/host/)
  std::string_view contents;
};

const std::vector<EmbeddedFile>& embedded_stdlib_files();

}  // namespace metile::runtime::host
