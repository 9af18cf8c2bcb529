// The two kinds of errors meTile raises, never mixed (see DESIGN.md, "Errors").
#pragma once

#include <stdexcept>
#include <string>

namespace metile {

// Where a value or op came from in the user's program (a Python line, a C++ line).
struct SourceLocation {
  std::string file;
  int line = 0;

  bool known() const { return !file.empty(); }
  std::string str() const;  // "file:line", or "" when unknown
};

// The user broke a rule: bad kernel, bad input, unsupported feature. The message names the
// op or pass, states the rule, and points at the user's source line when it is known.
class UserError : public std::runtime_error {
 public:
  UserError(std::string what, SourceLocation where = {});
  const SourceLocation& where() const { return where_; }
  // The message without the location prefix.
  const std::string& rule() const { return rule_; }

 private:
  SourceLocation where_;
  std::string rule_;
};

// A feature that exists in the specification but is not built yet. A user error, so the
// user sees it, but distinguishable from a broken rule.
class NotSupported : public UserError {
 public:
  NotSupported(const std::string& what, SourceLocation where = {});
};

// A kernel or launch needs more than the target offers (tile elements, registers per thread,
// threads per threadgroup, threadgroup memory, grid size). A user error: the message names
// the kernel, the requested geometry and the limit.
class OutOfResources : public UserError {
 public:
  OutOfResources(const std::string& what, SourceLocation where = {});
};

// A compiler bug. The message says so and carries enough context to reproduce it.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& what);
};

// Checks an internal invariant; throws InternalError naming the condition.
#define METILE_ASSERT(cond, msg)                                                        \
  do {                                                                                  \
    if (!(cond))                                                                        \
      throw ::metile::InternalError(std::string(__FILE__) + ":" + std::to_string(__LINE__) + \
                                    ": " #cond ": " + (msg));                           \
  } while (0)

}  // namespace metile
