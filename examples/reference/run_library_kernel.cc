#include "run_library_kernel.h"

#include <chrono>
#include <map>
#include <mutex>
#include <tuple>

#include "metile/kernels/kernels.h"

namespace metile::reference {

namespace {
ir::DType dtype_of(Storage s) {
  return s == Storage::f16 ? ir::DType::f16 : s == Storage::bf16 ? ir::DType::bf16 : ir::DType::f32;
}

// Launches and records the wall time of the launch alone.
void timed_launch(KernelRun& run, std::array<int64_t, 3> grid, std::span<const KernelArg> args) {
  auto start = std::chrono::steady_clock::now();
  run.compiled->launch(grid, args);
  run.launch_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

BufferView view(HostArray& a) {
  return {a.data(), a.byte_size(), dtype_of(a.storage())};
}

// Compiled kernels by (kernel, storage, block): each specialisation compiles once per process.
std::shared_ptr<const CompiledKernel> compiled(const std::string& which, Storage s, int block) {
  static std::mutex mutex;
  static std::map<std::tuple<std::string, Storage, int>, std::shared_ptr<const CompiledKernel>>
      cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_tuple(which, s, block);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const ir::DType d = dtype_of(s);
  ir::Kernel k = which == "vector_add" ? kernels::vector_add(d, block)
                 : which == "softmax"  ? kernels::softmax(d, block)
                 : which == "rms_norm" ? kernels::rms_norm(d, block)
                                       : kernels::row_sum(d, block);
  return cache[key] = compile(std::move(k));
}
}  // namespace

KernelRun run_vector_add(Storage s, int n, int block) {
  std::vector<float> x = random_values(n, -4, 4, 1, s), y = random_values(n, -4, 4, 2, s);
  HostArray hx(s, x), hy(s, y), out(s, static_cast<size_t>(n));
  KernelRun run;
  run.compiled = compiled("vector_add", s, block);
  const KernelArg args[] = {view(hx), view(hy), view(out), int64_t{n}};
  timed_launch(run, {(n + block - 1) / block, 1, 1}, args);
  run.output = out.to_floats();
  run.expected = vector_add(x, y);
  for (float& e : run.expected) e = round_to(s, e);
  return run;
}

KernelRun run_softmax(Storage s, int rows, int cols, int block) {
  const int stride = cols + 3;  // rows are padded: the kernel must respect row_stride
  std::vector<float> x = random_values(static_cast<size_t>(rows) * stride, -6, 6, 3, s);
  HostArray hx(s, x), hy(s, x.size());
  KernelRun run;
  run.compiled = compiled("softmax", s, block);
  const KernelArg args[] = {view(hx), view(hy), int64_t{cols}, int64_t{stride}};
  timed_launch(run, {rows, 1, 1}, args);
  run.output = hy.to_floats();
  run.expected = softmax_rows(x, rows, cols, stride);
  for (int r = 0; r < rows; ++r)  // padding is never written
    for (int c = cols; c < stride; ++c) run.expected[static_cast<size_t>(r) * stride + c] = 0;
  return run;
}

KernelRun run_rms_norm(Storage s, int rows, int cols, int block) {
  const int stride = cols + 1;
  const float eps = 1e-5f;
  std::vector<float> x = random_values(static_cast<size_t>(rows) * stride, -3, 3, 4, s);
  std::vector<float> w = random_values(static_cast<size_t>(cols), 0.5f, 1.5f, 5, s);
  HostArray hx(s, x), hw(s, w), hy(s, x.size());
  KernelRun run;
  run.compiled = compiled("rms_norm", s, block);
  const KernelArg args[] = {view(hx),      view(hw),        view(hy),
                            int64_t{cols}, int64_t{stride}, double{eps}};
  timed_launch(run, {rows, 1, 1}, args);
  run.output = hy.to_floats();
  run.expected = rms_norm_rows(x, w, rows, cols, stride, eps);
  for (int r = 0; r < rows; ++r)
    for (int c = cols; c < stride; ++c) run.expected[static_cast<size_t>(r) * stride + c] = 0;
  return run;
}

KernelRun run_row_sum(Storage s, int rows, int cols, int block) {
  const int stride = cols + 2;
  std::vector<float> x = random_values(static_cast<size_t>(rows) * stride, -1, 1, 6, s);
  HostArray hx(s, x), hy(Storage::f32, static_cast<size_t>(rows));
  KernelRun run;
  run.compiled = compiled("row_sum", s, block);
  const KernelArg args[] = {view(hx), view(hy), int64_t{cols}, int64_t{stride}};
  timed_launch(run, {rows, 1, 1}, args);
  run.output = hy.to_floats();
  run.expected = row_sums(x, rows, cols, stride);
  return run;
}

}  // namespace metile::reference
