#include "metile/flow/flow_network.h"

#include <string>

#include "metile/support/errors.h"

namespace metile::flow {

namespace {

// splitmix64 finalizer: a cheap, well-mixing step for the topology hash.
uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

}  // namespace

FlowNetwork::Builder::Builder(int vertex_count) : vertex_count_(vertex_count) {
  if (vertex_count < 0)
    throw UserError("FlowNetwork: vertex count must be >= 0, got " + std::to_string(vertex_count));
}

int FlowNetwork::Builder::add_vertex() {
  return vertex_count_++;
}

void FlowNetwork::Builder::add_arc(int from, int to, Capacity capacity) {
  auto check = [&](int v, const char* role) {
    if (v < 0 || v >= vertex_count_)
      throw UserError(std::string("FlowNetwork: arc ") + role + " vertex " + std::to_string(v) +
                      " is out of range [0, " + std::to_string(vertex_count_) + ")");
  };
  check(from, "tail");
  check(to, "head");
  if (capacity < 0)
    throw UserError("FlowNetwork: arc " + std::to_string(from) + " -> " + std::to_string(to) +
                    " has negative capacity " + std::to_string(capacity));
  // Anything at or above the infinite marker is infinite; one representation keeps hashing exact.
  if (capacity > kInfiniteCapacity) capacity = kInfiniteCapacity;
  from_.push_back(from);
  to_.push_back(to);
  capacity_.push_back(capacity);
}

FlowNetwork FlowNetwork::Builder::build() && {
  FlowNetwork net;
  net.vertex_count_ = vertex_count_;
  net.from_ = std::move(from_);
  net.to_ = std::move(to_);
  net.capacity_ = std::move(capacity_);
  uint64_t h = mix(0x6d65546966c6f77ull, static_cast<uint64_t>(net.vertex_count_));
  h = mix(h, net.from_.size());
  for (size_t i = 0; i < net.from_.size(); ++i) {
    uint64_t ends = (static_cast<uint64_t>(static_cast<uint32_t>(net.from_[i])) << 32) |
                    static_cast<uint32_t>(net.to_[i]);
    h = mix(h, ends);
    h = mix(h, static_cast<uint64_t>(net.capacity_[i]));
  }
  net.hash_ = h;
  vertex_count_ = 0;
  return net;
}

}  // namespace metile::flow
