// Buffer and descriptor access in the C++ eDSL. Kernels declared without an access follow
// the tracing core's one rule (metile/trace/infer_access.h); tests/python/
// test_access_inference.py traces the same kernel shapes from Python and expects the same
// accesses, so the two frontends agree.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "metile/dsl/dsl.h"
#include "tests/dsl/ir_query.h"

namespace metile {
namespace {

using namespace metile::dsl;
using Strings = std::vector<std::string>;
using ::testing::HasSubstr;

Strings param_accesses(const ir::Kernel& k) {
  Strings r;
  for (const ir::Param& p : k.params) r.push_back(p.access);
  return r;
}

Strings descriptor_accesses(const ir::Kernel& k) {
  Strings r;
  for (const ir::Op* op : test::ops_of(k, ir::OpKind::MakeTensor))
    r.push_back(op->str_attr("access"));
  return r;
}

// The same shapes as tests/python/test_access_inference.py.
void copy_add(KernelContext& k) {
  auto x = k.buffer("x", f32);
  auto y = k.buffer("y", f32);
  auto acc = k.buffer("acc", f32);
  auto unused = k.buffer("unused", f32);
  (void)unused;
  auto offs = arange(0, 64);
  store(acc + offs, load(acc + offs) + load(x + offs));
  store(y + offs, load(x + offs));
}

void rows_through_offset_descriptors(KernelContext& k) {
  auto x = k.buffer("x", f32);
  auto out = k.buffer("out", f32);
  auto n = k.scalar("n", i32);
  auto row = program_id(0) * n;
  auto src = tensor(x + row, {n});
  auto dst = tensor(out + row, {n});
  auto cols = arange(0, 64);
  dst.store({cols}, src.load({cols}));
}

void pointer_carried_through_a_loop(KernelContext& k) {
  auto x = k.buffer("x", f32);
  auto out = k.buffer("out", f32);
  auto n = k.scalar("n", i32);
  auto offs = arange(0, 64);
  auto [total, end] = tile_range(0, n, 64, {zeros({64}, f32), x}, [&](Value, Value& t, Value& p) {
    t = t + load(p + offs);
    p = p + 64;
  });
  (void)end;
  store(out + offs, total);
}

void declared_descriptor_access(KernelContext& k) {
  auto x = k.buffer("x", f32);
  auto n = k.scalar("n", i32);
  auto t = tensor(x, {n}, {}, "read_write");
  (void)t.load({arange(0, 64)});
}

TEST(AccessInference, LoadsReadStoresWriteBothReadWriteUnusedRead) {
  EXPECT_EQ(param_accesses(trace("copy_add", copy_add)),
            (Strings{"read", "write", "read_write", "read"}));
}

TEST(AccessInference, DescriptorsOverAnOffsetFollowTheirBuffer) {
  ir::Kernel k = trace("rows", rows_through_offset_descriptors);
  EXPECT_EQ(param_accesses(k), (Strings{"read", "write", ""}));
  EXPECT_EQ(descriptor_accesses(k), (Strings{"read", "write"}));
}

TEST(AccessInference, PointersThroughALoop) {
  EXPECT_EQ(param_accesses(trace("loop", pointer_carried_through_a_loop)),
            (Strings{"read", "write", ""}));
}

TEST(AccessInference, ADeclaredDescriptorAccessIsAUseOfItsBuffer) {
  ir::Kernel k = trace("declared", declared_descriptor_access);
  EXPECT_EQ(param_accesses(k), (Strings{"read_write", ""}));
  EXPECT_EQ(descriptor_accesses(k), (Strings{"read_write"}));
}

// Before the shared core, a C++ descriptor without an access over `x + offset` was
// read_write whatever the buffer's access; now it takes the buffer's, as in Python.
TEST(AccessInference, ADescriptorOverADeclaredBufferTakesItsAccessThroughAnOffset) {
  ir::Kernel k = trace("declared_rows", [](KernelContext& c) {
    auto x = c.buffer("x", f32, "read");
    auto out = c.buffer("out", f32, "read_write");
    auto n = c.scalar("n", i32);
    auto cols = arange(0, 64);
    Tensor src = tensor(x + n, {n});
    Tensor dst = tensor(out + n, {n});
    dst.store({cols}, src.load({cols}));
  });
  EXPECT_EQ(param_accesses(k), (Strings{"read", "read_write", ""}));
  EXPECT_EQ(descriptor_accesses(k), (Strings{"read", "read_write"}));
}

// Before the shared core, storing into a buffer declared read traced without complaint
// and produced a store through a const pointer.
TEST(AccessInference, ADeclaredAccessTheBodyBreaksIsAUserError) {
  try {
    trace("breaks", [](KernelContext& c) {
      auto x = c.buffer("x", f32, "write");
      store(x + arange(0, 64), load(x + arange(0, 64)) + 1.0f);
    });
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.rule(), HasSubstr("load: buffer 'x' is declared write but the kernel reads it"));
  }
}

TEST(AccessInference, AStoreThroughADescriptorDeclaredReadIsAUserError) {
  try {
    trace("read_only", [](KernelContext& c) {
      auto x = c.buffer("x", f32);
      tensor(x, {64}, {}, "read").store({arange(0, 64)}, 1.0f);
    });
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.rule(), HasSubstr("tensor.store: the tensor was declared with access='read'"));
  }
}

}  // namespace
}  // namespace metile
