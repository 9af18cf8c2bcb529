#include "metile/runtime/host/guarded_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

namespace metile::runtime::host {

namespace {

constexpr unsigned char kCanary = 0xA5;

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}
std::size_t round_up(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

struct Registry {
  std::mutex mutex;
  std::map<std::uintptr_t, RegionInfo> by_begin;
};
Registry& registry() {
  static Registry* r = new Registry;  // outlives static destructors that free regions
  return *r;
}

// Buffer mappings freed recently, kept for a buffer of the same mapping size: a launch with
// numpy arguments stages each one in a new buffer (metile/compile.cc), and a fresh mapping
// pays a page fault per 4 KiB page at first touch, which cost more than the kernel itself
// (the 4096x4096 RMSNorm of benchmarks/host_emulator.py: 95 ms a launch, 22 ms with
// device buffers). A reused mapping is zeroed, as a fresh one is.
class MappingPool {
 public:
  static constexpr std::size_t kMaxBytes = std::size_t{256} << 20;

  unsigned char* take(std::size_t mapping_size) {
    std::lock_guard lock(mutex_);
    for (auto it = free_.rbegin(); it != free_.rend(); ++it)  // the last freed: warmest
      if (it->second == mapping_size) {
        unsigned char* m = it->first;
        bytes_ -= mapping_size;
        free_.erase(std::next(it).base());
        return m;
      }
    return nullptr;
  }
  // false: the pool is full, unmap it.
  bool keep(unsigned char* mapping, std::size_t mapping_size) {
    std::lock_guard lock(mutex_);
    if (bytes_ + mapping_size > kMaxBytes) return false;
    bytes_ += mapping_size;
    free_.emplace_back(mapping, mapping_size);
    return true;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<unsigned char*, std::size_t>> free_;
  std::size_t bytes_ = 0;
};
MappingPool& buffer_mappings() {
  static MappingPool* pool = new MappingPool;  // outlives static destructors that free buffers
  return *pool;
}

}  // namespace

GuardedRegion::GuardedRegion(std::size_t size, RegionKind kind) : kind_(kind) {
  const std::size_t page = page_size();
  const std::size_t body = round_up(round_up(size, 16), page);
  mapping_size_ = body + 2 * page;
  if (kind == RegionKind::Buffer) mapping_ = buffer_mappings().take(mapping_size_);
  if (mapping_) {
    std::memset(mapping_ + page, 0, body);
  } else {
    void* m =
        mmap(nullptr, mapping_size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    mapping_ = static_cast<unsigned char*>(m);
    if (body > 0 && mprotect(mapping_ + page, body, PROT_READ | PROT_WRITE) != 0) {
      munmap(mapping_, mapping_size_);
      throw std::bad_alloc();
    }
  }
  data_ = mapping_ + page + body - round_up(size, 16);
  size_ = size;
  restore_slack();
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  const auto begin = reinterpret_cast<std::uintptr_t>(mapping_);
  r.by_begin[begin] = {kind, data_, size_, begin, begin + mapping_size_};
}

GuardedRegion::~GuardedRegion() {
  release();
}

GuardedRegion::GuardedRegion(GuardedRegion&& other) noexcept {
  *this = std::move(other);
}

GuardedRegion& GuardedRegion::operator=(GuardedRegion&& other) noexcept {
  if (this != &other) {
    release();
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_size_ = std::exchange(other.mapping_size_, 0);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    kind_ = other.kind_;
  }
  return *this;
}

void GuardedRegion::release() {
  if (!mapping_) return;
  {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    r.by_begin.erase(reinterpret_cast<std::uintptr_t>(mapping_));
  }
  if (kind_ != RegionKind::Buffer || !buffer_mappings().keep(mapping_, mapping_size_))
    munmap(mapping_, mapping_size_);
  mapping_ = nullptr;
}

std::optional<std::ptrdiff_t> GuardedRegion::damaged_slack() const {
  const unsigned char* body = mapping_ + page_size();
  for (const unsigned char* p = body; p < data_; ++p)
    if (*p != kCanary) return p - data_;
  const unsigned char* guard_after = mapping_ + mapping_size_ - page_size();
  for (const unsigned char* p = data_ + size_; p < guard_after; ++p)
    if (*p != kCanary) return p - data_;
  return std::nullopt;
}

void GuardedRegion::restore_slack() {
  unsigned char* body = mapping_ + page_size();
  unsigned char* guard_after = mapping_ + mapping_size_ - page_size();
  std::memset(body, kCanary, static_cast<std::size_t>(data_ - body));
  std::memset(data_ + size_, kCanary, static_cast<std::size_t>(guard_after - (data_ + size_)));
}

std::optional<RegionInfo> find_guarded_region(std::uintptr_t address) {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.by_begin.upper_bound(address);
  if (it == r.by_begin.begin()) return std::nullopt;
  --it;
  if (address >= it->second.mapping_end) return std::nullopt;
  return it->second;
}

}  // namespace metile::runtime::host
