// Metal IR -> PTX: the Renderer of the PTX route, checking what the route takes before
// ptx::PtxWriter (ptx_writer.h) writes the kernel: one virtual register per SSA value (per
// element for a grouped vector), declared with its dtype's register type; structured control
// flow becomes labels and predicated branches. The instruction spellings come from
// ptx_instructions.h.
#include "metile/codegen/ptx/ptx_renderer.h"

#include "metile/codegen/emit.h"
#include "metile/codegen/ptx/ptx_writer.h"
#include "metile/support/errors.h"

namespace metile::codegen {
namespace {

class PtxRenderer final : public Renderer {
 public:
  std::string_view language() const override { return "PTX"; }
  SourceKind source_kind() const override { return SourceKind::Ptx; }
  EmittedKernel render(const ir::Kernel& kernel, const target::Target& target) const override {
    if (target.language != target::Language::CUDA)
      throw NotSupported("emit PTX: target " + target.name +
                         " is not an NVIDIA target; the PTX route needs a CUDA target (sm90)");
    EmittedKernel out;
    out.abi = check_renderable(kernel, target, language());
    if (out.abi.threadgroup_bytes > target.static_threadgroup_memory_bytes)
      throw NotSupported("emit PTX: kernel '" + kernel.name + "' needs " +
                         std::to_string(out.abi.threadgroup_bytes) +
                         " bytes of shared memory; the PTX route declares it statically, up to " +
                         std::to_string(target.static_threadgroup_memory_bytes));
    if (out.abi.threads_per_threadgroup[1] != 1 || out.abi.threads_per_threadgroup[2] != 1)
      throw NotSupported("emit PTX: kernel '" + kernel.name +
                         "' has a multi-dimensional threadgroup; the PTX route takes 1-D ones");
    out.abi.source_is_ptx = true;
    out.source = ptx::PtxWriter(kernel).kernel_text(out.abi);
    return out;
  }
};

}  // namespace

const Renderer& ptx_renderer() {
  static const PtxRenderer renderer;
  return renderer;
}

}  // namespace metile::codegen
