#include "metile/runtime/cuda/launch_gpu.h"

#include <map>
#include <vector>

#include "metile/support/errors.h"

namespace metile::runtime::cuda {

int launch_gpu(std::string_view kernel, std::span<const PlacedBuffer> buffers, int fallback) {
  std::map<int, std::vector<std::string_view>> params_by_gpu;
  for (const PlacedBuffer& b : buffers)
    if (b.bytes > 0) params_by_gpu[b.gpu].push_back(b.param);
  if (params_by_gpu.empty()) return fallback;
  if (params_by_gpu.size() == 1) return params_by_gpu.begin()->first;
  std::string where;
  for (const auto& [gpu, params] : params_by_gpu) {
    where += where.empty() ? "" : "; ";
    for (std::size_t i = 0; i < params.size(); ++i)
      where += (i ? ", '" : "'") + std::string(params[i]) + "'";
    where += " on cuda:" + std::to_string(gpu);
  }
  throw UserError("kernel '" + std::string(kernel) +
                  "' has buffer arguments on different GPUs: " + where +
                  ". A launch runs on one GPU, which must hold all of its buffers: move them "
                  "to one device (tensor.to('cuda:N'))");
}

}  // namespace metile::runtime::cuda
