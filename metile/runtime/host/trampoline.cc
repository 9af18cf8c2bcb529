#include "metile/runtime/host/trampoline.h"

#include <cctype>

#include "metile/codegen/host/workgroup_emitter.h"

#include "metile/support/errors.h"

namespace metile::runtime::host {

namespace {

using codegen::AbiParam;

const char* cpp_type(ir::DType t) {
  switch (t) {
    case ir::DType::f16:
      return "metal::half";
    case ir::DType::bf16:
      return "metal::bfloat";
    case ir::DType::f32:
      return "float";
    case ir::DType::i32:
      return "int";
    case ir::DType::u32:
      return "unsigned int";
    case ir::DType::i64:
      return "long";
    case ir::DType::i1:
      return "bool";
    case ir::DType::i8:
      return "char";  // MSL's char is signed; the host compiles with -fsigned-char
    case ir::DType::u8:
      return "unsigned char";
    case ir::DType::i16:
      return "short";
    case ir::DType::u16:
      return "unsigned short";
    case ir::DType::f64:
      return "double";
    // An fp8 value is its byte (the MSL emitter's uchar).
    case ir::DType::f8e4m3:
    case ir::DType::f8e5m2:
      return "unsigned char";
  }
  throw InternalError("unknown dtype in KernelABI");
}

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

std::string uint3_of(const char* field) {
  const std::string f = std::string("coords->") + field;
  return "metal::uint3(" + f + "[0], " + f + "[1], " + f + "[2])";
}

// A C string literal of s (which holds no newline).
std::string c_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The marker's text after kHostExecutionMarker, or "".
std::string execution_marker(std::string_view msl) {
  const size_t at = msl.find(codegen::kHostExecutionMarker);
  if (at == std::string_view::npos) return "";
  const size_t begin = at + std::string_view(codegen::kHostExecutionMarker).size();
  return std::string(msl.substr(begin, msl.find('\n', begin) - begin));
}

}  // namespace

bool runs_as_workgroup(std::string_view msl, bool race_check) {
  return execution_marker(msl).rfind("workgroup ", 0) == 0 && !race_check;
}

std::string generate_trampoline(const codegen::KernelABI& abi, std::string_view msl,
                                bool race_check) {
  const std::string body = abi.body_name.empty() ? abi.kernel_name + "_body" : abi.body_name;
  if (!is_identifier(body))
    throw InternalError("KernelABI body name '" + body + "' is not an identifier");

  // The buffers' byte sizes follow the parameters in args (host_runtime_abi.h).
  const std::string set_extents =
      "  metal::detail::buffer_bytes = static_cast<const unsigned long long*>(args[" +
      std::to_string(abi.params.size()) + "]);\n";
  std::string call;
  for (std::size_t i = 0; i < abi.params.size(); ++i) {
    const AbiParam& p = abi.params[i];
    const std::string arg = "args[" + std::to_string(i) + "]";
    const std::string type = cpp_type(p.dtype);
    if (p.kind == AbiParam::Kind::Buffer)
      call += "      static_cast<" + type + "*>(" + arg + "),\n";
    else
      call += "      *static_cast<const " + type + "*>(" + arg + "),\n";
  }
  call += "      threadgroup_memory,\n";
  call += "      " + uint3_of("threadgroup_position_in_grid") + ",\n";
  call += "      " + uint3_of("threadgroups_per_grid");
  // The work-group function takes no thread coordinates: it loops over the threads.
  const std::string workgroup_call = call;
  call += ",\n      " + uint3_of("thread_position_in_threadgroup") + ",\n";
  call += "      " + uint3_of("threads_per_threadgroup") + ",\n";
  call += "      coords->simd_lane, coords->simd_group";

  const std::string marker = execution_marker(msl);
  std::string execution, run_threadgroup;
  if (runs_as_workgroup(msl, race_check)) {
    const std::string function = marker.substr(std::string("workgroup ").size());
    if (!is_identifier(function))
      throw InternalError("work-group function name '" + function + "' is not an identifier");
    execution = "workgroup";
    run_threadgroup =
        "extern \"C\" __attribute__((visibility(\"default\")))\n"
        "void metile_host_run_threadgroup(void* const* args,\n"
        "                                 unsigned char* threadgroup_memory,\n"
        "                                 const MetileHostThreadCoords* coords) {\n" +
        set_extents + "  " + function + "(\n" + workgroup_call + ");\n}\n";
  } else if (race_check) {
    execution = "fibers (race checking, METILE_HOST_RACECHECK=1, runs on fibers)";
  } else if (marker.empty()) {
    execution =
        "fibers (the source has no work-group function: it was not emitted for the "
        "host target)";
  } else {
    execution = marker;
  }
  return "\n// ---- meTile host trampoline (generated) ----\n"
         "extern \"C\" __attribute__((visibility(\"default\"), no_sanitize(\"thread\")))\n"
         "unsigned metile_host_module_init(const MetileHostRuntime* runtime) {\n"
         "  metal::detail::host_runtime = runtime;\n"
         "  return METILE_HOST_ABI_VERSION;\n"
         "}\n"
         "extern \"C\" __attribute__((visibility(\"default\")))\n"
         "void metile_host_run_thread(void* const* args, unsigned char* threadgroup_memory,\n"
         "                            const MetileHostThreadCoords* coords) {\n" +
         set_extents + "  " + body + "(\n" + call + ");\n}\n" + run_threadgroup +
         "extern \"C\" __attribute__((visibility(\"default\")))\n"
         "const char metile_host_execution[] = " +
         c_string(execution) + ";\n";
}

std::string race_check_hooks() {
  return R"(
// ---- meTile host race-check hooks (generated) ----
// Not instrumented themselves: reading host_runtime here must not call a hook again.
#define METILE_HOOK extern "C" __attribute__((no_sanitize("thread")))
#define METILE_ACCESS(address, bytes, is_write)                                           \
  if (const MetileHostRuntime* runtime = metal::detail::host_runtime)                      \
  runtime->memory_access(address, bytes, is_write, __builtin_return_address(0))
#define METILE_HOOKS(n)                                                              \
  METILE_HOOK void __tsan_read##n(void* p) { METILE_ACCESS(p, n, 0); }                \
  METILE_HOOK void __tsan_write##n(void* p) { METILE_ACCESS(p, n, 1); }               \
  METILE_HOOK void __tsan_unaligned_read##n(void* p) { METILE_ACCESS(p, n, 0); }      \
  METILE_HOOK void __tsan_unaligned_write##n(void* p) { METILE_ACCESS(p, n, 1); }     \
  METILE_HOOK void __tsan_volatile_read##n(void* p) { METILE_ACCESS(p, n, 0); }       \
  METILE_HOOK void __tsan_volatile_write##n(void* p) { METILE_ACCESS(p, n, 1); }      \
  METILE_HOOK void __tsan_unaligned_volatile_read##n(void* p) { METILE_ACCESS(p, n, 0); } \
  METILE_HOOK void __tsan_unaligned_volatile_write##n(void* p) { METILE_ACCESS(p, n, 1); }
METILE_HOOKS(1)
METILE_HOOKS(2)
METILE_HOOKS(4)
METILE_HOOKS(8)
METILE_HOOKS(16)
METILE_HOOK void __tsan_read_range(void* p, unsigned long n) { METILE_ACCESS(p, unsigned(n), 0); }
METILE_HOOK void __tsan_write_range(void* p, unsigned long n) { METILE_ACCESS(p, unsigned(n), 1); }
METILE_HOOK void __tsan_func_entry(void*) {}
METILE_HOOK void __tsan_func_exit() {}
METILE_HOOK void __tsan_init() {}
#undef METILE_HOOKS
#undef METILE_ACCESS
#undef METILE_HOOK
)";
}

}  // namespace metile::runtime::host
