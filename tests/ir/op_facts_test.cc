// The facts of ops.def are consistent, and the verifier checks counts and attributes from them.
#include <gtest/gtest.h>

#include <set>

#include "metile/ir/parser.h"
#include "metile/ir/scalar_eval.h"
#include "metile/ir/verifier.h"
#include "tests/ir/op_samples.h"

namespace metile::ir {
namespace {

using Strings = std::vector<std::string>;

TEST(OpFacts, EveryOpHasItsEntryAndAUniqueName) {
  std::set<std::string_view> names;
  for (size_t i = 0; i < all_ops().size(); ++i) {
    const OpInfo& info = all_ops()[i];
    EXPECT_EQ(static_cast<size_t>(info.kind), i) << info.name;
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate name " << info.name;
    EXPECT_EQ(parse_op_name(info.name), info.kind);
    EXPECT_TRUE(info.in_tile || info.in_metal) << info.name;
    EXPECT_FALSE(info.doc.empty()) << info.name;
  }
}

TEST(OpFacts, CountsAreRanges) {
  for (const OpInfo& info : all_ops())
    for (Count c : {info.operands, info.results, info.regions}) {
      EXPECT_GE(c.min, 0) << info.name;
      EXPECT_LE(c.min, c.max) << info.name;
    }
}

TEST(OpFacts, OpsWithRegionsDeclareThem) {
  for (const OpInfo& info : all_ops()) {
    const bool control_flow =
        info.kind == OpKind::For || info.kind == OpKind::If || info.kind == OpKind::While;
    // A descriptor GEMM's region is its pointwise epilogue; the op reads and writes memory.
    const bool descriptor_gemm =
        info.kind == OpKind::DescriptorMatmul || info.kind == OpKind::MppMatmul2d;
    // reduce_combine's region is its combine function (scalar code).
    const bool combine = info.kind == OpKind::ReduceCombine;
    EXPECT_EQ(info.regions.min > 0, control_flow || descriptor_gemm || combine) << info.name;
    // Control flow takes its effects from what its regions hold.
    if (control_flow) {
      EXPECT_FALSE(info.has(Trait::Pure)) << info.name;
      EXPECT_FALSE(info.has(Trait::WritesMemory)) << info.name;
    }
  }
}

TEST(OpFacts, PureOpsHaveNoMemoryEffectsAndOneResult) {
  for (const OpInfo& info : all_ops()) {
    if (!info.has(Trait::Pure)) continue;
    EXPECT_FALSE(info.has(Trait::ReadsMemory)) << info.name;
    EXPECT_FALSE(info.has(Trait::WritesMemory)) << info.name;
    EXPECT_FALSE(info.has(Trait::Terminator)) << info.name;
    EXPECT_EQ(info.results.min, 1) << info.name;
    EXPECT_EQ(info.results.max, 1) << info.name;
  }
}

TEST(OpFacts, TraitsAgree) {
  for (const OpInfo& info : all_ops()) {
    EXPECT_FALSE(info.has(Trait::Varying) && info.has(Trait::UniformResult)) << info.name;
    if (info.has(Trait::Elementwise)) {
      EXPECT_TRUE(info.has(Trait::Pure)) << info.name;
      EXPECT_EQ(info.results.max, 1) << info.name;
    }
    if (info.has(Trait::Commutative) || info.has(Trait::Bitwise)) {
      EXPECT_EQ(info.operands.min, 2) << info.name;
      EXPECT_EQ(info.operands.max, 2) << info.name;
    }
    if (info.has(Trait::SameType)) {
      EXPECT_TRUE(info.has(Trait::Elementwise)) << info.name;
    }
    if (info.has(Trait::Terminator)) {
      EXPECT_EQ(info.results.max, 0) << info.name;
    }
    // A result that differs between threads or combines other threads' values is not
    // computed by its operands alone unless it is a geometry op (no operands).
    if (info.has(Trait::Varying) && info.operands.max > 0) {
      EXPECT_FALSE(info.has(Trait::Pure)) << info.name;
    }
  }
}

TEST(OpFacts, AttributeSchemasMatchTheDocs) {
  for (const OpInfo& info : all_ops()) {
    std::set<std::string_view> names;
    for (const AttrSpec& spec : info.attrs) {
      EXPECT_TRUE(names.insert(spec.name).second) << info.name << " " << spec.name;
      EXPECT_TRUE(spec.choices.empty() || spec.kind == AttrKind::String) << info.name;
      EXPECT_NE(info.doc.find(spec.name), std::string_view::npos)
          << info.name << " does not document attribute " << spec.name;
      EXPECT_EQ(info.attrs.find(spec.name), &spec);
    }
    EXPECT_EQ(info.attrs.find("no_such_attribute"), nullptr);
  }
}

TEST(OpFacts, StringChoices) {
  const AttrSpec* pred = op_info(OpKind::Cmp).attrs.find("pred");
  ASSERT_NE(pred, nullptr);
  for (std::string_view choice : {"lt", "le", "gt", "ge", "eq", "ne"})
    EXPECT_TRUE(pred->allows(choice)) << choice;
  for (std::string_view other : {"", "l", "ltle", "lt|le", "NE"})
    EXPECT_FALSE(pred->allows(other)) << other;
  const AttrSpec any_string{"free", AttrKind::String, true, ""};
  EXPECT_TRUE(any_string.allows("anything"));
}

TEST(OpFacts, CategoriesDeriveFromTheTraits) {
  EXPECT_TRUE(is_binary_arithmetic(OpKind::Add));
  EXPECT_TRUE(is_binary_arithmetic(OpKind::Shr));
  EXPECT_FALSE(is_binary_arithmetic(OpKind::Cmp));
  EXPECT_FALSE(is_binary_arithmetic(OpKind::PtrAdd));
  EXPECT_TRUE(is_bitwise(OpKind::Xor));
  EXPECT_FALSE(is_bitwise(OpKind::Add));
  EXPECT_TRUE(is_unary_math(OpKind::Neg));
  EXPECT_TRUE(is_unary_math(OpKind::Cos));
  EXPECT_FALSE(is_unary_math(OpKind::Cast));
  EXPECT_TRUE(is_elementwise(OpKind::Select));
  EXPECT_FALSE(is_elementwise(OpKind::SimdSum));
  int binary = 0, unary = 0;
  for (const OpInfo& info : all_ops()) {
    binary += is_binary_arithmetic(info.kind);
    unary += is_unary_math(info.kind);
  }
  EXPECT_EQ(binary, 13);  // add sub mul div rem floordiv min max and or xor shl shr
  EXPECT_EQ(unary, 12);   // neg abs exp exp2 log sqrt rsqrt tanh sin cos floor ceil
}

TEST(OpFacts, TypeRulesAgreeWithTheOtherFacts) {
  for (const OpInfo& info : all_ops()) {
    switch (info.rule) {
      case TypeRule::Arithmetic:
        EXPECT_TRUE(is_binary_arithmetic(info.kind)) << info.name;
        break;
      case TypeRule::UnaryMath:
        EXPECT_TRUE(is_unary_math(info.kind)) << info.name;
        break;
      case TypeRule::GridGeometry:
      case TypeRule::ThreadGeometry:
      case TypeRule::SimdGeometry:
        EXPECT_EQ(info.operands.max, 0) << info.name;
        EXPECT_EQ(info.attrs.find("axis") != nullptr, info.rule != TypeRule::SimdGeometry)
            << info.name;
        break;
      case TypeRule::SimdCollective:
        // (v) or (v, lane); the builder tells them apart by the count.
        EXPECT_EQ(info.operands.min, info.operands.max) << info.name;
        EXPECT_TRUE(info.operands.min == 1 || info.operands.min == 2) << info.name;
        EXPECT_TRUE(info.has(Trait::Convergent) && info.has(Trait::Varying)) << info.name;
        break;
      case TypeRule::Atomic:
        // Read-modify-writes whose old value differs between threads.
        EXPECT_TRUE(info.has(Trait::ReadsMemory) && info.has(Trait::WritesMemory) &&
                    info.has(Trait::Varying))
            << info.name;
        break;
      case TypeRule::For:
      case TypeRule::If:
      case TypeRule::While:
        // uniformity.cc and infer_access.cc know the ops with regions by kind.
        EXPECT_TRUE(info.kind == OpKind::For || info.kind == OpKind::If ||
                    info.kind == OpKind::While)
            << info.name;
        break;
      case TypeRule::Constant:
      case TypeRule::Compare:
      case TypeRule::Select:
      case TypeRule::Cast:
      case TypeRule::InlineAsm:
      case TypeRule::PtrAdd:
      case TypeRule::Load:
      case TypeRule::Store:
      case TypeRule::Yield:
      case TypeRule::Arange:
      case TypeRule::Splat:
      case TypeRule::ExpandDims:
      case TypeRule::Broadcast:
      case TypeRule::MakeTensor:
      case TypeRule::TensorLoad:
      case TypeRule::TensorStore:
      case TypeRule::SharedAlloc:
      case TypeRule::ThreadgroupBuffer:
      case TypeRule::Reduce:
      case TypeRule::ReduceAxis:
      case TypeRule::Scan:
      case TypeRule::XorPermute:
      case TypeRule::DeviceAssert:
      case TypeRule::DevicePrint:
      case TypeRule::AssertTrue:
      case TypeRule::Print:
      case TypeRule::Dot:
      case TypeRule::Reshape:
      case TypeRule::Trans:
      case TypeRule::ConvertLayout:
      case TypeRule::Barrier:
      case TypeRule::PackedLoad:
      case TypeRule::PackedStore:
      case TypeRule::Extract:
      case TypeRule::Pack:
      case TypeRule::IsAligned:
      case TypeRule::MatrixFill:
      case TypeRule::MatrixLoad:
      case TypeRule::MatrixStore:
      case TypeRule::MatrixMma:
      case TypeRule::DeviceTile:
        break;
      case TypeRule::DescriptorMatmul:
      case TypeRule::MppMatmul2d:
        EXPECT_TRUE(info.has(Trait::Convergent)) << info.name;
        break;
      case TypeRule::ReduceCombine:
        // Not Pure: CSE compares operands and attributes, not regions.
        EXPECT_TRUE(info.has(Trait::Convergent) && !info.has(Trait::Pure)) << info.name;
        break;
      case TypeRule::AsyncPipeline:
        // sm90's pipeline ops exist in Metal IR only (docs/hopper.md).
        EXPECT_TRUE(info.in_metal && !info.in_tile) << info.name;
        break;
    }
    if (info.regions.max > 0) {
      EXPECT_TRUE(info.rule == TypeRule::For || info.rule == TypeRule::If ||
                  info.rule == TypeRule::While || info.rule == TypeRule::DescriptorMatmul ||
                  info.rule == TypeRule::MppMatmul2d || info.rule == TypeRule::ReduceCombine)
          << info.name;
    }
  }
}

// The scalar evaluator computes exactly the ops marked SCALAR, all of them pure; it answers
// "unsupported" for every other op without listing it.
TEST(OpFacts, ScalarOpsArePureAndTheOthersAreUnsupported) {
  int scalar = 0;
  for (const OpInfo& info : all_ops()) {
    EXPECT_EQ(scalar_op(info.kind).has_value(), info.scalar) << info.name;
    if (info.scalar) {
      ++scalar;
      EXPECT_TRUE(info.has(Trait::Pure)) << info.name;
      EXPECT_EQ(static_cast<OpKind>(*scalar_op(info.kind)), info.kind) << info.name;
      continue;
    }
    EXPECT_EQ(evaluate(info.kind, {}, {}, DType::i32).outcome, Outcome::unsupported) << info.name;
  }
  EXPECT_EQ(scalar, 29);  // constant, 13 arithmetic, cmp, select, cast, 12 unary math
}

// ---- the verifier's generic checks come from the facts ------------------------------------

using op_samples::one_op;
using op_samples::valid_attrs;

bool reports(const Kernel& k, const std::string& rule) {
  for (const Diagnostic& d : verify(k))
    if (d.rule.find(rule) != std::string::npos) return true;
  return false;
}

// Terminators are left out: outside a region the verifier stops at their placement.
TEST(VerifierFromFacts, OperandCountsOutsideTheDeclaredRangeAreRejected) {
  for (const OpInfo& info : all_ops()) {
    if (info.has(Trait::Terminator)) continue;
    const size_t results = static_cast<size_t>(info.results.min);
    const size_t regions = static_cast<size_t>(info.regions.min);
    if (info.operands.min > 0) {
      EXPECT_TRUE(reports(one_op(info, info.operands.min - 1, results, regions, valid_attrs(info)),
                          "operand(s), got"))
          << info.name;
    }
    if (info.operands.max != kMany) {
      EXPECT_TRUE(reports(one_op(info, info.operands.max + 1, results, regions, valid_attrs(info)),
                          "operand(s), got"))
          << info.name;
    }
  }
}

TEST(VerifierFromFacts, ResultAndRegionCountsOutsideTheDeclaredRangeAreRejected) {
  for (const OpInfo& info : all_ops()) {
    if (info.has(Trait::Terminator)) continue;
    const size_t operands = static_cast<size_t>(info.operands.min);
    const size_t regions = static_cast<size_t>(info.regions.min);
    if (info.results.max != kMany) {
      EXPECT_TRUE(reports(one_op(info, operands, info.results.max + 1, regions, valid_attrs(info)),
                          "result(s), got"))
          << info.name;
    }
    EXPECT_TRUE(
        reports(one_op(info, operands, info.results.min, info.regions.max + 1, valid_attrs(info)),
                "has the wrong number of regions"))
        << info.name;
  }
}

TEST(VerifierFromFacts, MissingRequiredAttributesAreRejected) {
  for (const OpInfo& info : all_ops())
    for (const AttrSpec& spec : info.attrs) {
      if (!spec.required) continue;
      Attrs attrs = valid_attrs(info);
      attrs.erase(std::string(spec.name));
      Kernel k = one_op(info, info.operands.min, info.results.min, info.regions.min, attrs);
      EXPECT_TRUE(reports(k, "attribute " + std::string(spec.name))) << info.name;
    }
}

TEST(VerifierFromFacts, UndeclaredAttributesAndWrongKindsAreRejected) {
  for (const OpInfo& info : all_ops()) {
    if (info.has(Trait::Terminator)) continue;
    Attrs attrs = valid_attrs(info);
    attrs["no_such_attribute"] = int64_t{1};
    EXPECT_TRUE(reports(one_op(info, info.operands.min, info.results.min, info.regions.min, attrs),
                        "takes no attribute no_such_attribute"))
        << info.name;
    for (const AttrSpec& spec : info.attrs) {
      Attrs wrong = valid_attrs(info);
      // A list is never a valid attribute value: every kind rejects it.
      wrong[std::string(spec.name)] = std::vector<int64_t>{1};
      EXPECT_TRUE(
          reports(one_op(info, info.operands.min, info.results.min, info.regions.min, wrong),
                  "attribute " + std::string(spec.name)))
          << info.name << " " << spec.name;
    }
  }
}

std::vector<std::string> diagnostics(const std::string& body) {
  std::vector<std::string> r;
  for (const Diagnostic& d : verify(parse("tile.kernel @k(%n: i32) {\n" + body + "}\n")))
    r.push_back(d.str());
  return r;
}

TEST(VerifierFromFacts, AttributeMessages) {
  EXPECT_EQ(diagnostics("  %0 = constant {value = 1.5} : f32\n"
                        "  %1 = exp %0 {fast = 2} : f32\n"
                        "  %2 = cmp %n, %n : i1\n"
                        "  %3 = add %n, %n {fast = 1} : i32\n"
                        "  %4 = program_id {axis = \"x\"} : i32\n"
                        "  %5 = constant {value = \"one\"} : f32\n"),
            (Strings{"exp: attribute fast must be 0 or 1",
                     "cmp: needs a string attribute pred (lt|le|gt|ge|eq|ne)",
                     "add: takes no attribute fast", "program_id: needs an integer attribute axis",
                     "constant: needs a number attribute value"}));
}

TEST(VerifierFromFacts, AnIfWithResultsNeedsAnElseRegion) {
  Kernel k = parse(
      "tile.kernel @k(%n: i32) {\n"
      "  %0 = constant {value = 1} : i1\n"
      "  %1 = if %0 : i32 {\n"
      "    yield %n\n"
      "  } else {\n"
      "    yield %n\n"
      "  }\n"
      "}\n");
  k.body.ops.back().regions.pop_back();
  ASSERT_EQ(verify(k).size(), 1u);
  EXPECT_EQ(verify(k)[0].str(), "if: an if with results needs an else region");
}

}  // namespace
}  // namespace metile::ir
