// Collects the core's warnings (metile/support/warnings.h) while alive.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "metile/support/warnings.h"

namespace metile::runtime::testing {

class CapturedWarnings {
 public:
  CapturedWarnings()
      : previous_(set_warning_handler([this](const Warning& w) {
          std::lock_guard lock(mutex_);
          warnings_.push_back(w);
        })) {}
  ~CapturedWarnings() { set_warning_handler(previous_); }
  CapturedWarnings(const CapturedWarnings&) = delete;
  CapturedWarnings& operator=(const CapturedWarnings&) = delete;

  std::vector<Warning> all() const {
    std::lock_guard lock(mutex_);
    return warnings_;
  }
  // "<subject>: <reason>" of each, for matchers.
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (const Warning& w : all()) out.push_back(w.subject + ": " + w.reason);
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<Warning> warnings_;
  WarningHandler previous_;
};

}  // namespace metile::runtime::testing
