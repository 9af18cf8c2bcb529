#include <gtest/gtest.h>

#include <sstream>

#include "metile/flow/dimacs.h"
#include "metile/support/errors.h"

namespace metile::flow {
namespace {

DimacsProblem read(const std::string& text) {
  std::istringstream in(text);
  return read_dimacs_max_flow(in, "net.max");
}

// The message of the UserError that reading `text` raises ("" if none).
std::string error_of(const std::string& text) {
  try {
    read(text);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(Dimacs, ReadsAWellFormedProblem) {
  const DimacsProblem p = read(
      "c a comment\n"
      "p max 4 5\n"
      "n 1 s\n"
      "n 4 t\n"
      "a 1 2 3\n"
      "a 1 3 2\n"
      "\n"
      "a 2 3 1\n"
      "a 2 4 2\n"
      "a 3 4 3\n");
  EXPECT_EQ(p.network.vertex_count(), 4);
  EXPECT_EQ(p.network.arc_count(), 5);
  EXPECT_EQ(p.source, 0);
  EXPECT_EQ(p.sink, 3);
  EXPECT_EQ(p.network.arc_from(2), 1);
  EXPECT_EQ(p.network.arc_to(2), 2);
  EXPECT_EQ(p.network.arc_capacity(4), 3);
  EXPECT_EQ(max_flow(p.network, p.source, p.sink).value, 5);
}

TEST(Dimacs, ALongBadTokenIsCutInTheMessage) {
  const std::string token(10'000'000, '7');
  const std::string message = error_of("p max 3 " + token + "x\n");
  EXPECT_NE(message.find("net.max:1: arc count '7777777777"), std::string::npos) << message;
  EXPECT_NE(message.find("...' (10000001 characters) is not an integer"), std::string::npos);
  EXPECT_LT(message.size(), 200u);
}

// A header alone must not size the solvers: a billion declared vertices with one arc would
// allocate gigabytes before the first push.
TEST(Dimacs, VerticesFarBeyondTheArcsAreRefused) {
  EXPECT_EQ(error_of("p max 1000000000 1\nn 1 s\nn 2 t\na 1 2 5\n"),
            "net.max:1: the problem line declares 1000000000 vertices but its 1 arcs and two "
            "terminals touch at most 4; more than 2^20 untouched vertices are refused (they "
            "cannot change the flow)");
  EXPECT_EQ(read("p max 1048580 1\nn 1 s\nn 2 t\na 1 2 5\n").network.vertex_count(), 1048580);
}

TEST(Dimacs, MalformedInputNamesTheLine) {
  const std::string head = "p max 3 2\nn 1 s\nn 3 t\n";
  EXPECT_NE(error_of("p min 3 2\n").find("net.max:1: problem line"), std::string::npos);
  EXPECT_NE(error_of("c x\np max three 2\n").find("net.max:2: vertex count 'three'"),
            std::string::npos);
  EXPECT_NE(error_of(head + "a 1 2 1\na 2 4 1\n").find("net.max:5: arc head 4 is out of range"),
            std::string::npos);
  EXPECT_NE(error_of(head + "a 1 2 -1\na 2 3 1\n").find("net.max:4: negative capacity"),
            std::string::npos);
  EXPECT_NE(error_of("p max 3 1\nn 3 t\na 1 2 1\n").find("net.max:3: no source"),
            std::string::npos);
  EXPECT_NE(error_of("p max 3 1\nn 1 s\na 1 2 1\n").find("net.max:3: no sink"), std::string::npos);
  EXPECT_NE(error_of(head + "a 1 2 1\n")
                .find("net.max:1: problem line declares 2 arcs but the input has 1"),
            std::string::npos);
  EXPECT_NE(error_of(head + "a 1 2 1\na 2 3 1\na 1 3 1\n").find("net.max:6: more arcs"),
            std::string::npos);
  EXPECT_NE(error_of("a 1 2 1\n").find("net.max:1: arc line before the problem line"),
            std::string::npos);
  EXPECT_NE(error_of(head + "n 2 s\n").find("net.max:4: second source"), std::string::npos);
  EXPECT_NE(error_of(head + "x\n").find("net.max:4: unknown line type"), std::string::npos);
  EXPECT_NE(error_of(head + "a 1 2 1.5\n").find("net.max:4: capacity '1.5'"), std::string::npos);
  EXPECT_NE(error_of("").find("no problem line"), std::string::npos);
  EXPECT_NE(error_of("p max 3 0\nn 2 s\nn 2 t\n").find("net.max:3: source and sink"),
            std::string::npos);
}

}  // namespace
}  // namespace metile::flow
