// The message of the error a test expects: one helper instead of a try/catch per test.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "metile/support/errors.h"

namespace metile::codegen::testing {

// The message of the E that f throws; fails the test when it throws none.
template <typename E = UserError, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an error";
  return "";
}

}  // namespace metile::codegen::testing
