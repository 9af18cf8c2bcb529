// check_ownership: every combination rule of seed 004 and every rejection, with its message.
#include <gtest/gtest.h>

#include "metile/transform/check_ownership.h"
#include "pass_test_util.h"

namespace metile::transform::testing {
namespace {

using ir::Owner;
using ir::ThreadLayout;

// 64 elements on 64 threads: the seed's transpose, the identity, and a swap of the low bits.
const std::string kTranspose = "#layout<(3, 4, 5, 0, 1, 2), xor 0, ept 1>";
const std::string kIdentity = "#layout<(0, 1, 2, 3, 4, 5), xor 0, ept 1>";
const std::string kSwap = "#layout<(1, 0, 2, 3, 4, 5), xor 0, ept 1>";
const ThreadLayout kTransposeLayout({3, 4, 5, 0, 1, 2});

ir::Kernel parsed(const std::string& body) {
  ir::Kernel k = ir::parse(tile_kernel(body), "k.ir");
  ir::verify_or_throw(k, "");
  return k;
}

ir::OwnershipMap ownership(const std::string& body) {
  return check_ownership(parsed(body));
}

// The message of the UserError (E = NotSupported: of that subclass) check_ownership raises.
template <typename E = UserError>
std::string error(const std::string& body) {
  const ir::Kernel k = parsed(body);
  try {
    check_ownership(k);
  } catch (const E& e) {
    return e.what();
  }
  return "no " + std::string(std::is_same_v<E, UserError> ? "UserError" : "NotSupported");
}

std::string arange(const std::string& layout, int64_t size = 64) {
  const std::string n = std::to_string(size);
  return "arange {end = " + n + ", start = 0" + (layout.empty() ? "" : ", layout = " + layout) +
         "} : tile<" + n + "xi32>";
}

TEST(CheckOwnership, WithoutLayoutsEveryTileIsImplicit) {
  const ir::OwnershipMap m = ownership("  %0 = " + arange("") +
                                       "\n"
                                       "  %1 = add %0, %0 : tile<64xi32>\n"
                                       "  %2 = splat %n : tile<64xi32>\n");
  EXPECT_FALSE(m.has_explicit_layouts());
  EXPECT_EQ(m.owner(0 + 4), Owner::Implicit);  // the four parameters come first
  EXPECT_EQ(m.owner(5), Owner::Implicit);
  EXPECT_EQ(m.owner(6), Owner::Uniform);
  EXPECT_EQ(m.owner(3), Owner::None);  // %n
  EXPECT_EQ(m.layout(5), nullptr);
}

TEST(CheckOwnership, ArithmeticComparisonsSelectionsAndCastsPreserveOwnership) {
  const ir::OwnershipMap m = ownership("  %0 = " + arange(kTranspose) +
                                       "\n"
                                       "  %1 = splat %n : tile<64xi32>\n"
                                       "  %2 = mul %0, %1 : tile<64xi32>\n"
                                       "  %3 = cmp %2, %1 {pred = \"lt\"} : tile<64xi1>\n"
                                       "  %4 = select %3, %2, %1 : tile<64xi32>\n"
                                       "  %5 = cast %4 : tile<64xf32>\n"
                                       "  %6 = exp %5 : tile<64xf32>\n");
  ASSERT_TRUE(m.has_explicit_layouts());
  EXPECT_EQ(m.geometry()->elements, 64);
  EXPECT_EQ(m.geometry()->thread_count, 64);
  EXPECT_EQ(m.geometry()->elements_per_thread, 1);
  for (ir::ValueId v : {4, 6, 7, 8, 9, 10}) {
    EXPECT_EQ(m.owner(v), Owner::Explicit) << v;
    EXPECT_EQ(*m.layout(v), kTransposeLayout) << v;
  }
  // A uniform splat broadcasts into any owner; alone it holds the identity.
  EXPECT_EQ(m.owner(5), Owner::Uniform);
  EXPECT_EQ(*m.layout(5), ThreadLayout::identity(64));
}

TEST(CheckOwnership, DescriptorLoadsAndStoresPreserveOwnership) {
  const ir::OwnershipMap m =
      ownership("  %0 = " + arange(kTranspose) +
                "\n"
                "  %1 = make_tensor %f, %n, %n {access = \"read_write\"} : desc<1xf32>\n"
                "  %2 = tensor_load %1, %0 : tile<64xf32>\n"
                "  %3 = add %2, %2 : tile<64xf32>\n"
                "  tensor_store %1, %0, %3\n"
                "  %4 = splat %f : tile<64xptr<f32>>\n"
                "  %5 = ptr_add %4, %0 : tile<64xptr<f32>>\n"
                "  %6 = load %5 : tile<64xf32>\n");
  for (ir::ValueId v : {6, 7, 9, 10}) EXPECT_EQ(*m.layout(v), kTransposeLayout) << v;
}

TEST(CheckOwnership, AnImplicitLayoutIsTheIdentityWhenCombinedWithAnExplicitOne) {
  const ir::OwnershipMap m = ownership("  %0 = " + arange(kIdentity) + "\n  %1 = " + arange("") +
                                       "\n"
                                       "  %2 = add %1, %0 : tile<64xi32>\n");
  EXPECT_EQ(m.owner(6), Owner::Explicit);
  EXPECT_EQ(*m.layout(6), ThreadLayout::identity(64));
  EXPECT_EQ(m.owner(5), Owner::Implicit);
  EXPECT_EQ(*m.layout(5), ThreadLayout::identity(64));
}

TEST(CheckOwnership, DifferentOwnersNeedAConversion) {
  EXPECT_EQ(error("  %0 = " + arange(kTranspose) + "\n  %1 = " + arange(kSwap) +
                  "\n"
                  "  %2 = add %0, %1 : tile<64xi32> loc(\"kernel.py\":12)\n"),
            "kernel.py:12: add: %0 (tile<64xi32>) is owned by ThreadLayout((3, 4, 5, 0, 1, 2), "
            "xor 0, 64 threads, 1 per thread) but %1 (tile<64xi32>) by ThreadLayout((1, 0, 2, 3, "
            "4, 5), xor 0, 64 threads, 1 per thread); values with different owners combine only "
            "through convert_layout");
  const ir::OwnershipMap m =
      ownership("  %0 = " + arange(kTranspose) + "\n  %1 = " + arange(kSwap) +
                "\n"
                "  %2 = convert_layout %1 {layout = " +
                kTranspose +
                "} : tile<64xi32>\n"
                "  %3 = add %0, %2 : tile<64xi32>\n");
  EXPECT_EQ(*m.layout(7), kTransposeLayout);
}

TEST(CheckOwnership, AnImplicitTileMeetsANonIdentityLayoutOnlyThroughAConversion) {
  EXPECT_EQ(error("  %0 = " + arange(kTranspose) + "\n  %1 = " + arange("") +
                  "\n"
                  "  %2 = sub %1, %0 : tile<64xi32> loc(\"kernel.py\":7)\n"),
            "kernel.py:7: sub: %0 (tile<64xi32>) is owned by ThreadLayout((3, 4, 5, 0, 1, 2), xor "
            "0, 64 threads, 1 per thread) but %1 (tile<64xi32>) by the implicit layout identity(64 "
            "elements, 64 threads, 1 per thread); values with different owners combine only "
            "through convert_layout");
}

TEST(CheckOwnership, APerThreadScalarHasNoOwner) {
  EXPECT_EQ(error("  %0 = " + arange(kTranspose) +
                  "\n"
                  "  %1 = thread_id {axis = 0} : i32\n"
                  "  %2 = splat %1 : tile<64xi32>\n"
                  "  %3 = add %0, %2 : tile<64xi32> loc(\"kernel.py\":9)\n"),
            "kernel.py:9: add: %2 (tile<64xi32>) was built from a per-thread scalar (thread_id, a "
            "SIMD collective or a value computed from them), which has no owner; it cannot be "
            "combined with %0 (tile<64xi32>), owned by ThreadLayout((3, 4, 5, 0, 1, 2), xor 0, 64 "
            "threads, 1 per thread). Derive per-thread values from metile.arange(..., layout=) "
            "instead");
  EXPECT_EQ(error("  %0 = thread_id {axis = 0} : i32\n"
                  "  %1 = splat %0 : tile<64xi32>\n"
                  "  %2 = convert_layout %1 {layout = " +
                  kTranspose + "} : tile<64xi32> loc(\"kernel.py\":3)\n"),
            "kernel.py:3: convert_layout: %1 (tile<64xi32>) was built from a per-thread scalar "
            "(thread_id, a SIMD collective or a value computed from them), which has no owner; it "
            "cannot be converted");
}

// Tile IR splats a scalar origin into a tile: one that differs between threads has no owner.
TEST(CheckOwnership, OriginsMustBeUniform) {
  EXPECT_EQ(error("  %0 = " + arange(kTranspose) +
                  "\n"
                  "  %1 = thread_id {axis = 0} : i32\n"
                  "  %2 = splat %1 : tile<64xi32>\n"
                  "  %3 = make_tensor %f, %n, %n, %n, %n {access = \"read\"} : desc<2xf32>\n"
                  "  %4 = tensor_load %3, %2, %0 : tile<64xf32> loc(\"kernel.py\":4)\n"),
            "kernel.py:4: tensor_load: %2 (tile<64xi32>) was built from a per-thread scalar "
            "(thread_id, a SIMD collective or a value computed from them), which has no owner; it "
            "cannot be combined with %0 (tile<64xi32>), owned by ThreadLayout((3, 4, 5, 0, 1, 2), "
            "xor 0, 64 threads, 1 per thread). Derive per-thread values from metile.arange(..., "
            "layout=) instead");
  // Scalar code may still use thread_id, and uniform origins broadcast.
  const ir::OwnershipMap m =
      ownership("  %0 = " + arange(kTranspose) +
                "\n"
                "  %1 = thread_id {axis = 0} : i32\n"
                "  %2 = add %1, %n : i32\n"
                "  %3 = program_id {axis = 0} : i32\n"
                "  %4 = splat %3 : tile<64xi32>\n"
                "  %5 = make_tensor %f, %n, %n, %n, %n {access = \"read\"} : desc<2xf32>\n"
                "  %6 = tensor_load %5, %4, %0 : tile<64xf32>\n");
  EXPECT_EQ(*m.layout(10), kTransposeLayout);
}

TEST(CheckOwnership, ReductionsGiveUniformScalarsThatBroadcast) {
  const ir::OwnershipMap m = ownership("  %0 = " + arange(kTranspose) +
                                       "\n"
                                       "  %1 = cast %0 : tile<64xf32>\n"
                                       "  %2 = reduce %1 {kind = \"sum\"} : f32\n"
                                       "  %3 = splat %2 : tile<64xf32>\n"
                                       "  %4 = mul %1, %3 : tile<64xf32>\n");
  EXPECT_EQ(m.owner(7), Owner::Uniform);
  EXPECT_EQ(*m.layout(8), kTransposeLayout);
}

TEST(CheckOwnership, LayoutGeometryLimits) {
  EXPECT_EQ(error("  %0 = arange {end = 16, start = 0, layout = #layout<(0, 1, 2, 3), xor 0, ept "
                  "1>} : tile<16xi32> loc(\"kernel.py\":2)\n"),
            "kernel.py:2: arange: the layout identity(16 elements, 16 threads, 1 per thread) runs "
            "on 16 threads; explicit layouts need 32 to 1024 (one to 32 SIMD groups)");
  EXPECT_EQ(error("  %0 = arange {end = 2048, start = 0, layout = #layout<(0, 1, 2, 3, 4, 5, 6, "
                  "7, 8, 9, 10), xor 0, ept 1>} : tile<2048xi32>\n"),
            "arange: the layout identity(2048 elements, 2048 threads, 1 per thread) runs on 2048 "
            "threads; explicit layouts need 32 to 1024 (one to 32 SIMD groups)");
}

TEST(CheckOwnership, ElementAndRegisterLimits) {
  EXPECT_EQ(error("  %0 = arange {end = 2048, start = 0, layout = #layout<(0, 1, 2, 3, 4, 5, 6, 7, "
                  "8, 9, 10), xor 0, ept 64>} : tile<2048xi32>\n"),
            "arange: the layout identity(2048 elements, 32 threads, 64 per thread) has 64 elements "
            "per thread; at most 32 are supported");
  EXPECT_EQ(error("  %0 = arange {end = 65536, start = 0, layout = #layout<(0, 1, 2, 3, 4, 5, 6, "
                  "7, 8, 9, 10, 11, 12, 13, 14, 15), xor 0, ept 32>} : tile<65536xi32>\n"),
            "arange: the layout identity(65536 elements, 2048 threads, 32 per thread) owns 65536 "
            "elements; at most 32768 are supported");
}

TEST(CheckOwnership, TileSizesAndRegisterCountsAgreeWithinAKernel) {
  EXPECT_EQ(error("  %0 = " + arange(kTranspose) +
                  " loc(\"kernel.py\":3)\n  %1 = " + arange("", 128) + " loc(\"kernel.py\":4)\n"),
            "kernel.py:4: arange: tile sizes must agree within a kernel: %1 (tile<128xi32>) has "
            "128 elements but ThreadLayout((3, 4, 5, 0, 1, 2), xor 0, 64 threads, 1 per thread) "
            "(arange at kernel.py:3) owns 64");
  EXPECT_EQ(error("  %0 = arange {end = 128, start = 0, layout = #layout<(0, 1, 2, 3, 4, 5, 6), "
                  "xor 0, ept 1>} : tile<128xi32>\n"
                  "  %1 = arange {end = 128, start = 0, layout = #layout<(0, 1, 2, 3, 4, 5, 6), "
                  "xor 0, ept 2>} : tile<128xi32> loc(\"kernel.py\":5)\n"),
            "kernel.py:5: arange: register counts must agree within a kernel: identity(128 "
            "elements, 64 threads, 2 per thread) has 2 elements per thread but identity(128 "
            "elements, 128 threads, 1 per thread) (arange) has 1");
}

TEST(CheckOwnership, ARequestedThreadCountMustMatchTheLayouts) {
  ir::Kernel k = parsed("  %0 = " + arange(kTranspose) + " loc(\"kernel.py\":3)\n");
  k.attrs["num_threads"] = int64_t{128};
  try {
    check_ownership(k);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "kernel.py:3: check_ownership: kernel 'k' asks for num_threads = 128 but "
              "ThreadLayout((3, 4, 5, 0, 1, 2), xor 0, 64 threads, 1 per thread) (arange at "
              "kernel.py:3) runs on 64 threads; ownership is never remapped");
  }
  k.attrs["num_threads"] = int64_t{64};
  EXPECT_TRUE(check_ownership(k).has_explicit_layouts());
}

TEST(CheckOwnership, TheSubsetIsStraightLineCode) {
  EXPECT_EQ(error<NotSupported>("  %0 = " + arange(kTranspose) +
                                "\n"
                                "  %1 = constant {value = 0} : i32\n"
                                "  %2 = constant {value = 1} : i32\n"
                                "  for %1, %n, %2 {\n"
                                "  ^(%i: i32):\n"
                                "    yield\n"
                                "  } loc(\"kernel.py\":8)\n"),
            "kernel.py:8: not supported: for: loops and branches are not supported in a kernel "
            "with explicit "
            "thread layouts (it must be a straight-line program)");
}

TEST(CheckOwnership, RawLaneCollectivesAndSharedMemoryAreNotSupported) {
  EXPECT_EQ(error<NotSupported>("  %0 = " + arange(kTranspose) +
                                "\n"
                                "  %1 = simd_sum %n : i32\n"),
            "not supported: simd_sum: raw SIMD-lane collectives are not supported in a kernel with "
            "explicit "
            "thread layouts: lane numbers do not follow the layouts");
  EXPECT_EQ(error<NotSupported>("  %0 = " + arange(kTranspose) +
                                "\n"
                                "  %1 = shared_alloc {size = 64} : ptr<f32, threadgroup>\n"),
            "not supported: shared_alloc: threadgroup (shared) allocations are not supported in a "
            "kernel with "
            "explicit thread layouts; convert_layout allocates the scratch it needs");
}

TEST(CheckOwnership, TilesAreOneDimensional) {
  EXPECT_EQ(error<NotSupported>("  %0 = " + arange(kTranspose) +
                                "\n"
                                "  %1 = expand_dims %0 {axis = 0} : tile<1x64xi32>\n"),
            "not supported: expand_dims: explicit thread layouts own one-dimensional tiles, but %1 "
            "(tile<1x64xi32>) is 2-D");
}

TEST(CheckOwnership, ReductionsAreF32Sums) {
  EXPECT_EQ(error<NotSupported>("  %0 = " + arange(kTranspose) +
                                "\n"
                                "  %1 = reduce %0 {kind = \"max\"} : i32\n"),
            "not supported: reduce: only sums reduce tiles in a kernel with explicit thread "
            "layouts, got max");
  EXPECT_EQ(error<NotSupported>("  %0 = " + arange(kTranspose) +
                                "\n"
                                "  %1 = cast %0 : tile<64xf16>\n"
                                "  %2 = reduce %1 {kind = \"sum\"} : f16\n"),
            "not supported: reduce: sums in a kernel with explicit thread layouts accumulate in "
            "f32, got f16; "
            "cast to f32 before summing");
}

TEST(CheckOwnership, ConvertedTypes) {
  EXPECT_EQ(error<NotSupported>("  %0 = " + arange(kTranspose) +
                                "\n"
                                "  %1 = cast %0 : tile<64xbf16>\n"
                                "  %2 = convert_layout %1 {layout = " +
                                kIdentity + "} : tile<64xbf16>\n"),
            "not supported: convert_layout: converts f16, f32, i32, u32 and i1 tiles, got bf16");
  EXPECT_EQ(error<NotSupported>("  %0 = " + arange(kTranspose) +
                                "\n"
                                "  %1 = splat %f : tile<64xptr<f32>>\n"
                                "  %2 = ptr_add %1, %0 : tile<64xptr<f32>>\n"
                                "  %3 = convert_layout %2 {layout = " +
                                kIdentity + "} : tile<64xptr<f32>>\n"),
            "not supported: convert_layout: tiles of pointers do not move between threads; convert "
            "the offsets");
  for (const std::string dtype : {"f16", "f32", "i32", "u32", "i1"})
    ownership("  %0 = " + arange(kTranspose) + "\n  %1 = cast %0 : tile<64x" + dtype +
              ">\n"
              "  %2 = convert_layout %1 {layout = " +
              kIdentity + "} : tile<64x" + dtype + ">\n");
}

TEST(CheckOwnership, MultiRegisterTilesConvertToAnyLayoutOfTheirGeometry) {
  const std::string striped = "#layout<(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), xor 0, ept 4>";
  const std::string adjacent = "#layout<(8, 9, 0, 1, 2, 3, 4, 5, 6, 7), xor 0, ept 4>";
  for (const std::string& to : {striped, adjacent})
    ownership("  %0 = " + arange(striped, 1024) +
              "\n"
              "  %1 = convert_layout %0 {layout = " +
              to + "} : tile<1024xi32>\n");
}

TEST(CheckOwnership, MetalIRIsRejected) {
  ir::Kernel k = parsed("");
  k.dialect = ir::Dialect::Metal;
  EXPECT_THROW(check_ownership(k), UserError);
}

TEST(CheckOwnership, ThePassLeavesTheMapInTheContext) {
  ir::Kernel k = parsed("  %0 = " + arange(kTranspose) + "\n");
  PassContext context(target::default_target());
  const ir::PassResult r = find_pass("check_ownership").run(std::move(k), context);
  EXPECT_FALSE(r.changed);
  ASSERT_TRUE(context.ownership);
  EXPECT_EQ(*context.ownership->layout(4), kTransposeLayout);
}

}  // namespace
}  // namespace metile::transform::testing
