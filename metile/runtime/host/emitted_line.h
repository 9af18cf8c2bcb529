// Which line of a kernel module's source an instruction belongs to. Modules are built with
// a line table (-g1), which addr2line reads back; the KernelABI's line table then names the
// user's line. Only faults take this path, so running a program here costs nothing else.
#pragma once

#include <cstdint>
#include <vector>

namespace metile::runtime::host {

// The 1-based lines of the module source (the emitted MSL plus its trampoline) that the
// instruction at `pc` was compiled from: its own line, then the lines of the calls it was
// inlined into (a helper's division, then the body's call). Empty when `pc` lies outside
// a kernel module or the lines cannot be read.
std::vector<int> emitted_lines_of(std::uintptr_t pc);

}  // namespace metile::runtime::host
