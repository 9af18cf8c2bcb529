#include "metile/support/errors.h"

namespace metile {

std::string SourceLocation::str() const {
  if (!known()) return "";
  return file + ":" + std::to_string(line);
}

namespace {
std::string with_location(const std::string& what, const SourceLocation& where) {
  return where.known() ? where.str() + ": " + what : what;
}
}  // namespace

UserError::UserError(std::string what, SourceLocation where)
    : std::runtime_error(with_location(what, where)), where_(std::move(where)), rule_(std::move(what)) {}

NotSupported::NotSupported(const std::string& what, SourceLocation where)
    : UserError("not supported: " + what, std::move(where)) {}

OutOfResources::OutOfResources(const std::string& what, SourceLocation where)
    : UserError("out of resources: " + what, std::move(where)) {}

InternalError::InternalError(const std::string& what)
    : std::logic_error("internal compiler error (please report): " + what) {}

}  // namespace metile
