// Shared by the error tests: each tests/error/*.cc file commits one misuse and asserts the
// message and the source line it is reported at.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>

#include "metile/dsl/dsl.h"
#include "metile/transform/check_ownership.h"

namespace metile::test {

// Traces `fn`; returns the UserError it raised, or nullopt.
inline std::optional<UserError> trace_error(const std::function<void(dsl::KernelContext&)>& fn,
                                            const dsl::Constexprs& constexprs = {}) {
  try {
    dsl::trace("misuse", fn, constexprs);
  } catch (const UserError& e) {
    return e;
  }
  return std::nullopt;
}

// Traces `fn` and checks its ownership (transform/check_ownership.h); returns the UserError
// either raised, or nullopt.
inline std::optional<UserError> ownership_error(
    const std::function<void(dsl::KernelContext&)>& fn) {
  try {
    transform::check_ownership(dsl::trace("misuse", fn, {}));
  } catch (const UserError& e) {
    return e;
  }
  return std::nullopt;
}

// The error exists, its rule contains `message`, and it points at `file`:`line`.
inline void expect_error(const std::optional<UserError>& e, const std::string& message,
                         const char* file, int line) {
  ASSERT_TRUE(e.has_value()) << "expected a UserError containing: " << message;
  EXPECT_THAT(e->rule(), ::testing::HasSubstr(message));
  EXPECT_EQ(e->where().file, file);
  EXPECT_EQ(e->where().line, line);
  EXPECT_THAT(e->what(), ::testing::StartsWith(std::string(file) + ":" + std::to_string(line)));
}

}  // namespace metile::test
