// Which GPU a launch runs on: the one its buffer arguments are on. A kernel reads and
// writes its buffers through their addresses, which are valid only on the GPU that holds
// them, so buffers on several GPUs are an error naming each parameter and its GPU.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace metile::runtime::cuda {

// One buffer argument: its parameter's name, the ordinal of the GPU it is on, its length.
struct PlacedBuffer {
  std::string_view param;
  int gpu = 0;
  std::size_t bytes = 0;
};

// The GPU of `buffers` (`fallback` when none has bytes: a buffer of no bytes, which no
// kernel dereferences, goes with any GPU). UserError naming `kernel`, each parameter and its
// GPU ("cuda:1") when the others are on more than one GPU.
int launch_gpu(std::string_view kernel, std::span<const PlacedBuffer> buffers, int fallback);

}  // namespace metile::runtime::cuda
