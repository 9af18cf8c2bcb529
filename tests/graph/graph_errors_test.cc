// Bad graphs are user errors naming the node: shape and dtype mismatches where an op is added,
// and, for a graph read from text, an unknown op, a missing input and a cycle.
#include <gtest/gtest.h>

#include "metile/graph/graph_builder.h"
#include "metile/graph/graph_parser.h"
#include "metile/support/errors.h"

namespace metile::graph {
namespace {

template <typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(GraphErrors, ShapeMismatchNamesTheNode) {
  GraphBuilder b;
  Value a = b.input("a", TensorSpec({1, 2048}, "f16"));
  Value c = b.input("c", TensorSpec({1, 1024}, "f16"));
  EXPECT_EQ(error_of([&] { b.add(a, c); }),
            "add: shapes (1, 2048) and (1, 1024) do not broadcast, in %2 = add(%a, %c)");
}

TEST(GraphErrors, DtypeMismatchNamesTheNode) {
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({4, 8}, "f16"));
  Value w = b.input("w", TensorSpec({8}, "f32"));
  EXPECT_EQ(error_of([&] { b.rms_norm(x, w, 1e-5); }),
            "rms_norm: weight dtype f32 differs from x dtype f16, in %2 = rms_norm(%x, %w)");
  Value y = b.input("y", TensorSpec({8, 4}, "f32"));
  EXPECT_EQ(error_of([&] { b.matmul(x, y); }),
            "matmul: dtypes f16 and f32 differ, in %3 = matmul(%x, %y)");
}

const char* kGood =
    "graph {\n"
    "  %values = input : (1, 2048) f16\n"
    "  %residual = input : (1, 2048) f16\n"
    "  %weight = input : (2048,) f16\n"
    "  %3 = add(%values, %residual) : (1, 2048) f16\n"
    "  %4 = rms_norm(%3, %weight) {axis = 1, eps = 1e-05} : (1, 2048) f16\n"
    "  outputs(%3, %4)\n"
    "}\n";

TEST(GraphParser, PrintParsePrintIsTheIdentity) {
  EXPECT_EQ(parse_graph(kGood).str(), kGood);
}

TEST(GraphParser, OpLinesInAnyOrder) {
  Graph g = parse_graph(
      "%x = input : (4, 8) f32\n"
      "%2 = scale(%1) {factor = 0.5} : (4, 8) f32\n"
      "%1 = softmax(%x) {axis = 1} : (4, 8) f32\n"
      "outputs(%2)\n");
  ASSERT_EQ(g.ops().size(), 2u);
  EXPECT_EQ(g.op(0).name(), "softmax");
  EXPECT_EQ(g.op(1).name(), "scale");
}

TEST(GraphParser, UnknownOpNamesTheNode) {
  std::string e = error_of(
      [] { parse_graph("%x = input : (4, 8) f32\n%1 = gelu(%x) : (4, 8) f32\noutputs(%1)\n"); });
  EXPECT_NE(e.find("parse_graph: line 2: unknown op 'gelu' in %1 = gelu(%x) : (4, 8) f32"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("known ops: add, subtract"), std::string::npos) << e;
}

TEST(GraphParser, MissingInputNamesTheNode) {
  EXPECT_EQ(
      error_of([] {
        parse_graph("%x = input : (4, 8) f32\n%1 = add(%x, %bias) : (4, 8) f32\noutputs(%1)\n");
      }),
      "parse_graph: %bias is neither an input nor an op result (a missing input), used by "
      "line 2: %1 = add(%x, %bias) : (4, 8) f32");
}

TEST(GraphParser, CycleNamesTheNodes) {
  std::string e = error_of([] {
    parse_graph(
        "%x = input : (4, 8) f32\n"
        "%1 = add(%x, %2) : (4, 8) f32\n"
        "%2 = exp(%1) : (4, 8) f32\n"
        "outputs(%2)\n");
  });
  EXPECT_NE(e.find("a cycle: %2 depends on itself through %1"), std::string::npos) << e;
}

TEST(GraphParser, ShapeMismatchNamesTheLineAndNode) {
  std::string e = error_of([] {
    parse_graph(
        "%a = input : (4, 8) f32\n%b = input : (4, 3) f32\n%1 = add(%a, %b) : (4, 8) f32\n"
        "outputs(%1)\n");
  });
  EXPECT_NE(e.find("line 3: add: shapes (4, 8) and (4, 3) do not broadcast, in %2 = add(%a, %b)"),
            std::string::npos)
      << e;
}

TEST(GraphParser, WrongResultTypeIsAnError) {
  std::string e = error_of(
      [] { parse_graph("%a = input : (4, 8) f16\n%1 = exp(%a) : (4, 8) f32\noutputs(%1)\n"); });
  EXPECT_NE(e.find("line 2: %1 = exp computes (4, 8) f16, but the line says (4, 8) f32"),
            std::string::npos)
      << e;
}

}  // namespace
}  // namespace metile::graph
