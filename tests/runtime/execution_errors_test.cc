// Kernels that break the execution model: the emulator reports them, never hangs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "metile/runtime/host/host_compiler.h"
#include "metile/runtime/kernel_errors.h"
#include "test_kernels.h"

namespace metile::runtime::testing {
namespace {

using host::HostCompiler;
using ir::DType;
using ::testing::HasSubstr;

// The message of the KernelExecutionError subclass E thrown by `launch`.
template <class E, class F>
std::string error_of(F launch) {
  try {
    launch();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error was raised";
  return "";
}

TEST(ExecutionErrors, ThreadsReturningBeforeABarrierAreADivergentBarrier) {
  Buffer out = get_device("host").allocate(DType::f32, {3 * 64});
  const std::string msg =
      error_of<DivergentBarrierError>([&] { divergent_barrier_kernel().launch({3}, {out}); });
  EXPECT_THAT(msg, HasSubstr("divergent barrier in kernel 'divergent', threadgroup (1,0,0)"));
  EXPECT_THAT(msg, HasSubstr("threads 0-15 wait at threadgroup_barrier (line"));
  EXPECT_THAT(msg, HasSubstr("threads 16-63 exited"));
  // Threadgroup 0 ran to completion before the failure was reported.
  EXPECT_EQ(out.data_as<float>()[0], 63.0f);
}

// A kernel without a work-group function (hand-written MSL here; one with a divergent
// barrier from the compiler) runs on fibers, so it cannot be forced onto the other strategy.
TEST(ExecutionErrors, ForcingTheWorkgroupStrategyOnAnIneligibleKernelNamesWhy) {
  Buffer out = get_device("host").allocate(DType::f32, {3 * 64});
  const char* outer = std::getenv("METILE_HOST_EXECUTION");
  const std::string restore = outer ? outer : "";
  setenv("METILE_HOST_EXECUTION", "workgroup", 1);
  std::string msg;
  try {
    divergent_barrier_kernel().launch({3}, {out});
  } catch (const UserError& e) {
    msg = e.what();
  }
  EXPECT_THAT(msg, HasSubstr("METILE_HOST_EXECUTION=workgroup: kernel 'divergent' cannot run as "
                             "a work-group function; it runs on fibers ("));
  setenv("METILE_HOST_EXECUTION", "fibers", 1);
  EXPECT_THAT(
      error_of<DivergentBarrierError>([&] { divergent_barrier_kernel().launch({3}, {out}); }),
      HasSubstr("divergent barrier in kernel 'divergent', threadgroup (1,0,0)"));
  if (outer)
    setenv("METILE_HOST_EXECUTION", restore.c_str(), 1);
  else
    unsetenv("METILE_HOST_EXECUTION");
}

TEST(ExecutionErrors, DivergenceIsReportedForTheLowestFailingThreadgroup) {
  Buffer out = get_device("host").allocate(DType::f32, {3 * 64});
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::string msg =
        error_of<DivergentBarrierError>([&] { divergent_barrier_kernel().launch({3}, {out}); });
    EXPECT_THAT(msg, HasSubstr("threadgroup (1,0,0)"));
  }
}

TEST(ExecutionErrors, LanesAtDifferentCollectivesAreReported) {
  Buffer out = get_device("host").allocate(DType::f32, {32});
  const std::string msg =
      error_of<DivergentBarrierError>([&] { mismatched_collective_kernel().launch({1}, {out}); });
  EXPECT_THAT(msg,
              HasSubstr("divergent SIMD collective in kernel 'mismatched', threadgroup (0,0,0)"));
  EXPECT_THAT(msg, HasSubstr("threads 0-7 wait at simd_sum (line"));
  EXPECT_THAT(msg, HasSubstr("threads 8-31 wait at simd_max (line"));
}

// An exchange in a branch that only some threads take: the emulator stops the threadgroup at
// the exchange's first barrier (or collective) and names who waits and who went on.
TEST(ExecutionErrors, AConditionalExchangeThroughScratchIsADivergentBarrier) {
  Buffer out = get_device("host").allocate(DType::f32, {64});
  const std::string msg = error_of<DivergentBarrierError>(
      [&] { conditional_scratch_exchange_kernel().launch({1}, {out}); });
  EXPECT_THAT(msg,
              HasSubstr("divergent barrier in kernel 'scratch_exchange', threadgroup (0,0,0)"));
  EXPECT_THAT(msg, HasSubstr("threads 0-31 wait at threadgroup_barrier (line"));
  EXPECT_THAT(msg, HasSubstr("threads 32-63 exited"));
}

TEST(ExecutionErrors, AConditionalShuffleExchangeIsADivergentCollective) {
  Buffer out = get_device("host").allocate(DType::f32, {32});
  const std::string msg = error_of<DivergentBarrierError>(
      [&] { conditional_shuffle_exchange_kernel().launch({1}, {out}); });
  EXPECT_THAT(msg, HasSubstr("divergent SIMD collective in kernel 'shuffle_exchange'"));
  EXPECT_THAT(msg, HasSubstr("threads 0-15 wait at simd_shuffle (line"));
  EXPECT_THAT(msg, HasSubstr("threads 16-31 exited"));
}

TEST(ExecutionErrors, ShufflingFromALaneThatDoesNotExist) {
  Buffer out = get_device("host").allocate(DType::f32, {48});
  const std::string msg =
      error_of<KernelFaultError>([&] { partial_simd_group_kernel().launch({1}, {out}); });
  // The last lane to arrive resumes first, so it is the one that reports.
  EXPECT_THAT(msg, HasSubstr("kernel 'partial_simd', threadgroup (0,0,0), thread 47"));
  EXPECT_THAT(msg, HasSubstr("simd_shuffle_xor (line"));
  EXPECT_THAT(msg,
              HasSubstr("lane 15 reads lane 31, which does not exist in its SIMD group of 16"));
}

TEST(ExecutionErrors, WritePastTheEndOfABufferIsCaught) {
  const int n = 1024;
  Buffer a = get_device("host").allocate(DType::f32, {n + 1});
  Buffer b = get_device("host").allocate(DType::f32, {n + 1});
  Buffer out = get_device("host").allocate(DType::f32, {n});
  const std::string msg = error_of<KernelFaultError>([&] {
    vector_add_off_by_one_kernel().launch({n / 256 + 1}, {a, b, out, n});
  });
  // Thread 0 of threadgroup 4 stores out[1024], one element past the end. The hand-written
  // MSL has no line table in its ABI, so the message names the line of the MSL.
  EXPECT_EQ(msg,
            "out-of-bounds access in kernel 'vector_add_off_by_one' (threadgroup (4,0,0), thread "
            "0) (emitted line 14): the access at byte offset 4096 is past the end of buffer 2 "
            "('out', 4096 bytes)");
}

// A freed buffer's mapping is kept for the next buffer of its size (guarded_memory.cc): that
// buffer reads zeros, as a fresh one does, and its end still faults and its slack is checked.
TEST(ExecutionErrors, AReusedBufferMappingIsZeroedAndStillGuarded) {
  const int n = 1023;  // 4092 bytes: 4 bytes of slack before the guard page
  std::vector<const void*> freed;
  {
    Buffer dirty = get_device("host").allocate(DType::f32, {n});
    std::memset(dirty.data(), 0x7f, n * sizeof(float));
    freed.push_back(dirty.data());
  }
  {
    Buffer a = get_device("host").allocate(DType::f32, {n + 1});
    Buffer b = get_device("host").allocate(DType::f32, {n + 1});
    Buffer out = get_device("host").allocate(DType::f32, {n});
    EXPECT_TRUE(a.data() == freed[0] || b.data() == freed[0] || out.data() == freed[0]);
    for (const Buffer* buffer : {&a, &b, &out})
      for (int i = 0; i < n; ++i) ASSERT_EQ(buffer->data_as<float>()[i], 0.0f) << i;
    EXPECT_THAT(error_of<KernelFaultError>([&] {
                  vector_add_off_by_one_kernel().launch({4}, {a, b, out, n});
                }),
                HasSubstr("byte offset 4092 past the end of buffer 2 ('out', 4092 bytes)"));
    freed = {a.data(), b.data(), out.data()};
  }
  Buffer in = get_device("host").allocate(DType::f32, {1025});
  Buffer out = get_device("host").allocate(DType::f32, {1024});  // a mapping freed above
  EXPECT_NE(std::find(freed.begin(), freed.end(), out.data()), freed.end());
  EXPECT_THAT(error_of<KernelFaultError>([&] {
                vector_add_off_by_one_kernel().launch({5}, {in, in, out, 1024});
              }),
              HasSubstr("the access at byte offset 4096 is past the end of buffer 2 ('out', "
                        "4096 bytes)"));
}

TEST(ExecutionErrors, WriteIntoTheAlignmentSlackIsCaughtAfterTheLaunch) {
  const int n = 1023;  // 4092 bytes: 4 bytes of slack before the guard page
  Buffer a = get_device("host").allocate(DType::f32, {n + 1});
  Buffer b = get_device("host").allocate(DType::f32, {n + 1});
  Buffer out = get_device("host").allocate(DType::f32, {n});
  const std::string msg = error_of<KernelFaultError>([&] {
    vector_add_off_by_one_kernel().launch({4}, {a, b, out, n});
  });
  EXPECT_THAT(msg, HasSubstr("out-of-bounds write in kernel 'vector_add_off_by_one': byte offset "
                             "4092 past the end of buffer 2 ('out', 4092 bytes)"));
  // The slack is restored: a correct launch afterwards reports nothing.
  EXPECT_NO_THROW(vector_add_kernel().launch({4}, {a, b, out, n}));
}

TEST(ExecutionErrors, ThreadgroupMemoryOverflowIsCaught) {
  Buffer out = get_device("host").allocate(DType::f32, {32});
  const std::string msg =
      error_of<KernelFaultError>([&] { threadgroup_overflow_kernel().launch({1}, {out}); });
  EXPECT_THAT(msg, HasSubstr("out-of-bounds access in kernel 'tg_overflow' (threadgroup (0,0,0), "
                             "thread 16) (emitted line 9): the access at byte offset 64 is past "
                             "the end of "
                             "threadgroup memory (64 bytes)"));
}

TEST(ExecutionErrors, StackOverflowIsCaught) {
  Buffer x = get_device("host").allocate(DType::f32, {32});
  Buffer out = get_device("host").allocate(DType::f32, {32});
  const std::string msg = error_of<KernelFaultError>([&] {
    stack_hog_kernel().launch({1}, {x, out});
  });
  EXPECT_THAT(msg,
              HasSubstr("stack overflow in kernel 'stack_hog' (threadgroup (0,0,0), thread 0)"));
  EXPECT_THAT(msg, HasSubstr("KiB (set METILE_HOST_STACK_KB)"));
}

TEST(ExecutionErrors, TheEmulatorKeepsWorkingAfterAFault) {
  Buffer out = get_device("host").allocate(DType::f32, {32});
  EXPECT_THROW(threadgroup_overflow_kernel().launch({2}, {out}), KernelFaultError);
  const int n = 300;
  Buffer a = get_device("host").allocate(DType::f32, {n});
  Buffer b = get_device("host").allocate(DType::f32, {n});
  Buffer sum = get_device("host").allocate(DType::f32, {n});
  for (int i = 0; i < n; ++i) a.data_as<float>()[i] = b.data_as<float>()[i] = float(i);
  vector_add_kernel().launch({2}, {a, b, sum, n});
  EXPECT_EQ(sum.data_as<float>()[299], 598.0f);
}

TEST(ExecutionErrors, AThreadgroupMemoryRaceNamesTheThreadsAndTheOffset) {
  if (!HostCompiler::shared().options().race_check)
    GTEST_SKIP() << "race checks are on under ctest (METILE_HOST_RACECHECK=1)";
  Buffer out = get_device("host").allocate(DType::i32, {64});
  const std::string msg =
      error_of<KernelFaultError>([&] { neighbour_exchange_kernel(Sync::None).launch({2}, {out}); });
  // Thread 0 reads scratch[1] before thread 1, which runs after it, stores it.
  EXPECT_EQ(msg,
            "threadgroup memory race in kernel 'exchange_racing' (threadgroup (0,0,0), thread 1): "
            "thread 1 writes byte offset 4 of threadgroup memory, which thread 0 read since the "
            "last threadgroup barrier (emitted line 9)");
}

TEST(ExecutionErrors, BarriersAndSimdGroupBarriersOrderThreadgroupMemoryAccesses) {
  Buffer out = get_device("host").allocate(DType::i32, {64});
  for (Sync sync : {Sync::Threadgroup, Sync::SimdGroup}) {
    neighbour_exchange_kernel(sync).launch({2}, {out});
    const int* v = out.data_as<int>();
    for (int t = 0; t < 64; ++t)
      EXPECT_EQ(v[t], sync == Sync::Threadgroup ? (t + 1) % 64 : t / 32 * 32 + (t + 1) % 32);
  }
}

// Division by zero, INT_MIN / -1 and an over-wide shift are undefined in C++; the host
// build checks them, so each is a fault rather than something the compiler may exploit.
TEST(ExecutionErrors, UndefinedIntegerOperationsAreFaultsAndTheProcessGoesOn) {
  Buffer out = get_device("host").allocate(DType::i32, {32});
  for (auto [op, d, line] : {std::array{0, 0, 8}, std::array{1, 32, 9}, std::array{2, -1, 10}}) {
    const std::string msg = error_of<KernelFaultError>([&] {
      checked_integer_kernel().launch({1}, {out, op, d});
    });
    EXPECT_EQ(msg,
              "arithmetic fault in kernel 'checked_integer' (threadgroup (0,0,0), thread 0) "
              "(emitted line " +
                  std::to_string(line) +
                  "): an integer division or remainder by zero, INT_MIN / -1, a shift by at "
                  "least the bit width of its operand, a float converted to an integer type that "
                  "cannot hold it (NaN, infinite or out of range), or a loop whose step is zero "
                  "or negative")
        << "op " << op;
  }
  checked_integer_kernel().launch({1}, {out, 0, 4});
  EXPECT_EQ(out.data_as<int>()[31], (31 + 100) / 4);
  checked_integer_kernel().launch({1}, {out, 1, 31});
  EXPECT_EQ(out.data_as<int>()[0], int(0x80000000u));  // wraps (-fwrapv)
}

}  // namespace
}  // namespace metile::runtime::testing
