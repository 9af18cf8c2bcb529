#include "tests/lower/metal_interpreter.h"

#include <algorithm>
#include <cstring>

#include "metile/ir/scalar_eval.h"

namespace metile::lower_test {

Buffer Buffer::f32(const std::vector<float>& values) {
  Buffer b{ir::DType::f32, std::vector<uint8_t>(values.size() * 4)};
  std::memcpy(b.bytes.data(), values.data(), b.bytes.size());
  return b;
}

Buffer Buffer::i32(const std::vector<int32_t>& values) {
  Buffer b{ir::DType::i32, std::vector<uint8_t>(values.size() * 4)};
  std::memcpy(b.bytes.data(), values.data(), b.bytes.size());
  return b;
}

Buffer Buffer::zeros(ir::DType dtype, int64_t elements) {
  return {dtype, std::vector<uint8_t>(elements * ir::dtype_bytes(dtype))};
}

std::vector<float> Buffer::floats() const {
  std::vector<float> r(elements());
  if (dtype != ir::DType::f32) throw InterpreterError("floats() of a non-f32 buffer");
  std::memcpy(r.data(), bytes.data(), bytes.size());
  return r;
}

namespace {

// One thread's value: numbers in i (integers, i1) or f (floats); pointers as (space, byte
// offset) with space >= 0 a device buffer index and kThreadgroup the threadgroup block.
struct Val {
  int64_t i = 0;
  double f = 0;
  int space = -1;
};
constexpr int kThreadgroup = -2;

ir::Scalar scalar(ir::DType t, const Val& v) {
  return {t, v.i, v.f};
}
Val value(const ir::Scalar& s) {
  return {s.i, s.f};
}

// Threadgroup-memory bookkeeping per byte, for the race and initialisation checks.
struct ByteState {
  int64_t write_epoch = -1;
  int writer = -1;
  int64_t read_epoch = -1;
  int reader = -1;
  bool many_readers = false;
};

class Runner {
 public:
  Runner(const ir::Kernel& k, std::vector<Buffer>& buffers, int simd_width)
      : k_(k), buffers_(buffers), width_(simd_width) {
    threads_ = static_cast<int>(std::get<int64_t>(k.attrs.at("threads_per_threadgroup")));
    tg_bytes_ = std::get<int64_t>(k.attrs.at("threadgroup_bytes"));
    regs_.resize(k.types.size());
  }

  void threadgroup(const std::vector<Arg>& args, std::array<int, 3> tg, std::array<int, 3> grid) {
    tg_ = tg;
    grid_ = grid;
    epoch_ = 0;
    tg_mem_.assign(tg_bytes_, 0);
    tg_state_.assign(tg_bytes_, ByteState{});
    std::vector<char> all(threads_, 1);
    for (size_t p = 0; p < k_.params.size(); ++p) {
      const ir::Type& t = k_.type(k_.params[p].value);
      Val v;
      if (t.pointer) {
        if (args.at(p).buffer < 0)
          fail(nullptr, -1, "parameter " + k_.params[p].name + " needs a buffer");
        v.space = args[p].buffer;
      } else {
        v = value(ir::Scalar::of(t.dtype, args.at(p).number));
      }
      define(k_.params[p].value);
      std::fill(regs_[k_.params[p].value].begin(), regs_[k_.params[p].value].end(), v);
    }
    block(k_.body, all);
  }

  RunStats stats;

 private:
  [[noreturn]] void fail(const ir::Op* op, int thread, const std::string& what) const {
    std::string where = "kernel " + k_.name + ", threadgroup (" + std::to_string(tg_[0]) + ", " +
                        std::to_string(tg_[1]) + ", " + std::to_string(tg_[2]) + ")";
    if (thread >= 0) where += ", thread " + std::to_string(thread);
    if (op) where += ", " + std::string(ir::op_name(op->kind));
    throw InterpreterError(where + ": " + what);
  }

  std::vector<Val>& define(ir::ValueId v) {
    regs_[v].resize(threads_);
    return regs_[v];
  }
  const std::vector<Val>& get(ir::ValueId v) const { return regs_[v]; }

  void block(const ir::Block& b, const std::vector<char>& active) {
    for (const ir::Op& op : b.ops) this->op(op, active);
  }

  template <typename F>
  void each(const std::vector<char>& active, F&& f) {
    for (int t = 0; t < threads_; ++t)
      if (active[t]) f(t);
  }

  void op(const ir::Op& op, const std::vector<char>& active) {
    using K = ir::OpKind;
    const ir::ValueId r = op.results.empty() ? ir::kNoValue : op.results[0];
    switch (op.kind) {
      case K::Yield:
        return;
      case K::ThreadIndex:
      case K::ThreadgroupIndex:
      case K::ThreadgroupCount:
      case K::SimdLane:
      case K::SimdGroup: {
        auto& out = define(r);
        each(active, [&](int t) {
          if (op.kind == K::ThreadIndex) out[t].i = t;
          if (op.kind == K::ThreadgroupIndex) out[t].i = tg_[op.int_attr("axis")];
          if (op.kind == K::ThreadgroupCount) out[t].i = grid_[op.int_attr("axis")];
          if (op.kind == K::SimdLane) out[t].i = t % width_;
          if (op.kind == K::SimdGroup) out[t].i = t / width_;
        });
        return;
      }
      case K::ThreadgroupBuffer: {
        const ir::Type& t = k_.type(r);
        const int64_t off = op.int_attr("offset"), size = op.int_attr("size");
        if (off < 0 || off + size * ir::dtype_bytes(t.dtype) > tg_bytes_)
          fail(&op, -1, "the buffer lies outside the threadgroup block");
        auto& out = define(r);
        each(active, [&](int th) { out[th] = {off, 0, kThreadgroup}; });
        return;
      }
      case K::PtrAdd: {
        const int64_t elem = ir::dtype_bytes(k_.type(r).dtype);
        auto& out = define(r);
        each(active, [&](int t) {
          out[t] = get(op.operands[0])[t];
          out[t].i += get(op.operands[1])[t].i * elem;
        });
        return;
      }
      case K::Load:
        return load(op, active);
      case K::Store:
        return store(op, active);
      // Copies complete when issued, as on targets without asynchronous copies.
      case K::AsyncCopy:
        return copy(op, active);
      case K::AsyncCopyCommit:
      case K::AsyncCopyWait:
        return;
      case K::Barrier:
        return barrier(op, active);
      case K::SimdSum:
      case K::SimdMax:
      case K::SimdMin:
      case K::SimdShuffle:
      case K::SimdShuffleXor:
      case K::SimdShuffleDown:
      case K::SimdBroadcast:
        return simd(op, active);
      case K::For:
        return for_loop(op, active);
      case K::If:
        return if_else(op, active);
      case K::While:
        return while_loop(op, active);
      case K::Select: {  // moves values of any type, pointers included
        auto& out = define(r);
        each(active, [&](int t) {
          out[t] = get(op.operands[0])[t].i ? get(op.operands[1])[t] : get(op.operands[2])[t];
        });
        return;
      }
      case K::Constant:
      case K::Add:
      case K::Sub:
      case K::Mul:
      case K::Div:
      case K::Rem:
      case K::FloorDiv:
      case K::Min:
      case K::Max:
      case K::And:
      case K::Or:
      case K::Xor:
      case K::Shl:
      case K::Shr:
      case K::Cmp:
      case K::Cast:
      case K::Neg:
      case K::Abs:
      case K::Exp:
      case K::Exp2:
      case K::Log:
      case K::Sqrt:
      case K::Rsqrt:
      case K::Tanh:
      case K::Sin:
      case K::Cos:
      case K::Floor:
      case K::Ceil:
        return evaluate(op, active);
      case K::ProgramId:
      case K::NumPrograms:
      case K::ThreadId:
      case K::Arange:
      case K::Splat:
      case K::ExpandDims:
      case K::Broadcast:
      case K::ConvertLayout:
      case K::MakeTensor:
      case K::TensorLoad:
      case K::TensorStore:
      case K::SharedAlloc:
      case K::Reduce:
      case K::ReduceAxis:
      case K::ReduceCombine:
      case K::Scan:
      case K::XorPermute:
      case K::DeviceAssert:
      case K::DevicePrint:
      case K::Dot:
      case K::Reshape:
      case K::Trans:
      case K::DeviceTileLoad:
      case K::DeviceTileStore:
        fail(&op, -1, "a Tile IR op in Metal IR");
      case K::PackedLoad:
      case K::PackedStore:
      case K::Extract:
      case K::Pack:
      case K::IsAligned:
        fail(&op, -1, "the test interpreter holds no vectors (the host emulator runs these)");
      case K::MatrixFill:
      case K::MatrixLoad:
      case K::MatrixStore:
      case K::MatrixMma:
        fail(&op, -1,
             "the test interpreter holds no matrix fragments (the host emulator runs these)");
      case K::AssertTrue:
      case K::Print:
        fail(&op, -1, "the test interpreter does not run debugging ops (the host emulator does)");
      case K::DescriptorMatmul:
      case K::MppMatmul2d:
        fail(&op, -1, "the test interpreter runs no tensor backend (the host emulator does)");
      case K::MbarrierInit:
      case K::MbarrierFence:
      case K::MbarrierArrive:
      case K::MbarrierArriveExpectTx:
      case K::MbarrierWait:
      case K::TmaLoad:
      case K::WgmmaFence:
      case K::WgmmaMma:
      case K::WgmmaCommit:
      case K::WgmmaWait:
      case K::SetMaxNReg:
      case K::AsyncProxyFence:
        fail(&op, -1, "the test interpreter runs no sm90 asynchronous pipeline op");
      case K::InlineAsm:
        fail(&op, -1, "the test interpreter runs no inline PTX");
      case K::AtomicRmw:
      case K::AtomicCas:
        fail(&op, -1, "the test interpreter runs no atomics (the host emulator does)");
    }
    fail(&op, -1, "an op kind outside ops.def");
  }

  // An op on numbers, thread by thread through the shared scalar evaluator.
  void evaluate(const ir::Op& op, const std::vector<char>& active) {
    const ir::DType dt = k_.type(op.results[0]).dtype;
    std::vector<ir::Scalar> x(op.operands.size());
    auto& out = define(op.results[0]);
    each(active, [&](int t) {
      for (size_t j = 0; j < x.size(); ++j)
        x[j] = scalar(k_.type(op.operands[j]).dtype, get(op.operands[j])[t]);
      const ir::Evaluation e = ir::evaluate(op.kind, op.attrs, x, dt);
      if (!e.has_value()) fail(&op, t, e.reason);
      out[t] = value(e.value);
    });
  }

  // simd_sum, simd_max and simd_min combine lanes with add, max and min.
  Val combine(const ir::Op& op, int t, ir::DType dt, const Val& a, const Val& b) const {
    using K = ir::OpKind;
    const K kind = op.kind == K::SimdSum ? K::Add : op.kind == K::SimdMax ? K::Max : K::Min;
    const ir::Scalar x[] = {scalar(dt, a), scalar(dt, b)};
    const ir::Evaluation e = ir::evaluate(kind, {}, x, dt);
    if (!e.has_value()) fail(&op, t, e.reason);
    return value(e.value);
  }

  // The bytes of one access, checked: device buffer bounds or threadgroup block bounds.
  uint8_t* address(const ir::Op& op, int t, const Val& p, ir::DType dt) {
    const int64_t n = ir::dtype_bytes(dt);
    if (p.i % n != 0) fail(&op, t, "misaligned address " + std::to_string(p.i));
    if (p.space == kThreadgroup) {
      if (p.i < 0 || p.i + n > tg_bytes_)
        fail(&op, t,
             "threadgroup access at byte " + std::to_string(p.i) + " outside the " +
                 std::to_string(tg_bytes_) + "-byte block");
      return tg_mem_.data() + p.i;
    }
    if (p.space < 0 || p.space >= static_cast<int>(buffers_.size()))
      fail(&op, t, "access through a pointer that is not a buffer");
    Buffer& b = buffers_[p.space];
    if (b.dtype != dt) fail(&op, t, "buffer dtype differs from the pointee dtype");
    if (p.i < 0 || p.i + n > static_cast<int64_t>(b.bytes.size()))
      fail(&op, t,
           "out-of-bounds access to element " + std::to_string(p.i / n) + " of buffer " +
               std::to_string(p.space) + " with " + std::to_string(b.elements()) + " elements");
    return b.bytes.data() + p.i;
  }

  Val read(const ir::Op& op, int t, const Val& p, ir::DType dt) {
    const uint8_t* a = address(op, t, p, dt);
    if (p.space == kThreadgroup) check_tg(op, t, p.i, ir::dtype_bytes(dt), false);
    Val v;
    switch (dt) {
      case ir::DType::f32: {
        float f;
        std::memcpy(&f, a, 4);
        v.f = f;
        break;
      }
      case ir::DType::i32: {
        int32_t x;
        std::memcpy(&x, a, 4);
        v.i = x;
        break;
      }
      case ir::DType::u32: {
        uint32_t x;
        std::memcpy(&x, a, 4);
        v.i = x;
        break;
      }
      case ir::DType::i64: {
        int64_t x;
        std::memcpy(&x, a, 8);
        v.i = x;
        break;
      }
      case ir::DType::i1:
        v.i = *a & 1;
        break;
      default:
        fail(&op, t, "the test interpreter handles f32, i32, u32, i64 and i1 memory");
    }
    return v;
  }

  void write(const ir::Op& op, int t, const Val& p, ir::DType dt, const Val& v) {
    uint8_t* a = address(op, t, p, dt);
    if (p.space == kThreadgroup) check_tg(op, t, p.i, ir::dtype_bytes(dt), true);
    switch (dt) {
      case ir::DType::f32: {
        float f = static_cast<float>(v.f);
        std::memcpy(a, &f, 4);
        break;
      }
      case ir::DType::i32:
      case ir::DType::u32: {
        uint32_t x = static_cast<uint32_t>(v.i);
        std::memcpy(a, &x, 4);
        break;
      }
      case ir::DType::i64:
        std::memcpy(a, &v.i, 8);
        break;
      case ir::DType::i1:
        *a = static_cast<uint8_t>(v.i & 1);
        break;
      default:
        fail(&op, t, "the test interpreter handles f32, i32, u32, i64 and i1 memory");
    }
  }

  void check_tg(const ir::Op& op, int t, int64_t at, int64_t n, bool is_write) {
    for (int64_t byte = at; byte < at + n; ++byte) {
      ByteState& s = tg_state_[byte];
      const std::string where = "threadgroup byte " + std::to_string(byte);
      if (!is_write) {
        ++stats.threadgroup_reads;
        if (s.writer < 0) fail(&op, t, "reads " + where + ", which no thread wrote");
        if (s.write_epoch == epoch_ && s.writer != t)
          fail(&op, t,
               "reads " + where + " written by thread " + std::to_string(s.writer) +
                   " with no barrier in between");
        if (s.read_epoch != epoch_) {
          s.read_epoch = epoch_;
          s.reader = t;
          s.many_readers = false;
        } else if (s.reader != t) {
          s.many_readers = true;
        }
        continue;
      }
      if (s.write_epoch == epoch_ && s.writer != t)
        fail(&op, t,
             "writes " + where + " also written by thread " + std::to_string(s.writer) +
                 " with no barrier in between");
      if (s.read_epoch == epoch_ && (s.reader != t || s.many_readers))
        fail(&op, t, "writes " + where + " read by another thread with no barrier in between");
      s.write_epoch = epoch_;
      s.writer = t;
    }
  }

  void load(const ir::Op& op, const std::vector<char>& active) {
    const ir::DType dt = k_.type(op.results[0]).dtype;
    if (k_.type(op.results[0]).is_vector()) fail(&op, -1, "vector loads are not interpreted");
    auto& out = define(op.results[0]);
    each(active, [&](int t) {
      if (op.operands.size() == 3 && !get(op.operands[1])[t].i) {
        out[t] = get(op.operands[2])[t];
        return;
      }
      out[t] = read(op, t, get(op.operands[0])[t], dt);
    });
  }

  void store(const ir::Op& op, const std::vector<char>& active) {
    const ir::DType dt = k_.type(op.operands[0]).dtype;
    each(active, [&](int t) {
      if (op.operands.size() == 3 && !get(op.operands[2])[t].i) return;
      write(op, t, get(op.operands[0])[t], dt, get(op.operands[1])[t]);
    });
  }

  void copy(const ir::Op& op, const std::vector<char>& active) {
    const ir::DType dt = k_.type(op.operands[0]).dtype;
    const int64_t elements = op.int_attr("elements");
    each(active, [&](int t) {
      const bool zero = op.operands.size() == 3 && !get(op.operands[2])[t].i;
      for (int64_t e = 0; e < elements; ++e) {
        Val at = get(op.operands[0])[t], from = get(op.operands[1])[t];
        at.i += e * ir::dtype_bytes(dt);
        from.i += e * ir::dtype_bytes(dt);
        write(op, t, at, dt, zero ? Val{} : read(op, t, from, dt));
      }
    });
  }

  void barrier(const ir::Op& op, const std::vector<char>& active) {
    for (int t = 0; t < threads_; ++t)
      if (!active[t])
        fail(&op, t, "divergent barrier: this thread does not reach it while others wait");
    if (op.str_attr("scope") == "threadgroup") {
      ++epoch_;
      ++stats.barriers;
    }
  }

  void simd(const ir::Op& op, const std::vector<char>& active) {
    using K = ir::OpKind;
    const ir::DType dt = k_.type(op.results[0]).dtype;
    const std::vector<Val>& v = get(op.operands[0]);
    std::vector<Val> result(threads_);
    for (int base = 0; base < threads_; base += width_) {
      const int end = std::min(threads_, base + width_);
      if (op.kind == K::SimdSum || op.kind == K::SimdMax || op.kind == K::SimdMin) {
        bool first = true;
        Val acc;
        for (int t = base; t < end; ++t) {
          if (!active[t]) continue;
          acc = first ? v[t] : combine(op, t, dt, acc, v[t]);
          first = false;
        }
        for (int t = base; t < end; ++t) result[t] = acc;
        continue;
      }
      for (int t = base; t < end; ++t) {
        if (!active[t]) continue;
        const int64_t arg = get(op.operands[1])[t].i;
        // simd_shuffle_down does not wrap: a source past the SIMD group keeps the own value.
        if (op.kind == K::SimdShuffleDown && (t - base) + arg >= width_) {
          result[t] = v[t];
          continue;
        }
        const int64_t lane = op.kind == K::SimdShuffleXor    ? (t - base) ^ arg
                             : op.kind == K::SimdShuffleDown ? (t - base) + arg
                                                             : arg;
        const int64_t src = base + lane;
        if (lane < 0 || lane >= width_ || src >= end || !active[src])
          fail(&op, t, "reads lane " + std::to_string(lane) + ", which is not active");
        result[t] = v[src];
      }
    }
    auto& out = define(op.results[0]);
    each(active, [&](int t) { out[t] = result[t]; });
  }

  // Each thread runs its own iterations (bounds may differ between threads when the body is
  // per-thread code); an iteration runs the threads still inside their range together.
  void for_loop(const ir::Op& op, const std::vector<char>& active) {
    const ir::Block& body = op.regions[0];
    const std::vector<Val> start = get(op.operands[0]), end = get(op.operands[1]),
                           step = get(op.operands[2]);
    each(active, [&](int t) {
      if (step[t].i <= 0) fail(&op, t, "the loop step must be positive");
    });
    const size_t carried = op.operands.size() - 3;
    for (size_t i = 0; i < carried; ++i) {
      auto& arg = define(body.args[1 + i]);
      each(active, [&](int t) { arg[t] = get(op.operands[3 + i])[t]; });
    }
    std::vector<int64_t> iv(threads_, 0);
    each(active, [&](int t) { iv[t] = start[t].i; });
    for (;;) {
      std::vector<char> running(threads_, 0);
      each(active, [&](int t) { running[t] = iv[t] < end[t].i; });
      if (std::none_of(running.begin(), running.end(), [](char c) { return c; })) break;
      auto& ivs = define(body.args[0]);
      each(running, [&](int t) { ivs[t].i = iv[t]; });
      block(body, running);
      const std::vector<ir::ValueId>& yields = body.ops.back().operands;
      std::vector<std::vector<Val>> next;
      for (size_t i = 0; i < carried; ++i) next.push_back(get(yields[i]));
      for (size_t i = 0; i < carried; ++i) {
        auto& arg = define(body.args[1 + i]);
        each(running, [&](int t) { arg[t] = next[i][t]; });
      }
      each(running, [&](int t) { iv[t] += step[t].i; });
    }
    for (size_t i = 0; i < carried; ++i) {
      auto& out = define(op.results[i]);
      each(active, [&](int t) { out[t] = get(body.args[1 + i])[t]; });
    }
  }

  // Each thread leaves when its own condition is false, with the values passed then.
  void while_loop(const ir::Op& op, const std::vector<char>& active) {
    const ir::Block &before = op.regions[0], &after = op.regions[1];
    const size_t carried = op.operands.size();
    for (size_t i = 0; i < carried; ++i) {
      auto& arg = define(before.args[i]);
      each(active, [&](int t) { arg[t] = get(op.operands[i])[t]; });
    }
    for (size_t i = 0; i < carried; ++i) define(op.results[i]);
    std::vector<char> running = active;
    while (std::any_of(running.begin(), running.end(), [](char c) { return c; })) {
      block(before, running);
      const std::vector<ir::ValueId>& passed = before.ops.back().operands;
      std::vector<char> going(threads_, 0);
      each(running, [&](int t) { going[t] = get(passed[0])[t].i != 0; });
      for (size_t i = 0; i < carried; ++i) {
        const std::vector<Val> value = get(passed[1 + i]);
        auto& arg = define(after.args[i]);
        each(running, [&](int t) {
          arg[t] = value[t];
          if (!going[t]) regs_[op.results[i]][t] = value[t];
        });
      }
      running = going;
      if (std::none_of(running.begin(), running.end(), [](char c) { return c; })) break;
      block(after, running);
      const std::vector<ir::ValueId>& next = after.ops.back().operands;
      for (size_t i = 0; i < carried; ++i) {
        const std::vector<Val> value = get(next[i]);
        auto& arg = define(before.args[i]);
        each(running, [&](int t) { arg[t] = value[t]; });
      }
    }
  }

  void if_else(const ir::Op& op, const std::vector<char>& active) {
    std::vector<char> then_mask(threads_, 0), else_mask(threads_, 0);
    each(active, [&](int t) { (get(op.operands[0])[t].i ? then_mask : else_mask)[t] = 1; });
    for (size_t i = 0; i < op.results.size(); ++i) define(op.results[i]);
    for (size_t branch = 0; branch < op.regions.size(); ++branch) {
      const std::vector<char>& mask = branch == 0 ? then_mask : else_mask;
      if (std::none_of(mask.begin(), mask.end(), [](char c) { return c; })) continue;
      const ir::Block& region = op.regions[branch];
      block(region, mask);
      for (size_t i = 0; i < op.results.size(); ++i) {
        const ir::ValueId y = region.ops.back().operands[i];
        each(mask, [&](int t) { regs_[op.results[i]][t] = get(y)[t]; });
      }
    }
  }

  const ir::Kernel& k_;
  std::vector<Buffer>& buffers_;
  int width_;
  int threads_ = 0;
  int64_t tg_bytes_ = 0;
  std::array<int, 3> tg_{}, grid_{};
  int64_t epoch_ = 0;
  std::vector<uint8_t> tg_mem_;
  std::vector<ByteState> tg_state_;
  std::vector<std::vector<Val>> regs_;
};

}  // namespace

std::vector<int64_t> Buffer::ints() const {
  std::vector<int64_t> r;
  for (int64_t e = 0; e < elements(); ++e) {
    const uint8_t* a = bytes.data() + e * ir::dtype_bytes(dtype);
    switch (dtype) {
      case ir::DType::i32: {
        int32_t x;
        std::memcpy(&x, a, 4);
        r.push_back(x);
        break;
      }
      case ir::DType::u32: {
        uint32_t x;
        std::memcpy(&x, a, 4);
        r.push_back(x);
        break;
      }
      case ir::DType::i64: {
        int64_t x;
        std::memcpy(&x, a, 8);
        r.push_back(x);
        break;
      }
      case ir::DType::i1:
        r.push_back(*a & 1);
        break;
      default:
        throw InterpreterError("ints() of a float buffer");
    }
  }
  return r;
}

RunStats run_metal(const ir::Kernel& metal, std::vector<Buffer>& buffers,
                   const std::vector<Arg>& args, std::array<int, 3> grid, int simd_width) {
  if (metal.dialect != ir::Dialect::Metal) throw InterpreterError("not a Metal IR kernel");
  if (args.size() != metal.params.size())
    throw InterpreterError("kernel " + metal.name + " takes " +
                           std::to_string(metal.params.size()) + " arguments, got " +
                           std::to_string(args.size()));
  Runner runner(metal, buffers, simd_width);
  for (int z = 0; z < grid[2]; ++z)
    for (int y = 0; y < grid[1]; ++y)
      for (int x = 0; x < grid[0]; ++x) runner.threadgroup(args, {x, y, z}, grid);
  return runner.stats;
}

}  // namespace metile::lower_test
