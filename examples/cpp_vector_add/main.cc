// A C++ kernel from start to finish: write it with metile::dsl, compile it, launch it on
// the default device (the host emulator), and check it.
//   build/examples/cpp_vector_add/metile-cpp-vector-add
#include <cstdio>
#include <vector>

#include "metile/compile.h"
#include "metile/dsl/dsl.h"
#include "metile/runtime/devices.h"

using namespace metile::dsl;

void vector_add(KernelContext& k) {
  auto x = k.buffer("x", f32, "read");
  auto y = k.buffer("y", f32, "read");
  auto out = k.buffer("out", f32, "write");
  auto n = k.scalar("n", i32);
  const int64_t BLOCK = k.constexpr_int("BLOCK");
  auto offsets = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offsets < n;
  store(out + offsets, load(x + offsets, mask) + load(y + offsets, mask), mask);
}

int main() {
  const int64_t n = 1000;
  auto add = metile::compile("vector_add", vector_add, {{"BLOCK", 256}});

  auto& device = metile::runtime::default_device();
  metile::runtime::Buffer x = device.allocate(metile::ir::DType::f32, {n});
  metile::runtime::Buffer y = device.allocate(metile::ir::DType::f32, {n});
  metile::runtime::Buffer out = device.allocate(metile::ir::DType::f32, {n});
  std::vector<float> xs(n), ys(n);
  for (int64_t i = 0; i < n; ++i) xs[i] = 0.5f * i, ys[i] = 2.0f - i;
  x.copy_from_host(xs.data(), n * sizeof(float));
  y.copy_from_host(ys.data(), n * sizeof(float));

  const metile::KernelArg args[] = {x, y, out, n};
  add->launch({cdiv(n, 256), 1, 1}, args);

  std::vector<float> sums(n);
  out.copy_to_host(sums.data(), n * sizeof(float));  // device memory may not be host-visible
  double max_error = 0;
  for (int64_t i = 0; i < n; ++i)
    max_error = std::max(max_error, double(std::abs(sums[i] - (xs[i] + ys[i]))));
  std::printf("%s: %d threads per threadgroup, %zu bytes of source, max error %g: %s\n",
              add->name().c_str(), add->abi().threads_per_threadgroup[0], add->source().size(),
              max_error, max_error == 0 ? "PASS" : "FAIL");
  return max_error == 0 ? 0 : 1;
}
