#include "metile/support/hash.h"

#include <cstdio>

namespace metile {

uint64_t fnv1a64(std::string_view data, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string content_hash(std::string_view data) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)fnv1a64(data),
                (unsigned long long)fnv1a64(data, 0x84222325cbf29ce4ull));
  return buf;
}

}  // namespace metile
