// Warnings the core reports without stopping: something was not used and the work done
// another way (an untrusted cache entry refused and rebuilt). Each goes to the installed
// handler; without one its message is printed to stderr, once per subject and reason in a
// process.
// The Python module installs a handler and raises each as a Python warning of its category
// (metile.disk_cache.UntrustedCacheWarning for "untrusted-cache") when the call that caused
// it returns.
#pragma once

#include <functional>
#include <string>

namespace metile {

struct Warning {
  std::string category;  // "untrusted-cache"
  std::string subject;   // what it is about: a path
  std::string reason;    // why, without the subject
  std::string message;   // the whole sentence, subject and reason included
};

using WarningHandler = std::function<void(const Warning&)>;

void warn(const Warning& warning);
// Installs `handler` (an empty one restores stderr); returns the one it replaces.
WarningHandler set_warning_handler(WarningHandler handler);

}  // namespace metile
