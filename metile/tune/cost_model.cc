#include "metile/tune/cost_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "metile/support/errors.h"

namespace metile::tune {
namespace {

using ir::OpKind;

enum class OpClass { Free, Memory, Arithmetic, Transcendental, Barrier, SimdCollective, Mma, Tile };

OpClass op_class(OpKind k) {
  switch (k) {
    case OpKind::Constant:
    case OpKind::ThreadIndex:
    case OpKind::ThreadgroupIndex:
    case OpKind::ThreadgroupCount:
    case OpKind::SimdLane:
    case OpKind::SimdGroup:
    case OpKind::Extract:
    case OpKind::Pack:
    case OpKind::ThreadgroupBuffer:
    case OpKind::For:
    case OpKind::If:
    case OpKind::While:
    case OpKind::Yield:
    case OpKind::DeviceAssert:  // debugging: not part of a configuration's cost
    case OpKind::DevicePrint:
    case OpKind::AssertTrue:
    case OpKind::Print:
      return OpClass::Free;
    case OpKind::Load:
    case OpKind::Store:
    case OpKind::AtomicRmw:
    case OpKind::AtomicCas:
    case OpKind::PackedLoad:
    case OpKind::PackedStore:
    case OpKind::MatrixLoad:
    case OpKind::MatrixStore:
    case OpKind::DeviceTileLoad:
    case OpKind::DeviceTileStore:
      return OpClass::Memory;
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Rem:
    case OpKind::FloorDiv:
    case OpKind::Min:
    case OpKind::Max:
    case OpKind::And:
    case OpKind::Or:
    case OpKind::Xor:
    case OpKind::Shl:
    case OpKind::Shr:
    case OpKind::Cmp:
    case OpKind::Select:
    case OpKind::Cast:
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::InlineAsm:
    case OpKind::PtrAdd:
    case OpKind::IsAligned:
    case OpKind::MatrixFill:
      return OpClass::Arithmetic;
    case OpKind::Div:
    case OpKind::Exp:
    case OpKind::Exp2:
    case OpKind::Log:
    case OpKind::Sqrt:
    case OpKind::Rsqrt:
    case OpKind::Tanh:
    case OpKind::Sin:
    case OpKind::Cos:
      return OpClass::Transcendental;
    case OpKind::Barrier:
    // sm90's pipeline synchronisation: mbarrier phases, wgmma's fences, commits and waits,
    // register reallocation.
    case OpKind::MbarrierInit:
    case OpKind::MbarrierFence:
    case OpKind::MbarrierArrive:
    case OpKind::MbarrierArriveExpectTx:
    case OpKind::MbarrierWait:
    case OpKind::WgmmaFence:
    case OpKind::WgmmaCommit:
    case OpKind::WgmmaWait:
    case OpKind::SetMaxNReg:
    case OpKind::AsyncCopyCommit:
    case OpKind::AsyncCopyWait:
    case OpKind::AsyncProxyFence:
      return OpClass::Barrier;
    // One thread starts the copy of a whole box for its threadgroup: its bytes are counted at
    // the barrier that expects them (add()).
    case OpKind::TmaLoad:
    case OpKind::AsyncCopy:
      return OpClass::Memory;
    case OpKind::SimdShuffle:
    case OpKind::SimdShuffleXor:
    case OpKind::SimdShuffleDown:
    case OpKind::SimdBroadcast:
    case OpKind::SimdSum:
    case OpKind::SimdMax:
    case OpKind::SimdMin:
      return OpClass::SimdCollective;
    case OpKind::MatrixMma:
    // A whole matmul2d counts as one multiply-accumulate: its K extent is a runtime value.
    case OpKind::MppMatmul2d:
    case OpKind::WgmmaMma:
      return OpClass::Mma;
    case OpKind::ProgramId:
    case OpKind::NumPrograms:
    case OpKind::ThreadId:
    case OpKind::Arange:
    case OpKind::Splat:
    case OpKind::ExpandDims:
    case OpKind::Broadcast:
    case OpKind::ConvertLayout:
    case OpKind::Reshape:
    case OpKind::Trans:
    case OpKind::MakeTensor:
    case OpKind::TensorLoad:
    case OpKind::TensorStore:
    case OpKind::SharedAlloc:
    case OpKind::Reduce:
    case OpKind::ReduceAxis:
    case OpKind::ReduceCombine:
    case OpKind::Scan:
    case OpKind::XorPermute:
    case OpKind::Dot:
    case OpKind::DescriptorMatmul:
      return OpClass::Tile;
  }
  throw InternalError("cost model: an op kind outside ops.def");
}

OperationCounts& operator+=(OperationCounts& a, const OperationCounts& b) {
  a.device_bytes += b.device_bytes;
  a.memory_accesses += b.memory_accesses;
  a.arithmetic += b.arithmetic;
  a.transcendental += b.transcendental;
  a.barriers += b.barriers;
  a.simd_collectives += b.simd_collectives;
  a.matrix_mma += b.matrix_mma;
  a.dynamic_loops += b.dynamic_loops;
  return a;
}

// Each count of the costlier of two branches: an upper bound where one runs.
OperationCounts larger(const OperationCounts& a, const OperationCounts& b) {
  return {
      std::max(a.device_bytes, b.device_bytes), std::max(a.memory_accesses, b.memory_accesses),
      std::max(a.arithmetic, b.arithmetic),     std::max(a.transcendental, b.transcendental),
      std::max(a.barriers, b.barriers),         std::max(a.simd_collectives, b.simd_collectives),
      std::max(a.matrix_mma, b.matrix_mma),     std::max(a.dynamic_loops, b.dynamic_loops)};
}

class Counter {
 public:
  explicit Counter(const ir::Kernel& k) : kernel_(k) {}

  // What one execution of `b` costs a thread, loops weighted by their constant trip counts.
  OperationCounts block(const ir::Block& b) {
    OperationCounts total;
    for (const ir::Op& op : b.ops) {
      if (op.kind == OpKind::Constant && !kernel_.type(op.results[0]).is_vector())
        constants_[op.results[0]] = op.float_attr("value");
      add(op, total);
      if (op.kind == OpKind::For) {
        const OperationCounts body = block(op.regions[0]);
        const std::optional<double> trips = trip_count(op);
        total += trips ? scaled(body, *trips) : body;
        if (!trips) ++total.dynamic_loops;
      } else if (op.kind == OpKind::While) {  // an unknown trip count: one iteration
        total += block(op.regions[0]);
        total += block(op.regions[1]);
        ++total.dynamic_loops;
      } else if (op.regions.size() == 2) {  // if/else: the costlier branch
        total += larger(block(op.regions[0]), block(op.regions[1]));
      } else {
        for (const ir::Block& r : op.regions) total += block(r);
      }
    }
    return total;
  }

 private:
  std::optional<double> trip_count(const ir::Op& loop) const {
    auto bound = [&](int i) { return constants_.find(loop.operands[i]); };
    auto start = bound(0), end = bound(1), step = bound(2);
    if (start == constants_.end() || end == constants_.end() || step == constants_.end() ||
        step->second <= 0)
      return std::nullopt;
    return std::max(0.0, std::ceil((end->second - start->second) / step->second));
  }

  static OperationCounts scaled(OperationCounts c, double trips) {
    for (double* term : {&c.device_bytes, &c.memory_accesses, &c.arithmetic, &c.transcendental,
                         &c.barriers, &c.simd_collectives, &c.matrix_mma})
      *term *= trips;
    return c;
  }

  // The bytes a memory op moves, and whether they are device memory.
  std::pair<double, bool> access(const ir::Op& op) const {
    const ir::Type& pointer =
        kernel_.type(op.kind == OpKind::MatrixStore ? op.operands[1] : op.operands[0]);
    const bool device = pointer.space == ir::AddressSpace::Device;
    const double element = ir::dtype_bytes(pointer.dtype);
    if (op.kind == OpKind::Load || op.kind == OpKind::PackedLoad)
      return {element * kernel_.type(op.results[0]).num_elements(), device};
    if (op.kind == OpKind::Store)
      return {element * kernel_.type(op.operands[1]).num_elements(), device};
    if (op.kind == OpKind::PackedStore)
      return {element * static_cast<double>(op.operands.size() - 1), device};
    return {element * 2, device};  // a matrix fragment: 64 elements over its SIMD group's 32 lanes
  }

  void add(const ir::Op& op, OperationCounts& counts) const {
    switch (op_class(op.kind)) {
      case OpClass::Free:
        return;
      case OpClass::Memory: {
        counts.memory_accesses += 1;
        if (op.kind == OpKind::TmaLoad) return;
        auto [bytes, device] = access(op);
        if (device) counts.device_bytes += bytes;
        return;
      }
      case OpClass::Arithmetic:
        counts.arithmetic += 1;
        return;
      case OpClass::Transcendental:
        counts.transcendental += 1;
        return;
      case OpClass::Barrier:
        counts.barriers += 1;
        // The asynchronous copies' device bytes, a share per thread of the threadgroup (the
        // one thread that arrives runs in a branch, which counts as if every thread did).
        if (op.kind == OpKind::MbarrierArriveExpectTx)
          counts.device_bytes += static_cast<double>(op.int_attr("bytes")) / threads();
        return;
      case OpClass::SimdCollective:
        counts.simd_collectives += 1;
        return;
      case OpClass::Mma:
        counts.matrix_mma += 1;
        return;
      case OpClass::Tile:
        throw InternalError("the cost model counts Metal IR, not the Tile IR op " +
                            std::string(ir::op_name(op.kind)));
    }
  }

  // The threadgroup's threads (Metal IR records them; 1 when absent).
  double threads() const {
    const auto it = kernel_.attrs.find("threads_per_threadgroup");
    const int64_t* n = it == kernel_.attrs.end() ? nullptr : std::get_if<int64_t>(&it->second);
    return n && *n > 0 ? static_cast<double>(*n) : 1.0;
  }

  const ir::Kernel& kernel_;
  std::map<ir::ValueId, double> constants_;
};

}  // namespace

OperationCounts count_operations(const ir::Kernel& metal) {
  METILE_ASSERT(metal.dialect == ir::Dialect::Metal, "the cost model counts a Metal IR kernel");
  return Counter(metal).block(metal.body);
}

CostEstimate estimate_cost(const OperationCounts& c, int64_t threadgroups,
                           int64_t threads_per_threadgroup, const target::Target& t) {
  const double threads = static_cast<double>(threadgroups) * threads_per_threadgroup;
  const double issue = c.memory_accesses + c.arithmetic +
                       c.transcendental * t.transcendental_weight +
                       c.simd_collectives * t.simd_collective_weight +
                       c.barriers * t.barrier_weight + c.matrix_mma * t.matrix_mma_weight;
  CostEstimate e;
  e.launch_us = t.launch_cost_us;
  e.memory_us = threads * c.device_bytes / (t.memory_bandwidth_gbps * 1e3);  // GB/s = 1e3 B/us
  e.issue_us = threads * issue / (t.issue_rate_gops * 1e3);
  e.microseconds = e.launch_us + std::max(e.memory_us, e.issue_us);
  return e;
}

nlohmann::json to_json(const OperationCounts& c) {
  return {{"device_bytes", c.device_bytes}, {"memory_accesses", c.memory_accesses},
          {"arithmetic", c.arithmetic},     {"transcendental", c.transcendental},
          {"barriers", c.barriers},         {"simd_collectives", c.simd_collectives},
          {"matrix_mma", c.matrix_mma},     {"dynamic_loops", c.dynamic_loops}};
}

nlohmann::json CostEstimate::to_json() const {
  return {{"microseconds", microseconds},
          {"launch_us", launch_us},
          {"memory_us", memory_us},
          {"issue_us", issue_us},
          {"bound", memory_us >= issue_us ? "memory" : "issue"}};
}

}  // namespace metile::tune
