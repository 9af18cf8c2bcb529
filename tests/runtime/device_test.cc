// The Device / Buffer interface and launch-argument checking.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "metile/support/errors.h"
#include "test_kernels.h"

namespace metile::runtime::testing {
namespace {

using ir::DType;
using ::testing::HasSubstr;

template <class E, class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error was raised";
  return "";
}

TEST(Devices, HostIsBuiltAndMetalIsNot) {
  EXPECT_EQ(get_device("host").kind(), "host");
  EXPECT_EQ(get_device("host").target().name, "host");
  EXPECT_EQ(device_unavailable_reason("host"), "");
  EXPECT_THAT(error_of<NotSupported>([] { get_device("metal"); }),
              HasSubstr("device 'metal' is not available in this build"));
}

TEST(Devices, UnknownNameListsTheDevicesOfThisBuild) {
  EXPECT_THAT(error_of<UserError>([] { get_device("tpu"); }),
              HasSubstr("unknown device 'tpu'; this build has: host"));
  const std::vector<std::string> names = device_names();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "host");
}

TEST(Devices, RegisteredDevicesAreFoundByName) {
  register_device("host-again", []() -> Device& { return get_device("host"); });
  EXPECT_EQ(&get_device("host-again"), &get_device("host"));
  EXPECT_THAT(device_names(), ::testing::Contains("host-again"));
  EXPECT_NE(default_device().name(), "host-again");  // a built-in device stays the default
  EXPECT_THAT(error_of<UserError>(
                  [] { register_device("host", []() -> Device& { return get_device("host"); }); }),
              HasSubstr("device 'host' is already registered"));
}

TEST(Devices, CompileBuildsAModuleAndLaunchReportsItsTime) {
  Device& host = get_device("host");
  const codegen::KernelABI& abi = vector_add_kernel().abi();
  std::shared_ptr<const Module> module = host.compile(vector_add_msl(), abi);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->abi().kernel_name, "vector_add");
  Buffer a = host.allocate(DType::f32, {300}), b = host.allocate(DType::f32, {300});
  Buffer out = host.allocate(DType::f32, {300});
  for (int i = 0; i < 300; ++i) {
    a.data_as<float>()[i] = float(i);
    b.data_as<float>()[i] = 0.5f;
  }
  const KernelArg args[] = {a, b, out, 300};
  const LaunchTiming timing = host.launch(*module, {2, 1, 1}, args);
  EXPECT_GT(timing.elapsed_ms, 0.0);
  EXPECT_EQ(out.data_as<float>()[299], 299.5f);
}

TEST(Devices, AModuleOfAnotherDeviceIsRejected) {
  const Module foreign(vector_add_kernel().abi());
  Buffer out = get_device("host").allocate(DType::f32, {256});
  const KernelArg args[] = {out, out, out, 256};
  EXPECT_THAT(error_of<UserError>([&] {
                get_device("host").launch(foreign, {1, 1, 1}, args);
              }),
              HasSubstr("kernel 'vector_add' was built for another device"));
}

TEST(Buffers, CopiesAreBoundsChecked) {
  Buffer b = get_device("host").allocate(DType::i32, {2, 3});
  EXPECT_EQ(b.size_bytes(), 24u);
  EXPECT_EQ(b.shape(), (std::vector<int64_t>{2, 3}));
  const int in[6] = {1, 2, 3, 4, 5, 6};
  b.copy_from_host(in, sizeof in);
  int out[2] = {};
  b.copy_to_host(out, sizeof out, 16);
  EXPECT_EQ(out[1], 6);
  EXPECT_THAT(error_of<UserError>([&] { b.copy_to_host(out, 8, 20); }),
              HasSubstr("copy_to_host of 8 bytes at offset 20 exceeds the buffer of 24 bytes"));
  Buffer copy = b;  // a handle to the same memory
  EXPECT_EQ(copy.data(), b.data());
}

class LaunchArguments : public ::testing::Test {
 protected:
  Buffer a = get_device("host").allocate(DType::f32, {256});
  Buffer out = get_device("host").allocate(DType::f32, {256});
};

TEST_F(LaunchArguments, WrongCount) {
  EXPECT_EQ(error_of<UserError>([&] {
              vector_add_kernel().launch({1}, {a, a, out});
            }),
            "kernel 'vector_add' takes 4 arguments, but 3 were given");
}

TEST_F(LaunchArguments, ScalarWhereABufferIsExpected) {
  EXPECT_EQ(error_of<UserError>([&] {
              vector_add_kernel().launch({1}, {a, 3, out, 256});
            }),
            "kernel 'vector_add' parameter 1 ('b') is a buffer of f32, but an int32 was given");
}

TEST_F(LaunchArguments, BufferWhereAScalarIsExpected) {
  EXPECT_EQ(error_of<UserError>([&] {
              vector_add_kernel().launch({1}, {a, a, out, out});
            }),
            "kernel 'vector_add' parameter 3 ('n') is a scalar i32, but a buffer was given");
}

TEST_F(LaunchArguments, FloatForAnIntegerScalar) {
  EXPECT_THAT(error_of<UserError>([&] {
                vector_add_kernel().launch({1}, {a, a, out, 2.5f});
              }),
              HasSubstr("parameter 3 ('n') is i32; an integer value is required, but a float"));
}

TEST_F(LaunchArguments, IntegerOutOfRange) {
  EXPECT_THAT(error_of<UserError>([&] {
                vector_add_kernel().launch({1}, {a, a, out, int64_t(1) << 40});
              }),
              HasSubstr("parameter 3 ('n') is i32; the value 1099511627776 is out of its range"));
}

TEST_F(LaunchArguments, BufferOfTheWrongDtype) {
  Buffer halves = get_device("host").allocate(DType::f16, {256});
  EXPECT_EQ(error_of<UserError>([&] {
              vector_add_kernel().launch({1}, {a, halves, out, 256});
            }),
            "kernel 'vector_add' parameter 1 ('b') expects f32 elements, but the buffer holds f16");
}

TEST_F(LaunchArguments, UntypedBuffersAndWiderIntegersAreAccepted) {
  Buffer raw = get_device("host").allocate(256 * sizeof(float));
  for (int i = 0; i < 256; ++i) raw.data_as<float>()[i] = a.data_as<float>()[i] = 1.0f;
  vector_add_kernel().launch({1}, {a, raw, out, int64_t(256)});
  EXPECT_EQ(out.data_as<float>()[255], 2.0f);
}

}  // namespace
}  // namespace metile::runtime::testing
