// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the signatures of on-disk cache
// entries (metile/runtime/disk_cache.h). Self-contained so the core needs no crypto
// library on any platform; tests/runtime/disk_cache_test.cc checks it against the FIPS
// examples and the RFC 4231 test vectors.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace metile {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  Sha256Digest finish();  // the digest; the object is spent

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t length_ = 0;  // bytes hashed
};

Sha256Digest sha256(std::string_view data);
Sha256Digest hmac_sha256(std::string_view key, std::string_view data);
// Lower-case hexadecimal, two digits a byte.
std::string to_hex(std::string_view bytes);
std::string to_hex(const Sha256Digest& digest);
// Equal contents, in time that does not depend on where they differ.
bool equal_in_constant_time(std::string_view a, std::string_view b);

}  // namespace metile
