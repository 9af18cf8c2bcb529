// NVRTC compiles for the codegen tests, with no GPU: the cuda device's own loader and options
// for the H200's architecture (sm_90a for a cubin), and a test failure carrying NVRTC's log (or
// why NVRTC could not load) instead of an exception.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "metile/runtime/cuda/nvrtc.h"
#include "metile/support/errors.h"

namespace metile::codegen::testing {

// The PTX or cubin of `source`, whose entry is `name`; empty after a test failure.
inline std::string nvrtc_compile(const std::string& source, const std::string& name,
                                 runtime::cuda::NvrtcOutput output) {
  using runtime::cuda::Nvrtc;
  std::string why;
  const Nvrtc* nvrtc = Nvrtc::shared(&why);
  if (!nvrtc) {
    ADD_FAILURE() << why;
    return "";
  }
  const std::string arch = runtime::cuda::gpu_architecture(9, 0, output);
  try {
    return nvrtc->compile(source, name, runtime::cuda::nvrtc_options(arch), output);
  } catch (const InternalError& e) {
    ADD_FAILURE() << e.what() << "\n" << source;
    return "";
  }
}

}  // namespace metile::codegen::testing
