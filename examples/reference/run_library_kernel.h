// Runs the library kernels (metile/kernels) on the default device with data in a storage
// format and returns the outputs as floats, so the demo and the end-to-end tests check
// the same launches against the references.
#pragma once

#include <vector>

#include "metile/compile.h"
#include "reference.h"

namespace metile::reference {

struct KernelRun {
  std::vector<float> output;    // what the kernel wrote, as floats
  std::vector<float> expected;  // the reference
  std::shared_ptr<const CompiledKernel> compiled;
  double launch_ms = 0;  // wall time of the launch alone (copies in and out included)
};

KernelRun run_vector_add(Storage s, int n, int block = 1024);
KernelRun run_softmax(Storage s, int rows, int cols, int block = 512);
KernelRun run_rms_norm(Storage s, int rows, int cols, int block = 512);
KernelRun run_row_sum(Storage s, int rows, int cols, int block = 512);

}  // namespace metile::reference
