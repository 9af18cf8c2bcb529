// A renderer turns a verified Metal IR kernel into the text a runtime loads, with its
// KernelABI. C-like languages (MSL, CUDA C++) are dialects of one C emitter (CRenderer over a
// CDialect); a language that is not C-like (PTX) is a sibling renderer, not a special case of
// the C emitter (DESIGN.md, "Renderers are siblings").
#pragma once

#include <string_view>

#include "metile/codegen/dialect.h"
#include "metile/codegen/kernel_abi.h"
#include "metile/ir/ir.h"
#include "metile/target/target.h"

namespace metile::codegen {

struct EmittedKernel;

// What a caller may ask of a renderer beyond the kernel and target.
struct EmitOptions {
  // Recorded bounds checks (METILE_DEBUG=bounds, codegen/cuda/cuda_bounds.h): every device
  // access checked against its buffer's extent, the first fault recorded for the runtime.
  // NotSupported where the language has none (MSL for Apple GPUs, the PTX route); the host
  // emulator checks every access whatever this says.
  bool bounds_checks = false;
};

// What a renderer's text is, for the runtime that loads it: C-like source a compiler takes
// (NVRTC, the Metal compiler, the host C++ compiler), or PTX the CUDA driver loads itself.
enum class SourceKind { CSource, Ptx };

class Renderer {
 public:
  virtual ~Renderer() = default;
  virtual std::string_view language() const = 0;  // "MSL", "CUDA", "PTX": used in messages
  virtual SourceKind source_kind() const = 0;
  // The kernel's text and ABI; UserError (NotSupported) naming the op it cannot render.
  virtual EmittedKernel render(const ir::Kernel& metal, const target::Target& target) const = 0;
};

// The C emitter in the words of one dialect.
class CRenderer final : public Renderer {
 public:
  explicit CRenderer(const CDialect& dialect) : dialect_(dialect) {}
  std::string_view language() const override { return dialect_.table().language; }
  SourceKind source_kind() const override { return SourceKind::CSource; }
  EmittedKernel render(const ir::Kernel& metal, const target::Target& target) const override;
  EmittedKernel render(const ir::Kernel& metal, const target::Target& target,
                       const EmitOptions& options) const;
  const CDialect& dialect() const { return dialect_; }

 private:
  const CDialect& dialect_;
};

// The checks every renderer makes before writing a word: a Metal IR kernel that verifies, and
// whose threadgroup fits the target. Returns the kernel's ABI.
KernelABI check_renderable(const ir::Kernel& metal, const target::Target& target,
                           std::string_view language);

}  // namespace metile::codegen
