#include "metile/lower/lower_to_metal.h"

#include "metile/lower/device_dot_operands.h"
#include "metile/lower/lower_dot_wgmma.h"
#include "metile/lower/lowering_steps.h"

namespace metile::lower {

void lower_block(Lowering& l, const ir::Block& block) {
  using K = ir::OpKind;
  for (const ir::Op& op : block.ops) {
    l.builder.set_location(op.loc);  // Metal IR ops keep the user's line (fault reports)
    if (l.intercept && l.intercept(op)) continue;
    switch (op.kind) {
      case K::Add:
      case K::Sub:
      case K::Mul:
      case K::Div:
      case K::Rem:
      case K::FloorDiv:
      case K::Min:
      case K::Max:
      case K::And:
      case K::Or:
      case K::Xor:
      case K::Shl:
      case K::Shr:
      case K::Cmp:
      case K::Select:
      case K::Cast:
      case K::Neg:
      case K::Abs:
      case K::Exp:
      case K::Exp2:
      case K::Log:
      case K::Sqrt:
      case K::Rsqrt:
      case K::Tanh:
      case K::Sin:
      case K::Cos:
      case K::Floor:
      case K::Ceil:
      case K::InlineAsm:
        lower_elementwise(l, op);
        break;
      case K::Constant:
        lower_uniform_scalar(l, op, K::Constant);
        break;
      case K::ProgramId:
        lower_uniform_scalar(l, op, K::ThreadgroupIndex);
        break;
      case K::NumPrograms:
        lower_uniform_scalar(l, op, K::ThreadgroupCount);
        break;
      case K::ThreadId:
        lower_thread_id(l, op);
        break;
      case K::Arange:
        lower_arange(l, op);
        break;
      case K::Splat:
        lower_splat(l, op);
        break;
      case K::ExpandDims:
        lower_expand_dims(l, op);
        break;
      case K::Broadcast:
        lower_broadcast(l, op);
        break;
      case K::ConvertLayout:
        lower_convert_layout(l, op);
        break;
      case K::PtrAdd:
        lower_ptr_add(l, op);
        break;
      case K::Load:
        lower_load(l, op);
        break;
      case K::Store:
        lower_store(l, op);
        break;
      case K::AtomicRmw:
      case K::AtomicCas:
        lower_atomic(l, op);
        break;
      case K::SharedAlloc:
        lower_shared_alloc(l, op);
        break;
      case K::Barrier:
        lower_barrier(l, op);
        break;
      case K::Reduce:
        lower_reduce(l, op);
        break;
      case K::ReduceAxis:
        lower_reduce_axis(l, op);
        break;
      case K::ReduceCombine:
        lower_reduce_combine(l, op);
        break;
      case K::Scan:
        lower_scan(l, op);
        break;
      case K::XorPermute:
        lower_xor_permute(l, op);
        break;
      case K::DeviceAssert:
        lower_device_assert(l, op);
        break;
      case K::DevicePrint:
        lower_device_print(l, op);
        break;
      case K::Dot:
        lower_dot(l, op);
        break;
      case K::Reshape:
        lower_reshape(l, op);
        break;
      case K::Trans:
        lower_trans(l, op);
        break;
      case K::SimdShuffle:
      case K::SimdShuffleXor:
      case K::SimdShuffleDown:
      case K::SimdBroadcast:
      case K::SimdSum:
      case K::SimdMax:
      case K::SimdMin:
        lower_simd_collective(l, op);
        break;
      case K::MatrixFill:
      case K::MatrixLoad:
      case K::MatrixStore:
        lower_fragment_op(l, op);
        break;
      case K::DeviceTileLoad:
      case K::DeviceTileStore:
        lower_device_tile(l, op);
        break;
      case K::For:
        lower_for(l, op);
        break;
      case K::If:
        lower_if(l, op);
        break;
      case K::While:
        lower_while(l, op);
        break;
      case K::Yield:
        break;  // the enclosing for/if/while reads the yielded values
      case K::DescriptorMatmul:
        lower_descriptor_matmul(l, op);
        break;
      case K::MakeTensor:
      case K::TensorLoad:
      case K::TensorStore:
        l.not_supported(op,
                        "tensor descriptors must be expanded by expand_tensor_access "
                        "before lower_to_metal");
      case K::ThreadIndex:
      case K::ThreadgroupIndex:
      case K::ThreadgroupCount:
      case K::SimdLane:
      case K::SimdGroup:
      case K::ThreadgroupBuffer:
      case K::PackedLoad:
      case K::PackedStore:
      case K::Extract:
      case K::Pack:
      case K::IsAligned:
      case K::MatrixMma:
      case K::AssertTrue:
      case K::Print:
      case K::MppMatmul2d:
      case K::MbarrierInit:
      case K::MbarrierFence:
      case K::MbarrierArrive:
      case K::MbarrierArriveExpectTx:
      case K::MbarrierWait:
      case K::TmaLoad:
      case K::WgmmaFence:
      case K::WgmmaMma:
      case K::WgmmaCommit:
      case K::WgmmaWait:
      case K::SetMaxNReg:
      case K::AsyncCopy:
      case K::AsyncCopyCommit:
      case K::AsyncCopyWait:
      case K::AsyncProxyFence:
        l.not_supported(op, "is a Metal IR op, not a Tile IR op");
    }
  }
}

LoweringResult lower_to_metal(const ir::Kernel& tile, const ThreadPlan& plan,
                              const target::Target& target, const schedule::SchedulePlan& schedule,
                              const std::optional<FusedEpilogue>& unformed_epilogue) {
  if (tile.dialect != ir::Dialect::Tile)
    throw UserError("lower_to_metal: kernel '" + tile.name + "' is not Tile IR");
  // The wgmma_tma strategy lowers the whole kernel on its consumer warp groups' plan.
  const bool wgmma = schedule.strategy == schedule::MatrixStrategy::WgmmaTma;
  const ThreadPlan lanes = wgmma ? wgmma_thread_plan(*schedule.async_gemm) : plan;
  check_thread_plan(lanes, target);
  // Its ring and mbarriers are laid out first, as a kernel's own shared allocations are.
  const int64_t user_bytes =
      wgmma ? schedule.async_gemm->ring_bytes : ThreadgroupAllocator::user_bytes(tile);
  const int64_t tails =
      device_operand_tail_bytes(tile, schedule, lanes.threads_per_threadgroup / target.simd_width);
  Lowering l(tile, lanes, schedule, target, user_bytes,
             register_reduction_bytes(tile, lanes, target) + tails);
  // Under staging='device' the operand loads of the dots are read as fragments instead, and
  // wgmma_staged copies its b loads straight into their scratch.
  const std::set<const ir::Op*> unlowered = device_operand_only_ops(tile, schedule);
  const std::map<const ir::Op*, const ir::Op*> staged = staged_operand_candidates(l);
  if (!unlowered.empty() || !staged.empty())
    l.intercept = [&](const ir::Op& op) {
      const auto it = staged.find(&op);
      return unlowered.count(&op) > 0 ||
             (it != staged.end() && defer_staged_operand_load(l, *it->second));
    };
  if (wgmma)
    lower_wgmma_kernel(l);
  else
    lower_block(l, tile.body);
  // The SIMD-group and wgmma paths both run a descriptor GEMM's epilogue on the accumulator's
  // registers.
  if (unformed_epilogue && (wgmma || schedule.backend == schedule::Backend::Simdgroup)) {
    FusedEpilogue e = *unformed_epilogue;
    e.backend = wgmma ? "wgmma_tma (the accumulator's registers, after the last wgmma wait)"
                      : "simdgroup (the accumulator's registers, after the K loop)";
    l.fused_epilogues.push_back(std::move(e));
  }
  l.intercept = nullptr;
  const int64_t bytes = l.allocator.total_bytes();
  if (bytes > target.threadgroup_memory_bytes)
    throw OutOfResources("lower_to_metal: kernel '" + tile.name + "' needs " +
                         std::to_string(bytes) + " bytes of threadgroup memory; target " +
                         target.name + " has " + std::to_string(target.threadgroup_memory_bytes));
  l.metal.attrs["threads_per_threadgroup"] =
      wgmma ? wgmma_block_threads(*schedule.async_gemm) : int64_t{plan.threads_per_threadgroup};
  l.metal.attrs["threadgroup_bytes"] = bytes;
  // verify_scratch accepts exactly this many private_reduction buffers.
  int64_t private_buffers = 0;
  for (const RegisterReduction& r : l.register_reductions)
    private_buffers += r.scratch.rfind("private", 0) == 0;
  if (private_buffers) l.metal.attrs["private_reductions"] = private_buffers;
  LoweringResult result;
  result.plan = lanes;
  result.allocations = l.allocator.allocations();
  result.loops = std::move(l.loops);
  result.value_layouts = std::move(l.value_layouts);
  result.register_reductions = std::move(l.register_reductions);
  result.layout_conversions = std::move(l.layout_conversions);
  result.buffering = std::move(l.buffering);
  result.fused_epilogues = std::move(l.fused_epilogues);
  result.pipelines = std::move(l.pipelines);
  result.metal = std::move(l.metal);
  return result;
}

}  // namespace metile::lower
