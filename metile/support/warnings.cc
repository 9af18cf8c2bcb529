#include "metile/support/warnings.h"

#include <cstdio>
#include <mutex>
#include <set>
#include <utility>

namespace metile {

namespace {
std::mutex& warning_mutex() {
  static std::mutex mutex;
  return mutex;
}
WarningHandler& installed_handler() {
  static WarningHandler handler;
  return handler;
}
}  // namespace

void warn(const Warning& warning) {
  WarningHandler handler;
  {
    std::lock_guard lock(warning_mutex());
    handler = installed_handler();
    if (!handler) {
      static std::set<std::pair<std::string, std::string>> printed;
      if (printed.emplace(warning.subject, warning.reason).second)
        std::fprintf(stderr, "%s\n", warning.message.c_str());
      return;
    }
  }
  handler(warning);
}

WarningHandler set_warning_handler(WarningHandler handler) {
  std::lock_guard lock(warning_mutex());
  return std::exchange(installed_handler(), std::move(handler));
}

}  // namespace metile
