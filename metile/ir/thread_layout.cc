#include "metile/ir/thread_layout.h"

#include <algorithm>

#include "metile/support/bits.h"
#include "metile/support/errors.h"

namespace metile::ir {

namespace {
constexpr size_t kMaxBits = 30;

[[noreturn]] void fail(const std::string& rule) {
  throw UserError("ThreadLayout: " + rule);
}
}  // namespace

ThreadLayout::ThreadLayout(std::vector<int> bit_order, int64_t xor_mask,
                           int64_t elements_per_thread, int64_t thread_count)
    : bit_order_(std::move(bit_order)),
      xor_mask_(xor_mask),
      elements_per_thread_(elements_per_thread) {
  if (bit_order_.size() > kMaxBits)
    fail("bit_order has " + std::to_string(bit_order_.size()) + " entries; at most " +
         std::to_string(kMaxBits) + " are supported");
  if (xor_mask_ < 0 || xor_mask_ >= size())
    fail("xor_mask " + std::to_string(xor_mask_) + " must lie in [0, " + std::to_string(size()) +
         ")");
  if (!is_power_of_two(elements_per_thread_) || elements_per_thread_ > size())
    fail("elements_per_thread " + std::to_string(elements_per_thread_) +
         " must be a power of two no larger than the size " + std::to_string(size()));
  const int64_t owners = size() / elements_per_thread_;
  thread_count_ = thread_count == 0 ? owners : thread_count;
  if (!is_power_of_two(thread_count_) || thread_count_ < owners)
    fail("thread_count " + std::to_string(thread_count_) +
         " must be a power of two no smaller than size / elements_per_thread = " +
         std::to_string(owners));
  thread_bits_ = log2_exact(thread_count_);
  const size_t physical_bits =
      static_cast<size_t>(thread_bits_) + static_cast<size_t>(log2_exact(elements_per_thread_));
  std::vector<bool> seen(physical_bits, false);
  for (int b : bit_order_) {
    if (b < 0 || static_cast<size_t>(b) >= physical_bits || seen[b])
      fail(std::string(thread_count == 0 ? "bit_order must be a permutation of 0.."
                                         : "bit_order must name distinct physical bits in 0..") +
           std::to_string(physical_bits) + " - 1, but entry " + std::to_string(b) +
           " is out of range or repeated");
    seen[b] = true;
  }
  for (size_t b = 0; b < physical_bits; ++b) {
    if (seen[b]) continue;
    if (b >= static_cast<size_t>(thread_bits_))
      fail("register bit " + std::to_string(b - static_cast<size_t>(thread_bits_)) +
           " names no logical bit; only thread bits may replicate");
    replica_bits_ |= int64_t{1} << b;
  }
}

ThreadLayout ThreadLayout::identity(int64_t size, int64_t elements_per_thread) {
  if (!is_power_of_two(size))
    fail("identity: the size " + std::to_string(size) + " must be a positive power of two");
  std::vector<int> order(log2_exact(size));
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  return ThreadLayout(std::move(order), 0, elements_per_thread);
}

bool ThreadLayout::is_identity() const {
  if (replica_bits_) return false;
  for (size_t i = 0; i < bit_order_.size(); ++i)
    if (bit_order_[i] != static_cast<int>(i)) return false;
  return xor_mask_ == 0;
}

int64_t ThreadLayout::logical_index(int64_t thread, int64_t reg) const {
  if (thread < 0 || thread >= thread_count())
    fail("thread " + std::to_string(thread) + " is outside [0, " + std::to_string(thread_count()) +
         ")");
  if (reg < 0 || reg >= elements_per_thread_)
    fail("register " + std::to_string(reg) + " is outside [0, " +
         std::to_string(elements_per_thread_) + ")");
  const int64_t p = thread | (reg << thread_bits_);
  int64_t index = 0;
  for (size_t bit = 0; bit < bit_order_.size(); ++bit) index |= ((p >> bit_order_[bit]) & 1) << bit;
  return index ^ xor_mask_;
}

int64_t ThreadLayout::physical(int64_t index) const {
  if (index < 0 || index >= size())
    fail("index " + std::to_string(index) + " is outside [0, " + std::to_string(size()) + ")");
  const int64_t x = index ^ xor_mask_;
  int64_t p = 0;
  for (size_t bit = 0; bit < bit_order_.size(); ++bit) p |= ((x >> bit) & 1) << bit_order_[bit];
  return p;
}

int64_t ThreadLayout::owner(int64_t index) const {
  return physical(index) & (thread_count() - 1);
}

int64_t ThreadLayout::register_of(int64_t index) const {
  return physical(index) >> thread_bits_;
}

std::string ThreadLayout::str() const {
  const std::string tail = std::to_string(thread_count()) + " threads, " +
                           std::to_string(elements_per_thread_) + " per thread)";
  if (is_identity()) return "identity(" + std::to_string(size()) + " elements, " + tail;
  std::string order;
  for (size_t i = 0; i < bit_order_.size(); ++i)
    order += (i ? ", " : "") + std::to_string(bit_order_[i]);
  if (bit_order_.size() == 1) order += ",";
  const std::string threads =
      replica_bits_ ? ", replicated over thread bits " + std::to_string(replica_bits_) : "";
  return "ThreadLayout((" + order + "), xor " + std::to_string(xor_mask_) + ", " +
         tail.substr(0, tail.size() - 1) + threads + ")";
}

}  // namespace metile::ir
