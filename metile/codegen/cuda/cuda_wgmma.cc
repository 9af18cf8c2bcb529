#include "metile/codegen/cuda/cuda_wgmma.h"

#include "metile/support/errors.h"

namespace metile::codegen::cuda_wgmma {

namespace {

constexpr std::string_view kQualifier = "static __device__ __forceinline__";

// CUtensorMap's 128 opaque bytes, which the runtime fills with cuTensorMapEncodeTiled.
constexpr std::string_view kTensorMap =
    "struct __align__(64) metile_tensor_map {\n"
    "  unsigned long long opaque[16];\n"
    "};\n";

std::string helper(std::string_view signature, std::string_view body) {
  return std::string(kQualifier) + " " + std::string(signature) + " {\n" + std::string(body) +
         "}\n";
}

// The shared-window address of a generic pointer into shared memory, as PTX wants it.
void add_smem(Prelude& prelude) {
  prelude.add_type("metile_smem",
                   helper("unsigned int metile_smem(const void* p)",
                          "  return static_cast<unsigned int>(__cvta_generic_to_shared(p));\n"));
}

}  // namespace

// 16-byte copies bypass L1 (.cg, as Triton's and CUTLASS's do); narrower ones may only use .ca.
// A source size of 0 reads nothing and fills the destination with zeros.
std::string cp_async(const std::string& src, const std::string& dst, const std::string& pred,
                     int64_t bytes, Prelude& prelude) {
  add_smem(prelude);
  const std::string size = std::to_string(bytes);
  const std::string name = "metile_cp_async_" + size;
  prelude.add(name, ir::DType::i64,
              helper("void " + name + "(void* dst, const void* src, bool pred)",
                     std::string("  asm volatile(\"cp.async.") + (bytes == 16 ? "cg" : "ca") +
                         ".shared.global [%0], [%1], " + size +
                         ", %2;\" :: \"r\"(metile_smem(dst)), \"l\"(src), " + "\"r\"(pred ? " +
                         size + " : 0) : \"memory\");\n"));
  return name + "(" + dst + ", " + src + ", " + (pred.empty() ? "true" : pred) + ");";
}

namespace {

std::string mbarrier(Prelude& prelude, const std::string& name, const std::string& params,
                     const std::string& body) {
  add_smem(prelude);
  prelude.add(name, ir::DType::i64, helper("void metile_" + name + "(" + params + ")", body));
  return "metile_" + name;
}

// wgmma's shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): the start
// address, the leading and stride byte offsets (each >> 4, 14 bits) and 128-byte swizzling
// (mode 1, bits 62-63). The base offset is 0: every swizzled tile starts on 1024 bytes.
void add_descriptor(Prelude& prelude) {
  add_smem(prelude);
  prelude.add("wgmma_descriptor", ir::DType::i64,
              helper("unsigned long long metile_wgmma_descriptor(const void* p, unsigned int "
                     "leading, unsigned int stride)",
                     "  const unsigned int address = metile_smem(p);\n"
                     "  return (unsigned long long)((address & 0x3FFFFu) >> 4) |\n"
                     "         ((unsigned long long)((leading & 0x3FFFFu) >> 4) << 16) |\n"
                     "         ((unsigned long long)((stride & 0x3FFFFu) >> 4) << 32) | (1ull << "
                     "62);\n"));
}

std::string ptx_type(ir::DType t) {
  switch (t) {
    case ir::DType::f16:
      return "f16";
    case ir::DType::bf16:
      return "bf16";
    case ir::DType::f32:
    case ir::DType::i32:
    case ir::DType::u32:
    case ir::DType::i64:
    case ir::DType::i1:
    case ir::DType::i8:
    case ir::DType::u8:
    case ir::DType::i16:
    case ir::DType::u16:
    case ir::DType::f64:
    case ir::DType::f8e4m3:
    case ir::DType::f8e5m2:
      break;
  }
  throw InternalError("emit CUDA: wgmma_mma of " + std::string(ir::dtype_name(t)) +
                      " operands (the verifier allows f16 and bf16)");
}

// Two 16-bit elements in one 32-bit register, the first in the low half (wgmma's register
// fragments hold the lower column there).
void add_pack(Prelude& prelude) {
  prelude.add("pack_16x2", ir::DType::i64,
              helper("unsigned int metile_pack_16x2(unsigned short lo, unsigned short hi)",
                     "  return (unsigned int)lo | ((unsigned int)hi << 16);\n"));
}

// b's transpose bit: set for an N-major b, clear for a K-major one (b_k_major).
std::string b_transpose(const ir::Op& op) {
  return op.int_attr_or("b_k_major", 0) ? "0" : "1";
}

// b's descriptor: a K-major b is described as a is (its leading offset is unused with
// swizzling); an N-major b's 64-column blocks are b_block_bytes apart.
std::string b_descriptor(const ir::Op& op, const std::string& b) {
  const std::string leading = op.int_attr_or("b_k_major", 0)
                                  ? std::string("16")
                                  : std::to_string(op.int_attr("b_block_bytes"));
  return "metile_wgmma_descriptor(" + b + ", " + leading + "u, 1024u)";
}

// wgmma.mma_async with A from registers: the thread's eight elements of the 64x16 tile as four
// 32-bit registers (a0a1, a2a3, a4a5, a6a7), B as in mma below.
std::string mma_register_a(const ir::Op& op, const std::vector<std::string>& operands,
                           const std::string& outputs, const std::string& constraints,
                           const std::string& t, Prelude& prelude) {
  add_pack(prelude);
  const size_t registers = static_cast<size_t>(op.int_attr("n") / 2);
  std::string a_registers, a_constraints;
  for (size_t i = 0; i < 4; ++i) {
    a_registers += (i ? ", %" : "%") + std::to_string(registers + i);
    a_constraints +=
        ", \"r\"(metile_pack_16x2(" + operands[2 * i] + ".bits, " + operands[2 * i + 1] + ".bits))";
  }
  return "asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" + std::to_string(registers + 5) +
         ", 0;\\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(op.int_attr("n")) +
         "k16.f32." + t + "." + t + " {" + outputs + "}, {" + a_registers + "}, %" +
         std::to_string(registers + 4) + ", p, 1, 1, " + b_transpose(op) +
         ";\\n}\\n\" : " + constraints + " :" + a_constraints.substr(1) + ", \"l\"(" +
         b_descriptor(op, operands[8]) + "), \"r\"(1));";
}

// One wgmma.mma_async: D (n/2 f32 registers per thread) += A (64x16, K-major) @ B (16xn,
// N-major: the transpose bit), both from 128-byte-swizzled shared memory. A's 8-row groups are
// 1024 bytes apart (its leading offset is unused with swizzling); B's 8-row groups too, and
// its 64-column blocks b_block_bytes apart.
std::string mma(const ir::Op& op, const std::vector<std::string>& operands,
                const std::vector<std::string>& results, ir::DType element, Prelude& prelude) {
  add_descriptor(prelude);
  const int64_t n = op.int_attr("n");
  const size_t registers = results.size();
  std::string outputs, constraints;
  for (size_t i = 0; i < registers; ++i) {
    outputs += (i ? ", %" : "%") + std::to_string(i);
    constraints += std::string(i ? ", " : "") + "\"+f\"(" + results[i] + ")";
  }
  const std::string r = std::to_string(registers);
  const std::string t = ptx_type(element);
  if (ir::wgmma_b_operand(op) == 8)
    return mma_register_a(op, operands, outputs, constraints, t, prelude);
  return "asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" + std::to_string(registers + 2) +
         ", 0;\\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." + t + "." + t +
         " {" + outputs + "}, %" + r + ", %" + std::to_string(registers + 1) + ", p, 1, 1, 0, " +
         b_transpose(op) + ";\\n}\\n\" : " + constraints + " : \"l\"(metile_wgmma_descriptor(" +
         operands[0] + ", 16u, 1024u)), \"l\"(" + b_descriptor(op, operands[1]) + "), \"r\"(1));";
}

}  // namespace

std::string tensor_map_name(int64_t index) {
  return "metile_tensor_map" + std::to_string(index);
}

void declare_tensor_map(Prelude& prelude) {
  prelude.add_type("metile_tensor_map", std::string(kTensorMap));
}

std::string statement(const ir::Op& op, const std::vector<std::string>& operands,
                      const std::vector<std::string>& results, ir::DType element,
                      Prelude& prelude) {
  using K = ir::OpKind;
  if (op.kind == K::MbarrierInit)
    return mbarrier(prelude, "mbarrier_init", "const void* bar, unsigned int count",
                    "  asm volatile(\"mbarrier.init.shared::cta.b64 [%0], %1;\" :: "
                    "\"r\"(metile_smem(bar)), \"r\"(count) : \"memory\");\n") +
           "(" + operands[0] + ", " + std::to_string(op.int_attr("count")) + "u);";
  if (op.kind == K::MbarrierFence)
    return "asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");";
  if (op.kind == K::MbarrierArrive)
    return mbarrier(prelude, "mbarrier_arrive", "const void* bar",
                    "  asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\" :: "
                    "\"r\"(metile_smem(bar)) : \"memory\");\n") +
           "(" + operands[0] + ");";
  if (op.kind == K::MbarrierArriveExpectTx)
    return mbarrier(prelude, "mbarrier_arrive_expect_tx", "const void* bar, unsigned int bytes",
                    "  asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\" "
                    ":: \"r\"(metile_smem(bar)), \"r\"(bytes) : \"memory\");\n") +
           "(" + operands[0] + ", " + std::to_string(op.int_attr("bytes")) + "u);";
  if (op.kind == K::MbarrierWait)
    // try_wait suspends the thread for a while before it reports the phase incomplete.
    return mbarrier(prelude, "mbarrier_wait", "const void* bar, int parity",
                    "  asm volatile(\"{\\n.reg .pred done;\\nWAIT:\\n"
                    "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\\n"
                    "@!done bra WAIT;\\n}\\n\" :: \"r\"(metile_smem(bar)), \"r\"(parity) : "
                    "\"memory\");\n") +
           "(" + operands[0] + ", " + operands[1] + ");";
  if (op.kind == K::TmaLoad) {
    declare_tensor_map(prelude);
    return mbarrier(prelude, "tma_load",
                    "void* dst, const metile_tensor_map* map, const void* bar, int c0, int c1",
                    "  asm volatile(\"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
                    "complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\" :: "
                    "\"r\"(metile_smem(dst)), \"l\"(reinterpret_cast<unsigned long long>(map)), "
                    "\"r\"(metile_smem(bar)), \"r\"(c0), \"r\"(c1) : \"memory\");\n") +
           "(" + operands[0] + ", " + tensor_map_name(op.int_attr("map")) + ", " + operands[1] +
           ", " + operands[2] + ", " + operands[3] + ");";
  }
  if (op.kind == K::AsyncProxyFence)
    return "asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");";
  if (op.kind == K::WgmmaFence)
    return "asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");";
  if (op.kind == K::WgmmaMma) return mma(op, operands, results, element, prelude);
  if (op.kind == K::WgmmaCommit)
    return "asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");";
  if (op.kind == K::WgmmaWait) {
    // The accumulators as in-out operands keep NVVM's reads of them below the wait, and an
    // add of -0.0 (exact for every value, and kept by ptxas) to each, inside the asm, keeps
    // ptxas's: without it ptxas 13.0 hoisted the epilogue's F2FP bf16 conversions of the
    // accumulator registers above the wait (DEPBAR.LE gsb0, 0x0), reading unfinished
    // accumulators once the ring had wrapped (seen in the SASS, and as wrong results on
    // the H200). Results that only the next wgmma reads skip the adds: an add of a register
    // that a wgmma left in flight would make ptxas wait for that wgmma.
    const bool fence = op.int_attr_or("feeds_wgmma_only", 0) == 0;
    std::string registers, adds;
    for (size_t i = 0; i < results.size(); ++i) {
      registers += std::string(i ? ", " : "") + "\"+f\"(" + results[i] + ")";
      if (fence)
        adds += "\\nadd.f32 %" + std::to_string(i) + ", %" + std::to_string(i) + ", 0f80000000;";
    }
    return "asm volatile(\"wgmma.wait_group.sync.aligned " +
           std::to_string(op.int_attr("pending")) + ";" + adds + "\" : " + registers +
           " :: \"memory\");";
  }
  if (op.kind == K::SetMaxNReg)
    return "asm volatile(\"setmaxnreg." + op.str_attr("action") + ".sync.aligned.u32 " +
           std::to_string(op.int_attr("registers")) + ";\");";
  throw InternalError("emit CUDA: " + std::string(ir::op_name(op.kind)) +
                      " is not an asynchronous pipeline op");
}

}  // namespace metile::codegen::cuda_wgmma
