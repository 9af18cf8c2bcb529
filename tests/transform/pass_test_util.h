// Runs a registered pass on IR text and returns the printed result, verified.
#pragma once

#include <string>

#include "metile/ir/parser.h"
#include "metile/ir/printer.h"
#include "metile/ir/verifier.h"
#include "metile/pass_registry.h"

namespace metile::transform::testing {

inline std::string run_pass(const std::string& pass, const std::string& text) {
  ir::Kernel k = ir::parse(text);
  ir::verify_or_throw(k, "");
  PassContext context(target::default_target());
  k = find_pass(pass).run(std::move(k), context).kernel;
  ir::verify_or_throw(k, pass);
  return ir::print(k);
}

// A Tile IR kernel with buffer %p (i32), %f (f32), %h (f16) and scalar %n around `body`.
inline std::string tile_kernel(const std::string& body) {
  return "tile.kernel @k(%p: ptr<i32> {access = \"write\"}, %f: ptr<f32> {access = \"write\"}, "
         "%h: ptr<f16> {access = \"write\"}, %n: i32) {\n" +
         body + "}\n";
}

}  // namespace metile::transform::testing
