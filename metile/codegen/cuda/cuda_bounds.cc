#include "metile/codegen/cuda/cuda_bounds.h"

namespace metile::codegen::cuda_bounds {

namespace {

// The record (FaultRecord, then the scratch bytes; cuMemAlloc aligns it to 256 bytes, so the
// scratch at byte 48 is 16-byte aligned) and the helpers. The reporting helper is out of line:
// a check costs a compare and a branch where it passes. The first fault claims the record with
// an atomicCAS of its state, fills it in, and publishes it with a fence and the final state.
constexpr const char* kPrelude =
    "struct metile_fault_record {\n"
    "  unsigned int state;\n"
    "  unsigned int param;\n"
    "  long long byte_offset;\n"
    "  unsigned int bytes;\n"
    "  unsigned int is_write;\n"
    "  int line;\n"
    "  unsigned int thread;\n"
    "  unsigned int block[3];\n"
    "  unsigned int reserved;\n"
    "  unsigned char scratch[64];\n"
    "};\n"
    "static __device__ __forceinline__ bool metile_in_bounds(const void* p, const void* base,\n"
    "                                                        unsigned long long extent,\n"
    "                                                        unsigned int bytes) {\n"
    "  const unsigned long long offset = reinterpret_cast<unsigned long long>(p) -\n"
    "                                    reinterpret_cast<unsigned long long>(base);\n"
    "  return extent >= bytes && offset <= extent - bytes;\n"
    "}\n"
    "static __device__ __noinline__ void metile_out_of_bounds(metile_fault_record* record,\n"
    "                                                         unsigned int param, const void* p,\n"
    "                                                         const void* base,\n"
    "                                                         unsigned int bytes,\n"
    "                                                         unsigned int is_write, int line) {\n"
    "  if (atomicCAS(&record->state, 0u, 1u) != 0u) return;\n"
    "  record->param = param;\n"
    "  record->byte_offset = static_cast<long long>(reinterpret_cast<unsigned long long>(p) -\n"
    "                                               reinterpret_cast<unsigned long long>(base));\n"
    "  record->bytes = bytes;\n"
    "  record->is_write = is_write;\n"
    "  record->line = line;\n"
    "  record->thread = threadIdx.x;\n"
    "  record->block[0] = blockIdx.x;\n"
    "  record->block[1] = blockIdx.y;\n"
    "  record->block[2] = blockIdx.z;\n"
    "  __threadfence();\n"
    "  atomicExch(&record->state, 2u);\n"
    "}\n";

}  // namespace

void declare(Prelude& prelude) {
  prelude.add_type("metile_fault_record", kPrelude);
}

std::string in_bounds(const std::string& p, const std::string& base, const std::string& extent,
                      int64_t bytes) {
  return "metile_in_bounds(" + p + ", " + base + ", " + extent + ", " + std::to_string(bytes) +
         "u)";
}

std::string record_fault(size_t param, const std::string& p, const std::string& base, int64_t bytes,
                         bool write) {
  return "metile_out_of_bounds(" + std::string(kRecordName) + ", " + std::to_string(param) + "u, " +
         p + ", " + base + ", " + std::to_string(bytes) + "u, " + (write ? "1u" : "0u") +
         ", __LINE__);";
}

std::string scratch(const std::string& pointer_type) {
  return "(" + pointer_type + ")(" + std::string(kRecordName) + "->scratch)";
}

}  // namespace metile::codegen::cuda_bounds
