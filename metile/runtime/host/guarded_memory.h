// Memory whose end abuts an inaccessible guard page (and which starts after another), so
// that a kernel running past a buffer, its threadgroup memory or its stack faults at the
// first byte instead of silently touching a neighbour. Every live region is registered,
// so a fault address can be attributed to the region it hit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace metile::runtime::host {

enum class RegionKind { Buffer, ThreadgroupMemory, FiberStack };

struct RegionInfo {
  RegionKind kind;
  const unsigned char* data;
  std::size_t size;
  std::uintptr_t mapping_begin, mapping_end;  // guard pages included
};

class GuardedRegion {
 public:
  GuardedRegion() = default;
  // `size` usable bytes, 16-byte aligned, ending as close to the trailing guard page as
  // that alignment allows (fewer than 16 bytes of slack).
  GuardedRegion(std::size_t size, RegionKind kind);
  ~GuardedRegion();
  GuardedRegion(GuardedRegion&& other) noexcept;
  GuardedRegion& operator=(GuardedRegion&& other) noexcept;
  GuardedRegion(const GuardedRegion&) = delete;
  GuardedRegion& operator=(const GuardedRegion&) = delete;

  unsigned char* data() const { return data_; }
  std::size_t size() const { return size_; }
  // Bytes between the usable range and the guard pages hold a canary pattern; returns the
  // offset (relative to data(), negative before it) of the first overwritten one.
  std::optional<std::ptrdiff_t> damaged_slack() const;
  void restore_slack();

 private:
  void release();
  RegionKind kind_ = RegionKind::Buffer;
  unsigned char* mapping_ = nullptr;
  std::size_t mapping_size_ = 0;
  unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
};

// The registered region whose mapping (guards included) contains `address`.
std::optional<RegionInfo> find_guarded_region(std::uintptr_t address);

}  // namespace metile::runtime::host
