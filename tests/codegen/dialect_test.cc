// The dialect interface: emit picks the dialect from the target's language, and each hook
// or table field of a dialect changes exactly its own rendering and nothing else.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <vector>

#include "metal_kernels.h"
#include "metile/codegen/cuda/cuda_dialect.h"
#include "metile/codegen/emit.h"
#include "metile/codegen/msl/msl_dialect.h"

namespace metile::codegen::testing {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Type;

// MSL with one hook replaced: each test dialect below overrides one.
class MslWith : public CDialect {
 public:
  explicit MslWith(const DialectTable& table = msl_dialect().table()) : CDialect(table) {}
  void require_dtype(ir::DType t, const target::Target& target) const override {
    msl_dialect().require_dtype(t, target);
  }
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

// The lines of `changed` that differ from `msl` (the two must have the same line count,
// else the whole of `changed`).
std::vector<std::string> changed_lines(const std::string& msl, const std::string& changed) {
  const std::vector<std::string> a = lines_of(msl), b = lines_of(changed);
  if (a.size() != b.size()) return b;
  std::vector<std::string> out;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) out.push_back(b[i]);
  return out;
}

std::string msl_of(const ir::Kernel& k) {
  return emit(k, target::target_by_name("apple-m3")).source;  // the host adds a work-group function
}

std::string source_in(const ir::Kernel& k, const CDialect& dialect) {
  return emit_in_dialect(k, dialect, target::default_target()).source;
}

TEST(DialectFor, PicksTheDialectOfTheTargetsLanguage) {
  EXPECT_EQ(&dialect_for(target::default_target()), &msl_dialect());
  EXPECT_EQ(&dialect_for(target::target_by_name("apple-m3")), &msl_dialect());
  EXPECT_EQ(msl_of(reduction_kernel()),
            emit_in_dialect(reduction_kernel(), msl_dialect(), target::target_by_name("apple-m3"))
                .source);
  EXPECT_EQ(&dialect_for(target::target_by_name("sm90")), &cuda_dialect());
}

TEST(DialectHooks, BarrierChangesOnlyBarrierStatements) {
  struct Syncs : MslWith {
    std::string barrier(BarrierScope scope, BarrierMem) const override {
      return scope == BarrierScope::Threadgroup ? "__syncthreads();" : "__syncwarp();";
    }
  } syncs;
  EXPECT_EQ(changed_lines(msl_of(reduction_kernel()), source_in(reduction_kernel(), syncs)),
            (std::vector<std::string>{"  __syncthreads();", "  __syncwarp();"}));
}

TEST(DialectHooks, MathCallChangesOnlyMathCalls) {
  struct Intrinsics : MslWith {
    std::string math_call(MathFn fn, bool fast, const ir::Type& t,
                          const std::vector<std::string>& args, Prelude& prelude) const override {
      if (fn == MathFn::Exp && fast) return "__expf(" + args[0] + ")";
      return MslWith::math_call(fn, fast, t, args, prelude);
    }
  } intrinsics;
  EXPECT_EQ(changed_lines(msl_of(vec4_kernel()), source_in(vec4_kernel(), intrinsics)),
            (std::vector<std::string>{"  const float4 v11 = __expf(v10);"}));
}

TEST(DialectHooks, CollectiveHelpersGoIntoThePreludeOnce) {
  struct WarpSum : MslWith {
    std::string collective(Collective c, const ir::Type& t, const std::string& value,
                           const std::string& lane, Prelude& prelude) const override {
      if (c != Collective::Sum) return MslWith::collective(c, t, value, lane, prelude);
      prelude.add("warp_sum", t.dtype, "float warp_sum(float v) { return v; }\n");
      return "warp_sum(" + value + ")";
    }
  } warp_sum;
  const std::string src = source_in(reduction_kernel(), warp_sum);
  EXPECT_NE(src.find("using namespace metal;\n\nfloat warp_sum(float v) { return v; }\n\n"
                     "static inline void block_sum_body("),
            std::string::npos)
      << src;
  EXPECT_EQ(src.find("warp_sum(float v)"), src.rfind("warp_sum(float v)")) << src;
  EXPECT_NE(src.find("const float partial = warp_sum(v9);"), std::string::npos) << src;
  EXPECT_NE(src.find("const float total = warp_sum(v18);"), std::string::npos) << src;
}

TEST(DialectHooks, SpecialFloatSpellsNanAndInfinities) {
  struct Bits : MslWith {
    std::string special_float(SpecialFloat v, ir::DType) const override {
      return v == SpecialFloat::NaN ? "nan_bits" : v == SpecialFloat::Infinity ? "inf" : "ninf";
    }
  } bits;
  ir::Kernel k = metal_kernel("specials", 32, 0);
  MetalBuilder b(k);
  auto out = b.add_param("out", Type::ptr(DType::f32), "write");
  const ir::ValueId nan = b.f32(NAN);
  const ir::ValueId inf = b.f32(INFINITY);
  const ir::ValueId ninf = b.f32(-INFINITY);
  b.store(out, b.op(OpKind::Add, b.op(OpKind::Add, nan, inf), ninf));
  EXPECT_EQ(changed_lines(msl_of(k), source_in(k, bits)),
            (std::vector<std::string>{"  const float v1 = nan_bits;", "  const float v2 = inf;",
                                      "  const float v3 = ninf;"}));
  EXPECT_NE(msl_of(k).find("const float v3 = -INFINITY;"), std::string::npos) << msl_of(k);
}

TEST(DialectTable, DynamicThreadgroupBlockHasNoSize) {
  static const DialectTable dynamic = [] {
    DialectTable t = msl_dialect().table();
    t.block_declaration = "extern __shared__ unsigned char";
    t.block_attributes = "";
    t.block_dynamic = true;
    return t;
  }();
  const MslWith shared(dynamic);
  EXPECT_EQ(changed_lines(msl_of(reduction_kernel()), source_in(reduction_kernel(), shared)),
            (std::vector<std::string>{"  extern __shared__ unsigned char tg_mem[];"}));
}

TEST(DialectTable, VectorTypeAndSelectComeFromTheDialect) {
  struct Named : MslWith {
    std::string vector_type(ir::DType t, int64_t width) const override {
      return "vec" + std::to_string(width) + "_" + std::string(scalar_type(t));
    }
    std::string select(const ir::Type& c_type, const std::string& c, const std::string& a,
                       const std::string& b) const override {
      if (!c_type.is_vector()) return MslWith::select(c_type, c, a, b);
      return "pick(" + c + ", " + a + ", " + b + ")";
    }
  } named;
  const std::string src = source_in(vec4_kernel(), named);
  EXPECT_NE(src.find("const vec4_float v = ((device const vec4_float*)(v6))[0];"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("const vec4_float v10 = pick(v9, sq, v);"), std::string::npos) << src;
  EXPECT_EQ(src.find("float4"), std::string::npos) << src;
}

TEST(DialectReservedWords, MslReservesWhatTheSourceUses) {
  const CDialect& msl = msl_dialect();
  for (const char* name : {"float",
                           "float4",
                           "half2",
                           "simd_sum",
                           "simd_shuffle_xor",
                           "tg_mem",
                           "exp",
                           "fmod",
                           "NAN",
                           "INFINITY",
                           "threadgroup_barrier",
                           "select",
                           "ushort",
                           "simd_lane",
                           "packed_x",
                           "metile_q",
                           "a__b",
                           "_X",
                           "main",
                           "mem_flags"})
    EXPECT_TRUE(msl.is_reserved(name)) << name;
  for (const char* name : {"x", "total", "float5", "simd", "tg", "_x", "packed"})
    EXPECT_FALSE(msl.is_reserved(name)) << name;
}

TEST(DialectReservedWords, TableWordsRenameHints) {
  static constexpr std::string_view kWords[] = {"acc"};
  static const DialectTable table = [] {
    DialectTable t = msl_dialect().table();
    t.reserved_words = kWords;
    return t;
  }();
  const MslWith strict(table);
  ir::Kernel k = metal_kernel("words", 32, 0);
  MetalBuilder b(k);
  auto out = b.add_param("out", Type::ptr(DType::f32), "write");
  b.store(out, b.named(b.f32(1.0), "acc"));
  EXPECT_NE(msl_of(k).find("const float acc = 1.0f;"), std::string::npos) << msl_of(k);
  EXPECT_NE(source_in(k, strict).find("const float acc_1 = 1.0f;"), std::string::npos)
      << source_in(k, strict);
}

}  // namespace
}  // namespace metile::codegen::testing
