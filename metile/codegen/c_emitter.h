// The C-style emitter: walks a Metal IR kernel's op list and writes the body function's
// statements, one local variable per SSA value, in the words of a CDialect. Structured
// control flow becomes for/if/while with loop-carried values and if results as mutable variables.
// Every op of ops.def has a case in emit_op (the compiler checks the switch), so an op is
// either rendered or rejected with an error naming it.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>

#include "metile/codegen/dialect.h"
#include "metile/codegen/kernel_abi.h"
#include "metile/codegen/pointer_roots.h"
#include "metile/codegen/prelude.h"
#include "metile/codegen/renderer.h"
#include "metile/codegen/value_names.h"
#include "metile/ir/ir.h"
#include "metile/target/target.h"

namespace metile::codegen {

class CEmitter {
 public:
  CEmitter(const ir::Kernel& kernel, const CDialect& dialect, const target::Target& target,
           const EmitOptions& options = {});

  // The statements of the body function, indented for its braces.
  std::string body();
  // The helpers the body calls; complete after body().
  const Prelude& prelude() const { return prelude_; }
  // The line table of body(): lines counted from 1 at its first line.
  const std::vector<SourceLine>& source_lines() const { return source_lines_; }

 protected:
  // Statements (c_emitter.cc); the work-group emitter (host/workgroup_emitter.h) reuses them.
  void emit_block(const ir::Block& block);
  void emit_op(const ir::Op& op);  // records op as the source of the lines it writes
  void emit_op_lines(const ir::Op& op);
  void declare(const ir::Op& op, const std::string& expr);
  void emit_store(const ir::Op& op);
  void emit_atomic(const ir::Op& op);
  void emit_print(const ir::Op& op);
  void emit_inline_asm(const ir::Op& op);
  void emit_packed_load(const ir::Op& op);
  void emit_packed_store(const ir::Op& op);
  void emit_barrier(const ir::Op& op);
  void emit_for(const ir::Op& op);
  void emit_if(const ir::Op& op);
  void emit_while(const ir::Op& op);
  void emit_region(const ir::Block& region, const std::vector<ir::ValueId>& targets);
  void line(const std::string& text);
  // NotSupported when op touches a vector value and the dialect has none.
  void require_vectors_if_used(const ir::Op& op) const;

  // Matrix fragments (matrix_statements.cc). An elementwise op on fragments renders its
  // scalar expression once per element of the lane's share: while `elements` lives, name()
  // and type() give each fragment operand's element and element type, and declare() writes
  // the loop over the elements.
  class MatrixElements {
   public:
    MatrixElements(CEmitter& emitter, const ir::Op& op);
    ~MatrixElements();

   private:
    CEmitter& emitter_;
  };
  bool is_matrix_elementwise(const ir::Op& op) const;
  void declare_matrix_elements(const ir::Op& op, const std::string& expr);
  void emit_matrix_fill(const ir::Op& op);
  void emit_matrix_load(const ir::Op& op);
  void emit_matrix_store(const ir::Op& op);
  void emit_matrix_mma(const ir::Op& op);
  // mpp_statements.cc: a Metal 4 matmul2d and its epilogue over the destination's elements.
  void emit_mpp_matmul2d(const ir::Op& op);
  // The sm90 asynchronous pipeline ops (ops.def's AsyncPipeline rule): wgmma_mma's results
  // start as copies of its accumulator operands, which the statement updates in place.
  void emit_async(const ir::Op& op);
  // "p + offset": the address a matrix access starts at.
  std::string matrix_address(ir::ValueId ptr, ir::ValueId offset) const;

  // Expressions (op_expressions.cc): language-neutral structure; every word and call shape
  // comes from the dialect's hooks.
  std::string constant(const ir::Op& op) const;
  // The coordinate as an i32; the 3-D ones take the op's axis attribute.
  std::string geometry(const ir::Op& op, Geometry g) const;
  std::string infix(const ir::Op& op, std::string_view c_op) const;
  // `c_op` on integers, `bool_op` on i1 values.
  std::string bitwise(const ir::Op& op, std::string_view c_op, std::string_view bool_op) const;
  std::string min_max(const ir::Op& op, MathFn fn, std::string_view bool_op);
  std::string rem(const ir::Op& op);
  std::string floordiv(const ir::Op& op);
  std::string compare(const ir::Op& op) const;
  std::string select(const ir::Op& op) const;
  std::string cast(const ir::Op& op);
  std::string negate(const ir::Op& op) const;
  std::string math(const ir::Op& op, MathFn fn);
  std::string load(const ir::Op& op);
  // A load or store with the op's cache hint (ops.def: load's eviction), of a value of C type
  // `type`; nullopt when the op has none or the dialect writes accesses without hints.
  std::optional<std::string> hinted_load(const ir::Op& op, const std::string& type);
  std::optional<std::string> hinted_store(const ir::Op& op, const std::string& type,
                                          const std::string& value);
  std::string threadgroup_buffer(const ir::Op& op) const;
  // The dialect's packed type of a vector (its helpers go into the prelude), the vector of
  // that type at device pointer ptr, and one element of a packed vector (.x ... .w).
  std::string packed_type(const ir::Type& vector);
  std::string extract(const ir::Op& op) const;
  void emit_pack(const ir::Op& op);
  std::string collective(const ir::Op& op, Collective c);
  // `p[0]`, or the element at p viewed as the vector type of `value_type`.
  std::string access(ir::ValueId ptr, const ir::Type& value_type) const;

  const std::string& name(ir::ValueId v) const {
    auto it = element_names_.find(v);
    return it == element_names_.end() ? names_[v] : it->second;
  }
  const ir::Type& type(ir::ValueId v) const {
    auto it = element_types_.find(v);
    return it == element_types_.end() ? kernel_.type(v) : it->second;
  }
  // The declared type of v: pointers derived from read-only buffers point to const.
  std::string type_of(ir::ValueId v) const;
  [[noreturn]] void fail(const ir::Op& op, const std::string& rule) const;

  // Bounds checks (bounds_checks.cc), emitted for the host target, and recorded ones for
  // METILE_DEBUG=bounds (EmitOptions::bounds_checks): before each device access, a compare of
  // its bytes with the extent of every buffer its pointer may point into.
  struct Access {
    ir::ValueId ptr;
    std::string offset;  // elements past ptr ("" for none): a matrix window's corner
    int64_t bytes;
    bool write;
    ir::ValueId mask;  // kNoValue: unmasked
  };
  void enable_bounds_checks();
  // NotSupported naming the target when the dialect has no recorded checks.
  void enable_recorded_bounds_checks(const target::Target& target);
  bool bounds_checked() const { return bounds_checked_; }
  // `const ulong metile_extent<i> = ...;` for each buffer parameter i, at a function's top.
  void declare_extents();
  std::vector<Access> accesses_of(const ir::Op& op) const;
  // The condition that access a lies inside its buffer; "" when it is not checked
  // (threadgroup memory, a pointer of unknown origin).
  std::string in_bounds(const Access& a) const;
  // The address an access starts at: its pointer, plus a matrix corner's offset.
  std::string checked_address(const Access& a) const;
  void check_accesses(const ir::Op& op);
  // Recorded checks: records a failed access, and redirects op's pointer (name()) until
  // end_redirects().
  void record_failed_accesses(const ir::Op& op);
  void end_redirects();

  const ir::Kernel& kernel_;
  const CDialect& dialect_;
  ValueNames names_;
  Prelude prelude_;
  std::set<ir::ValueId> read_only_;
  std::set<ir::ValueId> positive_constants_;  // integer constants > 0 emitted so far
  // Set by MatrixElements: a fragment's element and its scalar type.
  std::map<ir::ValueId, std::string> element_names_;
  std::map<ir::ValueId, ir::Type> element_types_;
  std::string out_;
  int indent_ = 1;
  const ir::Op* current_ = nullptr;  // the op whose lines are being written
  int lines_ = 0;                    // lines written so far
  std::vector<SourceLine> source_lines_;
  bool bounds_checked_ = false;
  bool recorded_checks_ = false;
  int recorded_checks_emitted_ = 0;      // numbers their locals
  std::vector<ir::ValueId> redirected_;  // names the current op's recorded check replaced
  PointerRoots pointer_roots_;
  std::set<const ir::Op*> proven_in_bounds_;  // accesses a check before the loop covered
  std::string report_thread_ = "~0u";         // the thread an out_of_bounds report names
};

}  // namespace metile::codegen
