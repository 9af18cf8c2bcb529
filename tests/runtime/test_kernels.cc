#include "test_kernels.h"

#include <map>

namespace metile::runtime::testing {

namespace {

using codegen::AbiParam;
using codegen::KernelABI;
using ir::DType;

// The geometry parameters every body function ends with.
constexpr const char* kBodyGeometry =
    "threadgroup uchar* tg_mem, uint3 threadgroup_position_in_grid, uint3 threadgroups_per_grid,\n"
    "    uint3 thread_position_in_threadgroup, uint3 threads_per_threadgroup, uint simd_lane,\n"
    "    uint simd_group";
constexpr const char* kEntryGeometry =
    "uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],\n"
    "    uint3 threadgroups_per_grid [[threadgroups_per_grid]],\n"
    "    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],\n"
    "    uint3 threads_per_threadgroup [[threads_per_threadgroup]],\n"
    "    uint simd_lane [[thread_index_in_simdgroup]],\n"
    "    uint simd_group [[simdgroup_index_in_threadgroup]]";
constexpr const char* kEntryCallGeometry =
    "tg_mem, threadgroup_position_in_grid, threadgroups_per_grid,\n"
    "      thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group";

AbiParam buffer(std::string name, DType t, std::string access) {
  return {std::move(name), AbiParam::Kind::Buffer, t, std::move(access)};
}
AbiParam scalar(std::string name, DType t) {
  return {std::move(name), AbiParam::Kind::Scalar, t, ""};
}

const char* msl_type(DType t) {
  switch (t) {
    case DType::f16:
      return "half";
    case DType::bf16:
      return "bfloat";
    case DType::f32:
      return "float";
    case DType::i32:
      return "int";
    case DType::u32:
      return "uint";
    case DType::i64:
      return "long";
    case DType::i1:
      return "bool";
    case DType::i8:
      return "char";
    case DType::u8:
      return "uchar";
    case DType::i16:
      return "short";
    case DType::u16:
      return "ushort";
    case DType::f64:
      return "double";
    case DType::f8e4m3:
    case DType::f8e5m2:
      return "uchar";
  }
  return "?";
}

// Wraps `body` (the statements of the body function) into the emitter's two functions.
std::string emit(const KernelABI& abi, const std::string& body) {
  std::string body_params, entry_params, call_args;
  for (std::size_t i = 0; i < abi.params.size(); ++i) {
    const AbiParam& p = abi.params[i];
    const std::string type = msl_type(p.dtype);
    const bool buf = p.kind == AbiParam::Kind::Buffer;
    const std::string cq = buf && p.access == "read" ? "const " : "";
    body_params += buf ? "device " + cq + type + "* " + p.name : type + " " + p.name;
    body_params += ", ";
    entry_params += (buf ? "device " + cq + type + "* " : "constant " + type + "& ") + p.name +
                    " [[buffer(" + std::to_string(i) + ")]],\n    ";
    call_args += p.name + ", ";
  }
  const std::string tg_bytes =
      std::to_string(abi.threadgroup_bytes > 0 ? abi.threadgroup_bytes : 16);
  return "#include <metal_stdlib>\nusing namespace metal;\n\n"
         "static inline void " +
         abi.body_name + "(" + body_params + kBodyGeometry + ") {\n" + body +
         "}\n\n"
         "kernel void " +
         abi.kernel_name + "(" + entry_params + kEntryGeometry +
         ") {\n"
         "  threadgroup uchar tg_mem[" +
         tg_bytes +
         "] __attribute__((aligned(16)));\n"
         "  " +
         abi.body_name + "(" + call_args + kEntryCallGeometry + ");\n}\n";
}

KernelABI abi(std::string name, std::vector<AbiParam> params, std::array<int, 3> threads,
              int64_t threadgroup_bytes = 0) {
  KernelABI a;
  a.kernel_name = name;
  a.body_name = name + "_body";
  a.params = std::move(params);
  a.threads_per_threadgroup = threads;
  a.threadgroup_bytes = threadgroup_bytes;
  return a;
}

const CompiledKernel& build_once(const KernelABI& a, const std::string& body) {
  // One per kernel name; tests are single-threaded.
  static std::map<std::string, CompiledKernel> built;
  auto it = built.find(a.kernel_name);
  if (it == built.end())
    it = built.emplace(a.kernel_name, build_kernel(get_device("host"), emit(a, body), a)).first;
  return it->second;
}

constexpr const char* kVectorAddBody = R"(  int pid = int(threadgroup_position_in_grid.x);
  int tid = int(thread_position_in_threadgroup.x);
  int i = pid * 256 + tid;
  bool m = i < n;
  float x = (m ? a[i] : 0.0f);
  float y = (m ? b[i] : 0.0f);
  float s = x + y;
  if (m) out[i] = s;
)";

}  // namespace

codegen::KernelABI vector_add_abi() {
  return abi("vector_add",
             {buffer("a", DType::f32, "read"), buffer("b", DType::f32, "read"),
              buffer("out", DType::f32, "write"), scalar("n", DType::i32)},
             {256, 1, 1});
}
std::string vector_add_msl() {
  return emit(vector_add_abi(), kVectorAddBody);
}

const CompiledKernel& vector_add_kernel() {
  return build_once(vector_add_abi(), kVectorAddBody);
}

const CompiledKernel& exp_kernel() {
  return build_once(abi("exp_of",
                        {buffer("x", DType::f32, "read"), buffer("out", DType::f32, "write"),
                         scalar("n", DType::i32)},
                        {256, 1, 1}),
                    R"(  int i = int(threadgroup_position_in_grid.x) * 256 +
          int(thread_position_in_threadgroup.x);
  if (i < n) out[i] = precise::exp(x[i]);
)");
}

const CompiledKernel& vector_add_off_by_one_kernel() {
  auto a = vector_add_abi();
  a.kernel_name = "vector_add_off_by_one";
  a.body_name = "vector_add_off_by_one_body";
  std::string body = kVectorAddBody;
  body.replace(body.find("i < n"), 5, "i <= n");
  return build_once(a, body);
}

const CompiledKernel& row_reduce_kernel() {
  return build_once(abi("row_reduce",
                        {buffer("x", DType::f32, "read"), buffer("sums", DType::f32, "write"),
                         buffer("maxes", DType::f32, "write"), scalar("cols", DType::i32)},
                        {128, 1, 1}, 32),
                    R"(  int row = int(threadgroup_position_in_grid.x);
  int tid = int(thread_position_in_threadgroup.x);
  threadgroup float* partial_sum = (threadgroup float*)(tg_mem + 0);
  threadgroup float* partial_max = (threadgroup float*)(tg_mem + 16);
  float s = 0.0f;
  float m = -INFINITY;
  for (int c = tid; c < cols; c += 128) {
    float v = x[row * cols + c];
    s = s + v;
    m = fast::max(m, v);
  }
  s = simd_sum(s);
  m = simd_max(m);
  if (simd_lane == 0) {
    partial_sum[simd_group] = s;
    partial_max[simd_group] = m;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (simd_group == 0) {
    float ps = (simd_lane < 4 ? partial_sum[simd_lane] : 0.0f);
    float pm = (simd_lane < 4 ? partial_max[simd_lane] : -INFINITY);
    ps = simd_sum(ps);
    pm = simd_max(pm);
    if (simd_lane == 0) {
      sums[row] = ps;
      maxes[row] = pm;
    }
  }
)");
}

const CompiledKernel& simd_ops_kernel() {
  return build_once(
      abi("simd_ops", {buffer("x", DType::i32, "read"), buffer("out", DType::i32, "write")},
          {64, 1, 1}),
      R"(  int t = int(thread_position_in_threadgroup.x);
  int v = x[t];
  device int* o = out + t * 8;
  o[0] = simd_shuffle_xor(v, ushort(5));
  o[1] = simd_shuffle_up(v, ushort(3));
  o[2] = simd_shuffle_down(v, ushort(3));
  o[3] = simd_broadcast(v, ushort(7));
  o[4] = simd_shuffle(v, ushort(31 - simd_lane));
  o[5] = simd_prefix_exclusive_sum(v);
  o[6] = int(ulong(simd_ballot((v & 1) != 0)) & 0xffffffffu);
  int4 q = int4(v, v + 1, v * 2, -v);
  int4 r = simd_shuffle_xor(q, ushort(1));
  simdgroup_barrier(mem_flags::mem_none);
  o[7] = r.x + r.y + r.z + r.w + simd_min(v) * 1000;
)");
}

const CompiledKernel& half_bfloat_kernel() {
  return build_once(
      abi("half_bfloat",
          {buffer("h", DType::f16, "read"), buffer("b", DType::bf16, "read"),
           buffer("out_h", DType::f16, "write"), buffer("out_b", DType::bf16, "write"),
           buffer("out_f", DType::f32, "write"), scalar("scale", DType::f16)},
          {64, 1, 1}),
      R"(  int i = int(threadgroup_position_in_grid.x) * 64 + int(thread_position_in_threadgroup.x);
  half x = h[i];
  bfloat y = b[i];
  half prod = x * scale;
  out_h[i] = prod + half(1.0f);
  out_b[i] = bfloat(float(y) * 2.0f) + y;
  half2 v2 = half2(x, prod);
  float e = float(precise::exp(x)) + float(v2.y) + float(simd_sum(x));
  out_f[i] = e;
)");
}

const CompiledKernel& bytes_kernel() {
  return build_once(abi("bytes",
                        {buffer("x", DType::i8, "read"), buffer("out", DType::i8, "write"),
                         buffer("out_u", DType::u8, "write"), scalar("bias", DType::i8),
                         scalar("mask", DType::u8)},
                        {64, 1, 1}),
                    R"(  int i = int(thread_position_in_threadgroup.x);
  char sum = x[i] + bias;
  out[i] = sum;
  out_u[i] = uchar(x[i]) ^ mask;
)");
}

const CompiledKernel& divergent_barrier_kernel() {
  return build_once(abi("divergent", {buffer("out", DType::f32, "write")}, {64, 1, 1}, 256),
                    R"(  int pid = int(threadgroup_position_in_grid.x);
  int tid = int(thread_position_in_threadgroup.x);
  threadgroup float* scratch = (threadgroup float*)(tg_mem + 0);
  scratch[tid] = float(tid);
  if (pid == 1 && tid >= 16) return;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[pid * 64 + tid] = scratch[63 - tid];
)");
}

const CompiledKernel& mismatched_collective_kernel() {
  return build_once(abi("mismatched", {buffer("out", DType::f32, "write")}, {32, 1, 1}),
                    R"(  float v = float(simd_lane);
  float r;
  if (simd_lane < 8) {
    r = simd_sum(v);
  } else {
    r = simd_max(v);
  }
  out[simd_lane] = r;
)");
}

const CompiledKernel& conditional_scratch_exchange_kernel() {
  return build_once(abi("scratch_exchange", {buffer("out", DType::f32, "write")}, {64, 1, 1}, 256),
                    R"(  int tid = int(thread_position_in_threadgroup.x);
  threadgroup float* exchange = (threadgroup float*)(tg_mem + 0);
  float v = float(tid);
  if (tid < 32) {
    exchange[tid] = v;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    v = exchange[tid ^ 1];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  out[tid] = v;
)");
}

const CompiledKernel& conditional_shuffle_exchange_kernel() {
  return build_once(abi("shuffle_exchange", {buffer("out", DType::f32, "write")}, {32, 1, 1}),
                    R"(  float v = float(simd_lane);
  if (simd_lane < 16) v = simd_shuffle(v, ushort(simd_lane ^ 1));
  out[simd_lane] = v;
)");
}

const CompiledKernel& partial_simd_group_kernel() {
  return build_once(abi("partial_simd", {buffer("out", DType::f32, "write")}, {48, 1, 1}),
                    R"(  int tid = int(thread_position_in_threadgroup.x);
  float v = float(tid);
  v = v + simd_shuffle_xor(v, ushort(16));
  out[tid] = v;
)");
}

const CompiledKernel& threadgroup_overflow_kernel() {
  return build_once(abi("tg_overflow", {buffer("out", DType::f32, "write")}, {32, 1, 1}, 64),
                    R"(  int tid = int(thread_position_in_threadgroup.x);
  threadgroup float* scratch = (threadgroup float*)(tg_mem + 0);
  scratch[tid] = 1.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[tid] = scratch[tid];
)");
}

const CompiledKernel& neighbour_exchange_kernel(Sync sync) {
  static const char* const kBodies[] = {
      // No barrier between the store and the neighbour's load: a race.
      R"(  int tid = int(thread_position_in_threadgroup.x);
  threadgroup int* scratch = (threadgroup int*)(tg_mem + 0);
  scratch[tid] = tid;
  out[tid] = scratch[(tid + 1) % 64];
)",
      R"(  int tid = int(thread_position_in_threadgroup.x);
  threadgroup int* scratch = (threadgroup int*)(tg_mem + 0);
  scratch[tid] = tid;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[tid] = scratch[(tid + 1) % 64];
)",
      // The neighbour is in the same SIMD group, and a SIMD-group barrier orders the two.
      R"(  int tid = int(thread_position_in_threadgroup.x);
  threadgroup int* scratch = (threadgroup int*)(tg_mem + 0);
  scratch[tid] = tid;
  simdgroup_barrier(mem_flags::mem_threadgroup);
  out[tid] = scratch[tid / 32 * 32 + (tid + 1) % 32];
)"};
  static const char* const kNames[] = {"exchange_racing", "exchange_barrier", "exchange_simd"};
  const int i = static_cast<int>(sync);
  return build_once(abi(kNames[i], {buffer("out", DType::i32, "write")}, {64, 1, 1}, 256),
                    kBodies[i]);
}

const CompiledKernel& checked_integer_kernel() {
  return build_once(
      abi("checked_integer",
          {buffer("out", DType::i32, "write"), scalar("op", DType::i32), scalar("d", DType::i32)},
          {32, 1, 1}),
      R"(  int tid = int(thread_position_in_threadgroup.x);
  if (op == 0) out[tid] = (tid + 100) / d;
  if (op == 1) out[tid] = (tid + 1) << d;
  if (op == 2) out[tid] = (tid - 2147483647 - 1) / d;
)");
}

const CompiledKernel& coordinates_kernel() {
  return build_once(
      abi("coordinates", {buffer("out", DType::u32, "write")}, {8, 4, 1}),
      R"(  uint g = threadgroup_position_in_grid.x + threadgroups_per_grid.x * threadgroup_position_in_grid.y;
  uint t = thread_position_in_threadgroup.x + threads_per_threadgroup.x * thread_position_in_threadgroup.y;
  device uint* o = out + (g * 32 + t) * 4;
  o[0] = thread_position_in_threadgroup.x;
  o[1] = thread_position_in_threadgroup.y;
  o[2] = simd_lane;
  o[3] = simd_group + 100 * threadgroup_position_in_grid.y;
)");
}

const CompiledKernel& simdgroup_matmul_kernel() {
  return build_once(abi("simdgroup_matmul",
                        {buffer("a", DType::f32, "read"), buffer("b", DType::f32, "read"),
                         buffer("c", DType::f32, "read"), buffer("d", DType::f32, "write"),
                         buffer("lane_elements", DType::f32, "write")},
                        {32, 1, 1}),
                    R"(  simdgroup_float8x8 ma, mb, mc, md;
  simdgroup_load(ma, a, 8);
  simdgroup_load(mb, b, 16, ulong2(8, 0));
  simdgroup_load(mc, c, 8, ulong2(0, 0), true);
  simdgroup_multiply_accumulate(md, ma, mb, mc);
  simdgroup_store(md, d, 8);
  lane_elements[simd_lane * 2] = ma.thread_elements()[0];
  lane_elements[simd_lane * 2 + 1] = ma.thread_elements()[1];
)");
}

const CompiledKernel& stack_hog_kernel() {
  return build_once(
      abi("stack_hog", {buffer("x", DType::f32, "read"), buffer("out", DType::f32, "write")},
          {32, 1, 1}),
      R"(  int tid = int(thread_position_in_threadgroup.x);
  float big[40000];
  big[0] = x[0];
  for (int i = 1; i < 40000; ++i) big[i] = big[i - 1] * 0.5f + x[i % 32];
  out[tid] = big[(tid * 7919) % 40000];
)");
}

}  // namespace metile::runtime::testing
