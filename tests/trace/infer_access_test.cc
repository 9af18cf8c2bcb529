// The buffer access rule of the tracing core (metile/trace/infer_access.h), driven directly
// through KernelTrace the way both frontends drive it.
#include "metile/trace/infer_access.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "metile/trace/kernel_trace.h"

namespace metile::trace {
namespace {

using ir::DType;
using ir::ValueId;
using ::testing::HasSubstr;

std::vector<std::string> accesses(const ir::Kernel& k) {
  std::vector<std::string> r;
  for (const ir::Param& p : k.params) r.push_back(p.access);
  return r;
}

std::vector<std::string> descriptor_accesses(const ir::Kernel& k) {
  std::vector<std::string> r;
  ir::walk(k.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::MakeTensor) r.push_back(op.str_attr("access"));
  });
  return r;
}

struct Fixture {
  KernelTrace t{"k", "hint"};
  ir::TileBuilder& b = t.builder();
  ValueId offsets() { return b.arange(0, 16); }
  ValueId at(ValueId ptr) { return b.ptr_add(ptr, offsets()); }
};

TEST(InferAccess, LoadsReadStoresWriteBothReadWriteUnusedRead) {
  Fixture f;
  ValueId x = f.t.add_buffer("x", DType::f32, "");
  ValueId y = f.t.add_buffer("y", DType::f32, "");
  ValueId z = f.t.add_buffer("z", DType::f32, "");
  f.t.add_buffer("unused", DType::f32, "");
  f.t.add_scalar("n", DType::i32);
  ValueId v = f.b.load(f.at(x));
  f.b.store(f.at(y), v);
  f.b.store(f.at(z), f.b.load(f.at(z)));
  EXPECT_EQ(accesses(f.t.finish()),
            (std::vector<std::string>{"read", "write", "read_write", "read", ""}));
}

TEST(InferAccess, FollowsPointersThroughSelectAndLoopCarriedValues) {
  Fixture f;
  ValueId x = f.t.add_buffer("x", DType::f32, "");
  ValueId y = f.t.add_buffer("y", DType::f32, "");
  ValueId out = f.t.add_buffer("out", DType::f32, "");
  ValueId flag = f.t.add_scalar("flag", DType::i1);
  // A pointer that starts at x and becomes y inside the loop: both are read through it.
  ValueId zero = f.b.constant_int(0), one = f.b.constant_int(1);
  auto loop = f.t.begin_for(zero, one, one, {x}, "a loop");
  ValueId v = f.b.load(loop.carried[0]);
  f.b.store(f.b.select(flag, out, out), v);
  f.t.end_for({f.b.ptr_add(y, one)});
  ir::Kernel k = f.t.finish();
  EXPECT_EQ(accesses(k), (std::vector<std::string>{"read", "read", "write", ""}));
}

TEST(InferAccess, ADescriptorWithoutAccessFollowsItsBufferEvenThroughAnOffset) {
  Fixture f;
  ValueId x = f.t.add_buffer("x", DType::f32, "");
  ValueId out = f.t.add_buffer("out", DType::f32, "");
  ValueId n = f.b.constant_int(16);
  ValueId src = f.t.make_tensor(f.b.ptr_add(x, n), {n}, {f.b.constant_int(1)}, "");
  ValueId dst = f.t.make_tensor(out, {n}, {f.b.constant_int(1)}, "");
  f.t.tensor_store(dst, {f.offsets()}, f.t.tensor_load(src, {f.offsets()}));
  ir::Kernel k = f.t.finish();
  EXPECT_EQ(accesses(k), (std::vector<std::string>{"read", "write"}));
  EXPECT_EQ(descriptor_accesses(k), (std::vector<std::string>{"read", "write"}));
}

TEST(InferAccess, ADescriptorOverBuffersOfDifferentAccessIsReadWrite) {
  Fixture f;
  ValueId x = f.t.add_buffer("x", DType::f32, "");
  ValueId out = f.t.add_buffer("out", DType::f32, "");
  ValueId flag = f.t.add_scalar("flag", DType::i1);
  ValueId n = f.b.constant_int(16);
  f.b.store(f.at(out), f.b.load(f.at(x)));
  ValueId either = f.t.make_tensor(f.b.select(flag, x, out), {n}, {f.b.constant_int(1)}, "");
  (void)either;
  EXPECT_EQ(descriptor_accesses(f.t.finish()), (std::vector<std::string>{"read_write"}));
}

TEST(InferAccess, ADeclaredDescriptorAccessCountsAsAUseOfItsBuffer) {
  Fixture f;
  ValueId x = f.t.add_buffer("x", DType::f32, "");
  ValueId n = f.b.constant_int(16);
  f.t.make_tensor(x, {n}, {f.b.constant_int(1)}, "read_write");
  EXPECT_EQ(accesses(f.t.finish()), (std::vector<std::string>{"read_write"}));
}

TEST(InferAccess, ADeclaredBufferAccessIsKeptWhenTheBodyUsesLess) {
  Fixture f;
  ValueId x = f.t.add_buffer("x", DType::f32, "read_write");
  f.b.load(f.at(x));
  EXPECT_EQ(accesses(f.t.finish()), (std::vector<std::string>{"read_write"}));
}

TEST(InferAccess, StoringIntoABufferDeclaredReadIsAUserErrorAtTheStore) {
  Fixture f;
  ValueId x = f.t.add_buffer("x", DType::f32, "read");
  f.b.set_location({"k.cc", 7});
  f.b.store(f.at(x), f.b.full({16}, 1.0, DType::f32));
  try {
    f.t.finish();
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.rule(), HasSubstr("store: buffer 'x' is declared read but the kernel writes it"));
    EXPECT_EQ(e.where().line, 7);
  }
}

TEST(InferAccess, LoadingFromABufferDeclaredWriteIsAUserError) {
  Fixture f;
  ValueId x = f.t.add_buffer("x", DType::f32, "write");
  f.b.load(f.at(x));
  try {
    f.t.finish();
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.rule(), HasSubstr("load: buffer 'x' is declared write but the kernel reads it"));
  }
}

TEST(InferAccess, ThreadgroupMemoryIsNoBufferUse) {
  Fixture f;
  ValueId x = f.t.add_buffer("x", DType::f32, "");
  ValueId scratch = f.b.shared_alloc(16, DType::f32);
  f.b.store(f.at(scratch), f.b.load(f.at(x)));
  EXPECT_EQ(accesses(f.t.finish()), (std::vector<std::string>{"read"}));
}

}  // namespace
}  // namespace metile::trace
