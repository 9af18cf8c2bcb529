// Every op of ops.def: the Metal IR ones render (with the expected text), the Tile IR-only
// ones are rejected with an error naming them. A new op without an emitter case fails here
// (and the emitter's switch warns at compile time).
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "metal_kernels.h"
#include "metile/codegen/c_emitter.h"
#include "metile/codegen/emit.h"
#include "metile/codegen/msl/msl_dialect.h"

namespace metile::codegen::testing {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Type;

constexpr OpKind kAllOps[] = {
#define METILE_OP(name, ...) OpKind::name,
#include "metile/ir/ops.def"
#undef METILE_OP
};

// The values a sample op may use: a read-write f32 buffer, an i32 scalar, an f32 value.
struct Sample {
  ir::ValueId buf, n, x;
};

using SampleFn = std::function<void(MetalBuilder&, const Sample&)>;

struct Case {
  SampleFn build;
  std::string expected;  // text the rendering must contain
  bool cuda = false;     // an sm90 op, which only the CUDA dialect renders (rendered for sm90)
};

ir::ValueId f(MetalBuilder& b, OpKind kind, std::vector<ir::ValueId> operands, Type t,
              ir::Attrs attrs = {}) {
  return b.create1(kind, std::move(operands), t, std::move(attrs));
}

std::map<OpKind, Case> metal_cases() {
  const Type i32 = Type::scalar(DType::i32), f32 = Type::scalar(DType::f32);
  auto int_binary = [&](OpKind k) {
    return [=](MetalBuilder& b, const Sample& s) { f(b, k, {s.n, s.n}, i32); };
  };
  auto float_unary = [&](OpKind k, bool fast = false) {
    return [=](MetalBuilder& b, const Sample& s) { b.unary(k, s.x, fast); };
  };
  auto simd = [&](OpKind k, bool lane) {
    return [=](MetalBuilder& b, const Sample& s) {
      f(b, k, lane ? std::vector<ir::ValueId>{s.x, s.n} : std::vector<ir::ValueId>{s.x}, f32);
    };
  };
  auto geometry = [&](OpKind k, ir::Attrs attrs) {
    return [=](MetalBuilder& b, const Sample&) { f(b, k, {}, i32, attrs); };
  };
  auto axis = [](int64_t a) { return ir::Attrs{{"axis", a}}; };
  std::map<OpKind, Case> c;
  c[OpKind::Constant] = {[](MetalBuilder& b, const Sample&) { b.f32(1.5); }, "= 1.5f;"};
  c[OpKind::ThreadIndex] = {geometry(OpKind::ThreadIndex, axis(0)),
                            "int(thread_position_in_threadgroup.x)"};
  c[OpKind::ThreadgroupIndex] = {geometry(OpKind::ThreadgroupIndex, axis(2)),
                                 "int(threadgroup_position_in_grid.z)"};
  c[OpKind::ThreadgroupCount] = {geometry(OpKind::ThreadgroupCount, axis(1)),
                                 "int(threadgroups_per_grid.y)"};
  c[OpKind::SimdLane] = {geometry(OpKind::SimdLane, {}), "int(simd_lane)"};
  c[OpKind::SimdGroup] = {geometry(OpKind::SimdGroup, {}), "int(simd_group)"};
  c[OpKind::Add] = {int_binary(OpKind::Add), "= n + n;"};
  c[OpKind::Sub] = {int_binary(OpKind::Sub), "= n - n;"};
  c[OpKind::Mul] = {int_binary(OpKind::Mul), "= n * n;"};
  c[OpKind::Div] = {int_binary(OpKind::Div), "= n / n;"};
  c[OpKind::Rem] = {int_binary(OpKind::Rem), "= n % n;"};
  c[OpKind::FloorDiv] = {int_binary(OpKind::FloorDiv), "= metile_floordiv(n, n);"};
  c[OpKind::Min] = {int_binary(OpKind::Min), "= min(n, n);"};
  c[OpKind::Max] = {int_binary(OpKind::Max), "= max(n, n);"};
  c[OpKind::And] = {int_binary(OpKind::And), "= n & n;"};
  c[OpKind::Or] = {int_binary(OpKind::Or), "= n | n;"};
  c[OpKind::Xor] = {int_binary(OpKind::Xor), "= n ^ n;"};
  c[OpKind::Shl] = {int_binary(OpKind::Shl), "= n << n;"};
  c[OpKind::Shr] = {int_binary(OpKind::Shr), "= n >> n;"};
  c[OpKind::Cmp] = {[](MetalBuilder& b, const Sample& s) { b.cmp("ge", s.n, s.n); },
                    "const bool v3 = n >= n;"};
  c[OpKind::Select] = {[](MetalBuilder& b, const Sample& s) {
                         f(b, OpKind::Select, {b.named(b.cmp("ne", s.n, s.n), "c"), s.x, s.x},
                           Type::scalar(DType::f32));
                       },
                       "= c ? x : x;"};
  c[OpKind::Cast] = {
      [](MetalBuilder& b, const Sample& s) { f(b, OpKind::Cast, {s.x}, Type::scalar(DType::u32)); },
      "= static_cast<uint>(x);"};
  c[OpKind::Neg] = {float_unary(OpKind::Neg), "= -x;"};
  c[OpKind::Abs] = {float_unary(OpKind::Abs), "= abs(x);"};
  c[OpKind::Exp] = {float_unary(OpKind::Exp, true), "= fast::exp(x);"};
  c[OpKind::Exp2] = {float_unary(OpKind::Exp2), "= precise::exp2(x);"};
  c[OpKind::Log] = {float_unary(OpKind::Log), "= precise::log(x);"};
  c[OpKind::Sqrt] = {float_unary(OpKind::Sqrt), "= precise::sqrt(x);"};
  c[OpKind::Rsqrt] = {float_unary(OpKind::Rsqrt, true), "= fast::rsqrt(x);"};
  c[OpKind::Tanh] = {float_unary(OpKind::Tanh), "= precise::tanh(x);"};
  c[OpKind::Sin] = {float_unary(OpKind::Sin), "= precise::sin(x);"};
  c[OpKind::Cos] = {float_unary(OpKind::Cos), "= precise::cos(x);"};
  c[OpKind::Floor] = {float_unary(OpKind::Floor), "= floor(x);"};
  c[OpKind::Ceil] = {float_unary(OpKind::Ceil), "= ceil(x);"};
  c[OpKind::InlineAsm] = {[=](MetalBuilder& b, const Sample& s) {
                            f(b, OpKind::InlineAsm, {s.n}, i32,
                              {{"asm", std::string("mov.b32 $0, $1;")},
                               {"constraints", std::string("=r,r")},
                               {"pure", int64_t{1}}});
                          },
                          "asm(\"mov.b32 %0, %1;\" : \"=r\"(v3) : \"r\"(n));", true};
  c[OpKind::PtrAdd] = {[](MetalBuilder& b, const Sample& s) { b.ptr_add(s.buf, s.n); },
                       "device float* v3 = buf + n;"};
  c[OpKind::Load] = {[](MetalBuilder& b, const Sample& s) { b.load(s.buf); }, "= buf[0];"};
  c[OpKind::Store] = {[](MetalBuilder& b, const Sample& s) { b.store(s.buf, s.x); },
                      "  buf[0] = x;\n"};
  c[OpKind::PackedLoad] = {[](MetalBuilder& b, const Sample& s) {
                             f(b, OpKind::PackedLoad, {s.buf}, Type::vector(DType::f32, 4));
                           },
                           "= ((device packed_float4*)(buf))[0];"};
  c[OpKind::Extract] = {[=](MetalBuilder& b, const Sample& s) {
                          const ir::ValueId v =
                              f(b, OpKind::PackedLoad, {s.buf}, Type::vector(DType::f32, 4));
                          f(b, OpKind::Extract, {v}, f32, {{"index", int64_t{2}}});
                        },
                        ".z;"};
  c[OpKind::Pack] = {[](MetalBuilder& b, const Sample& s) {
                       f(b, OpKind::Pack, {s.x, s.x}, Type::vector(DType::f32, 2));
                     },
                     "= packed_float2(x, x);"};
  c[OpKind::PackedStore] = {[](MetalBuilder& b, const Sample& s) {
                              b.create(OpKind::PackedStore, {s.buf, s.x, s.x}, {});
                            },
                            "((device packed_float2*)(buf))[0] = packed_float2(x, x);"};
  c[OpKind::IsAligned] = {
      [](MetalBuilder& b, const Sample& s) {
        f(b, OpKind::IsAligned, {s.buf}, Type::scalar(DType::i1), {{"bytes", int64_t{16}}});
      },
      "= (reinterpret_cast<ulong>(buf) & 15) == 0;"};
  const Type matrix = Type::matrix(DType::f32);
  c[OpKind::MatrixFill] = {
      [=](MetalBuilder& b, const Sample& s) { f(b, OpKind::MatrixFill, {s.x}, matrix); },
      "= make_filled_simdgroup_matrix<float, 8, 8>(x);"};
  c[OpKind::MatrixLoad] = {
      [=](MetalBuilder& b, const Sample& s) {
        f(b, OpKind::MatrixLoad, {s.buf, s.n, s.n}, matrix, {{"transpose", int64_t{1}}});
      },
      "simdgroup_load(v3, buf + n, ulong(n), ulong2(0, 0), true);"};
  c[OpKind::MatrixStore] = {[=](MetalBuilder& b, const Sample& s) {
                              const ir::ValueId m = f(b, OpKind::MatrixFill, {s.x}, matrix);
                              b.create(OpKind::MatrixStore, {m, s.buf, s.n, s.n}, {});
                            },
                            "simdgroup_store(v3, buf + n, ulong(n), ulong2(0, 0), false);"};
  c[OpKind::MatrixMma] = {[=](MetalBuilder& b, const Sample& s) {
                            const ir::ValueId m = f(b, OpKind::MatrixFill, {s.x}, matrix);
                            f(b, OpKind::MatrixMma, {m, m, m}, matrix);
                          },
                          "simdgroup_multiply_accumulate(v4, v3, v3, v3);"};
  // A 32 x 32 matmul2d over buf whose epilogue doubles each element.
  c[OpKind::MppMatmul2d] = {
      [](MetalBuilder& b, const Sample& s) {
        ir::Block epilogue;
        const Type f32 = Type::scalar(DType::f32);
        epilogue.args.push_back(b.kernel().new_value(f32));
        ir::Op twice;
        twice.kind = OpKind::Add;
        twice.operands = {epilogue.args[0], epilogue.args[0]};
        twice.results = {b.kernel().new_value(f32)};
        ir::Op yield;
        yield.kind = OpKind::Yield;
        yield.operands = twice.results;
        epilogue.ops = {twice, yield};
        b.create(OpKind::MppMatmul2d, {s.buf, s.buf, s.buf, s.n, s.n, s.n, s.n, s.n, s.n, s.n, s.n},
                 {}, {{"m", int64_t{32}}, {"n", int64_t{32}}, {"simdgroups", int64_t{1}}},
                 {epilogue});
      },
      "metile_mpp_op.run(metile_mpp_a_tile, metile_mpp_b_tile, "
      "metile_mpp_acc);"};
  // sm90's asynchronous pipeline ops (docs/hopper.md), over an mbarrier and a bf16 tile.
  const auto async = [](OpKind kind, ir::Attrs attrs) -> SampleFn {
    return [=](MetalBuilder& b, const Sample& s) {
      const ir::ValueId bar =
          f(b, OpKind::ThreadgroupBuffer, {}, Type::ptr(DType::i64, ir::AddressSpace::Threadgroup),
            {{"offset", int64_t{0}}, {"size", int64_t{2}}});
      const ir::ValueId tile =
          f(b, OpKind::ThreadgroupBuffer, {}, Type::ptr(DType::bf16, ir::AddressSpace::Threadgroup),
            {{"offset", int64_t{16}}, {"size", int64_t{8}}});
      std::vector<ir::ValueId> operands;
      if (kind == OpKind::MbarrierInit || kind == OpKind::MbarrierArrive ||
          kind == OpKind::MbarrierArriveExpectTx)
        operands = {bar};
      if (kind == OpKind::MbarrierWait) operands = {bar, s.n};
      if (kind == OpKind::TmaLoad) operands = {tile, bar, s.n, s.n};
      if (kind != OpKind::WgmmaMma) return b.create(kind, operands, {}, attrs), void();
      b.create(kind, {tile, tile, s.x, s.x, s.x, s.x},
               std::vector<Type>(4, Type::scalar(DType::f32)), attrs);
    };
  };
  c[OpKind::MbarrierInit] = {async(OpKind::MbarrierInit, {{"count", int64_t{2}}}),
                             "metile_mbarrier_init(v3, 2u);", true};
  c[OpKind::MbarrierFence] = {async(OpKind::MbarrierFence, {}), "fence.mbarrier_init", true};
  c[OpKind::MbarrierArrive] = {async(OpKind::MbarrierArrive, {}), "metile_mbarrier_arrive(v3);",
                               true};
  c[OpKind::MbarrierArriveExpectTx] = {
      async(OpKind::MbarrierArriveExpectTx, {{"bytes", int64_t{1024}}}),
      "metile_mbarrier_arrive_expect_tx(v3, 1024u);", true};
  c[OpKind::MbarrierWait] = {async(OpKind::MbarrierWait, {}), "metile_mbarrier_wait(v3, n);", true};
  c[OpKind::TmaLoad] = {async(OpKind::TmaLoad, {{"map", int64_t{0}}}),
                        "metile_tma_load(v4, metile_tensor_map0, v3, n, n);", true};
  c[OpKind::WgmmaFence] = {async(OpKind::WgmmaFence, {}), "wgmma.fence.sync.aligned;", true};
  c[OpKind::WgmmaMma] = {
      async(OpKind::WgmmaMma, {{"n", int64_t{8}}, {"b_block_bytes", int64_t{128}}}),
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16", true};
  c[OpKind::WgmmaCommit] = {async(OpKind::WgmmaCommit, {}), "wgmma.commit_group.sync.aligned;",
                            true};
  c[OpKind::WgmmaWait] = {async(OpKind::WgmmaWait, {{"pending", int64_t{1}}}),
                          "wgmma.wait_group.sync.aligned 1;", true};
  c[OpKind::SetMaxNReg] = {
      async(OpKind::SetMaxNReg, {{"registers", int64_t{40}}, {"action", std::string("dec")}}),
      "setmaxnreg.dec.sync.aligned.u32 40;", true};
  // Per-thread asynchronous copies: cp.async on CUDA (the MSL rendering, a plain copy, is
  // AsyncCopyRendersAsAPlainCopyInMsl's).
  const auto copy = [](ir::Attrs attrs) -> SampleFn {
    return [=](MetalBuilder& b, const Sample& s) {
      const ir::ValueId slot =
          f(b, OpKind::ThreadgroupBuffer, {}, Type::ptr(DType::f32, ir::AddressSpace::Threadgroup),
            {{"offset", int64_t{16}}, {"size", int64_t{4}}});
      b.create(OpKind::AsyncCopy, {slot, s.buf}, {}, attrs);
    };
  };
  c[OpKind::AsyncCopy] = {copy({{"elements", int64_t{4}}}), "metile_cp_async_16(v3, buf, true);",
                          true};
  // Atomics: MSL's relaxed update in a helper fenced for acq_rel; CUDA's PTX atom.
  c[OpKind::AtomicRmw] = {[](MetalBuilder& b, const Sample& s) {
                            f(b, OpKind::AtomicRmw, {s.buf, s.x}, Type::scalar(DType::f32),
                              {{"kind", std::string("add")},
                               {"sem", std::string("acq_rel")},
                               {"scope", std::string("gpu")}});
                          },
                          "= metile_atomic_add_acq_rel(buf, x);"};
  c[OpKind::AtomicCas] = {
      [](MetalBuilder& b, const Sample&) {
        const ir::ValueId ints = b.add_param("ints", Type::ptr(DType::i32), "read_write");
        const ir::ValueId one =
            f(b, OpKind::Constant, {}, Type::scalar(DType::i32), {{"value", int64_t{1}}});
        f(b, OpKind::AtomicCas, {ints, one, one}, Type::scalar(DType::i32),
          {{"sem", std::string("relaxed")}, {"scope", std::string("cta")}});
      },
      "= metile_atom_cas_relaxed_cta(ints, v4, v4);", true};
  c[OpKind::AsyncCopyCommit] = {async(OpKind::AsyncCopyCommit, {}), "cp.async.commit_group;", true};
  c[OpKind::AsyncCopyWait] = {async(OpKind::AsyncCopyWait, {{"pending", int64_t{2}}}),
                              "cp.async.wait_group 2;", true};
  c[OpKind::AsyncProxyFence] = {async(OpKind::AsyncProxyFence, {}),
                                "fence.proxy.async.shared::cta;", true};
  c[OpKind::ThreadgroupBuffer] = {[](MetalBuilder& b, const Sample&) {
                                    f(b, OpKind::ThreadgroupBuffer, {},
                                      Type::ptr(DType::f32, ir::AddressSpace::Threadgroup),
                                      {{"offset", int64_t{16}}, {"size", int64_t{4}}});
                                  },
                                  "threadgroup float* v3 = (threadgroup float*)(tg_mem + 16);"};
  c[OpKind::SimdShuffle] = {simd(OpKind::SimdShuffle, true), "= simd_shuffle(x, ushort(n));"};
  c[OpKind::SimdShuffleXor] = {simd(OpKind::SimdShuffleXor, true),
                               "= simd_shuffle_xor(x, ushort(n));"};
  c[OpKind::SimdBroadcast] = {simd(OpKind::SimdBroadcast, true), "= simd_broadcast(x, ushort(n));"};
  c[OpKind::SimdShuffleDown] = {simd(OpKind::SimdShuffleDown, true),
                                "= simd_shuffle_down(x, ushort(n));"};
  c[OpKind::SimdSum] = {simd(OpKind::SimdSum, false), "= simd_sum(x);"};
  c[OpKind::SimdMax] = {simd(OpKind::SimdMax, false), "= simd_max(x);"};
  c[OpKind::SimdMin] = {simd(OpKind::SimdMin, false), "= simd_min(x);"};
  c[OpKind::Barrier] = {[](MetalBuilder& b, const Sample&) { b.barrier("threadgroup", "all"); },
                        "threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);"};
  c[OpKind::AssertTrue] = {
      [](MetalBuilder& b, const Sample& s) {
        const ir::ValueId c = b.named(b.cmp("ne", s.n, s.n), "c");
        b.create(OpKind::AssertTrue, {c, c, s.n}, {}, {{"message", std::string("n \"changed\"")}});
      },
      "if (c && !c) metile_device_assert_failed(\"n \\\"changed\\\"\", \"\", 0, n);"};
  c[OpKind::Print] = {
      [](MetalBuilder& b, const Sample& s) {
        const ir::ValueId c = b.named(b.cmp("ne", s.n, s.n), "c");
        b.create(OpKind::Print, {c, s.n, s.x}, {}, {{"format", std::string("n %i x %f\n")}});
      },
      "if (c) metile_device_print(\"n %i x %f\\n\", int(n), float(x));"};
  c[OpKind::For] = {[](MetalBuilder& b, const Sample& s) {
                      auto loop = b.begin_for(s.n, s.n, s.n, {s.x});
                      b.end_for({b.op(OpKind::Add, loop.carried[0], s.x)});
                    },
                    // A step that is not a positive constant is checked before the loop.
                    "float v4 = x;\n  if (n <= 0) __builtin_trap();\n  for (int i = n; i < n; i += "
                    "n) {\n    const float v5 = v4 + x;\n    v4 = v5;\n  }\n  const float v6 = "
                    "v4;\n"};
  c[OpKind::If] = {[](MetalBuilder& b, const Sample& s) {
                     b.begin_if(b.named(b.cmp("eq", s.n, s.n), "c"));
                     b.store(s.buf, s.x);
                     b.begin_else({});
                     b.end_if({});
                   },
                   "    buf[0] = x;\n  }\n"};
  c[OpKind::While] = {
      [](MetalBuilder& b, const Sample& s) {
        const ir::ValueId a = b.begin_while({s.x})[0];
        const ir::ValueId p = b.named(b.cmp("lt", a, s.x), "p");
        const ir::ValueId x = b.begin_while_body(p, {a})[0];
        b.end_while({b.op(OpKind::Add, x, s.x)});
      },
      "float v3 = x;\n  float v5 = x;\n  while (true) {\n    const bool p = v3 < "
      "x;\n    v5 = v3;\n    if (!p) break;\n    const float v6 = v5 + x;\n    v3 = "
      "v6;\n  }\n  const float v7 = v5;\n"};
  c[OpKind::Yield] = {[](MetalBuilder& b, const Sample& s) {
                        b.begin_if(b.named(b.cmp("eq", s.n, s.n), "c"));
                        b.begin_else({s.x});
                        b.named(b.end_if({s.x})[0], "r");
                      },
                      "    r = x;\n"};
  return c;
}

std::string emit_sample(const SampleFn& build, bool cuda = false) {
  ir::Kernel k = metal_kernel("sample", 32, 32);
  MetalBuilder b(k);
  Sample s;
  s.buf = b.add_param("buf", Type::ptr(DType::f32), "read_write");
  s.n = b.add_param("n", Type::scalar(DType::i32));
  s.x = b.named(b.load(s.buf), "x");
  build(b, s);
  if (cuda) {
    // TmaLoad names tensor map 0: the kernel declares one, of the buffer and n.
    k.attrs["tensor_maps"] = int64_t{1};
    for (const char* field : {"buffer", "outer", "inner"})
      k.attrs[std::string("tensor_map0_") + field] = int64_t{field[0] == 'b' ? 0 : 1};
    k.attrs["tensor_map0_box_outer"] = int64_t{8};
    k.attrs["tensor_map0_box_inner"] = int64_t{64};
  }
  return emit(k, cuda ? target::target_by_name("sm90") : target::default_target()).source;
}

// Where copies are synchronous (MSL), an async_copy is each element's assignment, zeros where
// its predicate is false, and commits and waits are comments.
TEST(OpCoverage, AsyncCopyRendersAsAPlainCopyInMsl) {
  const std::string src = emit_sample(
      [](MetalBuilder& b, const Sample& s) {
        const ir::ValueId slot = f(b, OpKind::ThreadgroupBuffer, {},
                                   Type::ptr(DType::f32, ir::AddressSpace::Threadgroup),
                                   {{"offset", int64_t{16}}, {"size", int64_t{4}}});
        const ir::ValueId yes =
            f(b, OpKind::Constant, {}, Type::scalar(DType::i1), {{"value", int64_t{1}}});
        b.create(OpKind::AsyncCopy, {slot, s.buf, yes}, {}, {{"elements", int64_t{2}}});
        b.create(OpKind::AsyncCopyCommit, {}, {}, {});
        b.create(OpKind::AsyncCopyWait, {}, {}, {{"pending", int64_t{0}}});
      },
      false);
  EXPECT_NE(src.find("v3[0] = v4 ? buf[0] : float(0.0f); v3[1] = v4 ? buf[1] : float(0.0f);"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("// async_copy_wait 0: nothing is in flight"), std::string::npos) << src;
}

TEST(OpCoverage, EveryMetalOpRenders) {
  const std::map<OpKind, Case> cases = metal_cases();
  for (OpKind kind : kAllOps) {
    const ir::OpInfo& info = ir::op_info(kind);
    if (!info.in_metal) continue;
    auto it = cases.find(kind);
    if (it == cases.end()) {
      ADD_FAILURE() << "no emitter test case for Metal IR op " << info.name;
      continue;
    }
    std::string src;
    EXPECT_NO_THROW(src = emit_sample(it->second.build, it->second.cuda)) << info.name;
    EXPECT_NE(src.find(it->second.expected), std::string::npos)
        << info.name << " should render '" << it->second.expected << "' in:\n"
        << src;
  }
}

TEST(OpCoverage, TileOnlyOpsAreRejectedByName) {
  for (OpKind kind : kAllOps) {
    const ir::OpInfo& info = ir::op_info(kind);
    if (info.in_metal) continue;
    // Straight to the emitter: emit_msl's verifier would reject the kernel first.
    ir::Kernel k = metal_kernel("tile_op", 32, 0);
    MetalBuilder b(k);
    b.create1(kind, {}, Type::scalar(DType::i32));
    CEmitter emitter(k, msl_dialect(), target::default_target());
    try {
      emitter.body();
      ADD_FAILURE() << info.name << " was rendered in Metal IR";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(info.name) +
                                           ": is a Tile IR op and has no rendering"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace metile::codegen::testing
