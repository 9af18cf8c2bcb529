// plan_schedule's vector width of the dot operands and the K loop's double buffering.
#include <algorithm>
#include <map>

#include "metile/schedule/planner.h"

namespace metile::schedule::planning {

namespace {
// Triton's default num_stages on CUDA.
constexpr int kDefaultAsyncStages = 3;

}  // namespace

void Planner::choose_vector_width() {
  if (!asked_.vector_width) {
    plan_.vector_width = 0;
    plan_.vector_width_reason =
        plan_.backend == Backend::TensorOps
            ? "auto: the tensor backend's accesses are opaque"
            : "auto: group_vector_accesses groups four consecutive accesses of a thread "
              "where their addresses are proven consecutive and in bounds";
    return;
  }
  if (plan_.backend == Backend::TensorOps)
    reject("vector_width",
           "the tensor backend's accesses are opaque and cannot satisfy an "
           "explicit width");
  if (*asked_.vector_width == 4 && plan_.backend != Backend::Simdgroup)
    reject<NotSupported>(
        "vector_width",
        "vector_width=4 cannot be forced on " +
            std::string(plan_.backend == Backend::SimdgroupInline ? "a simdgroup_inline"
                                                                  : "an elementwise") +
            " kernel: accesses are grouped only where four consecutive addresses are "
            "proven, so leave vector_width unset (automatic) or set it to 1 (no grouping)");
  plan_.vector_width = *asked_.vector_width;
  plan_.vector_width_reason =
      *asked_.vector_width == 1
          ? "required: no compiler vectorization (every access scalar)"
          : "required: vectorized aligned operand interiors (masked tails may stay scalar)";
}

void Planner::choose_double_buffer() {
  plan_.double_buffer = asked_.double_buffer;
  if (plan_.backend == Backend::Simdgroup && plan_.staging == Staging::Device) {
    plan_.double_buffer_reason =
        std::string(asked_.double_buffer ? "prohibited" : "auto") +
        ": staging='device' keeps no threadgroup operand buffer, so nothing is double-buffered";
    return;
  }
  if (plan_.backend == Backend::Simdgroup) {
    // num_stages (the launch option, Triton's) sets the depth; 1 asks for no pipeline.
    const std::optional<int64_t> stages = attr("pipeline_stages");
    const bool async = target_.has_async_copy;
    if (asked_.double_buffer == true) {
      plan_.pipeline_stages = static_cast<int>(std::max<int64_t>(2, stages.value_or(2)));
      plan_.double_buffer_reason = "required: a materialised software pipeline of " +
                                   std::to_string(plan_.pipeline_stages) + " stages";
    } else if (asked_.double_buffer == false) {
      plan_.double_buffer_reason = "prohibited: a single operand buffer";
    } else if (stages == 1) {
      plan_.double_buffer_reason = "auto: num_stages=1, a single operand buffer";
    } else if (async) {
      plan_.pipeline_stages = static_cast<int>(stages.value_or(kDefaultAsyncStages));
      plan_.double_buffer_reason =
          "auto: a K loop of the canonical form (acc = dot(a, b, acc) with its operand "
          "copies) stages its operand tiles through " +
          std::to_string(plan_.pipeline_stages) + " shared-memory slots filled by " + target_.name +
          "'s asynchronous copies (" + (stages ? "num_stages" : "Triton's default depth") +
          "; fewer where threadgroup memory does not hold them); other loops keep a single "
          "operand buffer";
      choose_pipelined_wgmma();
      if (plan_.strategy != MatrixStrategy::WgmmaPipelined) choose_staged_wgmma();
    } else {
      plan_.double_buffer_reason =
          "auto: a single operand buffer (a two-stage software pipeline is materialised only "
          "when required: target " +
          target_.name +
          " has no asynchronous copies, and shared-memory staging is not assumed faster)";
    }
    return;
  }
  if (asked_.double_buffer == true)
    reject("double_buffer",
           plan_.backend == Backend::Elementwise
               ? "an elementwise kernel has no software pipeline to double-buffer; a "
                 "materialised double buffer needs a matrix backend (backend='simdgroup')"
               : "only the simdgroup backend materialises a software double buffer");
  plan_.double_buffer_reason = std::string(asked_.double_buffer ? "prohibited" : "auto") +
                               ": the " + std::string(backend_name(plan_.backend)) +
                               " backend has no software pipeline, so nothing is double-buffered";
}

void Planner::choose_pipelined_wgmma() {
  if (!target_.matrix_facilities.has(target::MatrixFacility::Wgmma)) return;
  if (const std::string why = pipelined_wgmma_unfit(); !why.empty()) {
    plan_.double_buffer_reason += "; the loop's dot stays on mma.sync, not wgmma: " + why;
    return;
  }
  plan_.strategy = MatrixStrategy::WgmmaPipelined;
  plan_.double_buffer_reason +=
      "; the loop's dot runs on wgmma from its slots (128-byte swizzled), the accumulator in "
      "registers";
}

// wgmma reads a [64 x 16] a block and a [16 x N] b block from 128-byte-swizzled shared memory:
// the K block is 64 16-bit elements (one swizzled row), N a multiple of 64 up to 256, and each
// warp group of 128 threads owns whole 64-row blocks of the output. The operands are tile
// loads with zero fill (copied asynchronously into the swizzled slots), and the accumulator's
// tile size is neither operand's, so its register layout is its own.
std::string Planner::pipelined_wgmma_unfit() const {
  if (dots_.size() != 1) return "the kernel has " + std::to_string(dots_.size()) + " dots, not one";
  const ir::Op& dot = *dots_[0];
  const ir::Op* loop = nullptr;
  ir::walk(k_.body, [&](const ir::Op& op) {
    if (op.kind != ir::OpKind::For) return;
    for (const ir::Op& inner : op.regions[0].ops)
      if (&inner == &dot) loop = &op;
  });
  if (!loop || loop->results.size() != 1 ||
      loop->regions[0].ops.back().operands[0] != dot.results[0])
    return "its dot is not the accumulation of a K loop that carries only it";
  const ir::Type& a = k_.type(dot.operands[0]);
  const ir::Type& b = k_.type(dot.operands[1]);
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  if (a.dtype != b.dtype || (a.dtype != ir::DType::f16 && a.dtype != ir::DType::bf16))
    return "its operands are not both f16 or both bf16";
  if (k != 64) return "its K block is " + std::to_string(k) + ", not 64 (one swizzled row)";
  if (n % 64 != 0 || n > 256)
    return "its N block " + std::to_string(n) + " is no multiple of 64 up to 256";
  const int64_t threads = plan_.threads_per_threadgroup;
  if (threads % 128 != 0 || m % (64 * (threads / 128)) != 0)
    return std::to_string(threads) +
           " threads are no whole warp groups of 128 owning whole "
           "64-row blocks of " +
           std::to_string(m) + " rows";
  if (m * n / threads > 128)
    return "the accumulator would take " + std::to_string(m * n / threads) +
           " registers a thread (at most 128)";
  if (m == 64 || n == 64) return "the accumulator's tile size is an operand's";
  for (int operand : {0, 1}) {
    const ir::ValueId v = dot.operands[static_cast<size_t>(operand)];
    const ir::Op* load = nullptr;
    for (const ir::Op& op : loop->regions[0].ops)
      if (op.kind == ir::OpKind::Load && op.results[0] == v) load = &op;
    if (!load) return std::string(operand ? "b" : "a") + " is not a tile load";
    if (load->operands.size() == 3 && !ir::is_zero_fill(load->operands[2], [&](ir::ValueId v) {
          const ir::Op* def = nullptr;
          ir::walk(k_.body, [&](const ir::Op& op) {
            for (ir::ValueId r : op.results)
              if (r == v) def = &op;
          });
          return def;
        }))
      return std::string(operand ? "b" : "a") + "'s load fills masked elements with a non-zero";
  }
  return "";
}

void Planner::choose_staged_wgmma() {
  if (!target_.matrix_facilities.has(target::MatrixFacility::Wgmma) || dots_.empty()) return;
  if (const std::string why = staged_wgmma_unfit(); !why.empty()) {
    plan_.double_buffer_reason += "; not wgmma_staged: " + why;
    return;
  }
  plan_.strategy = MatrixStrategy::WgmmaStaged;
  plan_.pipeline_stages = 0;
  plan_.double_buffer_reason =
      "auto: every dot runs on wgmma (wgmma_staged): a and the accumulator in wgmma's registers, "
      "b stored by its threads into 128-byte-swizzled shared memory before each dot; no "
      "software pipeline";
}

// Each dot: 16-bit operands of one dtype, whole 64-row blocks per warp group, a K block of 16s,
// an N block of 64s up to 256 (the swizzled blocks of b), at most 128 accumulator registers a
// thread; and no tile size that two of them need in different register layouts. Chosen where
// mma.sync is known to be slow: several dots, or one whose a is computed rather than loaded.
std::string Planner::staged_wgmma_unfit() const {
  const int64_t threads = plan_.threads_per_threadgroup;
  if (threads % 128 != 0) return std::to_string(threads) + " threads are no whole warp groups";
  const int64_t groups = threads / 128;
  std::map<int64_t, std::pair<int64_t, int64_t>> layouts;  // tile size -> the [rows, columns]
  const auto needs = [&](int64_t rows, int64_t columns) {
    const auto [it, fresh] = layouts.emplace(rows * columns, std::make_pair(rows, columns));
    return fresh || it->second == std::make_pair(rows, columns);
  };
  bool computed_a = false;
  for (const ir::Op* dot : dots_) {
    const ir::Type& a = k_.type(dot->operands[0]);
    const ir::Type& b = k_.type(dot->operands[1]);
    const ir::Type& acc = k_.type(dot->operands[2]);
    const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
    if (a.dtype != b.dtype || (a.dtype != ir::DType::f16 && a.dtype != ir::DType::bf16))
      return "a dot's operands are not both f16 or both bf16";
    if (acc.dtype != ir::DType::f32)
      return "a dot accumulates in " + std::string(ir::dtype_name(acc.dtype));
    if (m % (64 * groups) != 0)
      return "a dot's " + std::to_string(m) + " rows are no whole 64-row blocks for each of " +
             std::to_string(groups) + " warp groups";
    if (k % 16 != 0) return "a dot's K block " + std::to_string(k) + " is no multiple of 16";
    if (n % 64 != 0 || n > 256)
      return "a dot's N block " + std::to_string(n) + " is no multiple of 64 up to 256";
    if (m * n / threads > 128)
      return "an accumulator would take " + std::to_string(m * n / threads) +
             " registers a thread (at most 128)";
    if (!needs(m, n) || !needs(m, k))
      return "two dots need tiles of one size in different register layouts";
    const ir::Op* def = nullptr;
    ir::walk(k_.body, [&](const ir::Op& op) {
      if (!op.results.empty() && op.results[0] == dot->operands[0]) def = &op;
    });
    computed_a = computed_a || !def || def->kind != ir::OpKind::Load;
  }
  if (dots_.size() == 1 && !computed_a)
    return "one dot of a loaded a stays on mma.sync (not measured on wgmma_staged yet)";
  return "";
}

}  // namespace metile::schedule::planning
