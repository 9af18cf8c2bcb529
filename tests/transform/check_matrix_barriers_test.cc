// check_matrix_barriers: each rule of seed 002's shared-memory contract, with its message, and
// the orders that need no barrier.
#include <gtest/gtest.h>

#include "metile/ir/builder.h"
#include "metile/transform/check_matrix_barriers.h"

namespace metile::transform::testing {
namespace {

using ir::DType;
using ir::OpKind;
using ir::ValueId;

// A kernel `k` with one shared allocation of `size` f32 and helpers for its accesses.
struct SharedKernel {
  ir::Kernel k;
  ir::TileBuilder b{k};
  ValueId in, shared;

  explicit SharedKernel(int64_t size = 64) {
    k.name = "exchange";
    in = b.add_param("in", ir::Type::ptr(DType::f32), "read");
    shared = b.shared_alloc(size, DType::f32);
  }
  ValueId at(int64_t offset) {  // shared + offset + thread_id() % 64
    ValueId lane = b.binary(OpKind::Rem, b.thread_id(), b.constant_int(64));
    return b.ptr_add(shared, b.binary(OpKind::Add, lane, b.constant_int(offset)));
  }
  void scalar_store(ValueId ptr) { b.store(ptr, b.load(b.ptr_add(in, b.thread_id()))); }
  ValueId scalar_load(ValueId ptr) { return b.load(ptr); }
  ValueId matrix_load(int64_t offset = 0) {
    return b.matrix_load(shared, b.constant_int(offset), b.constant_int(8), false);
  }
  void matrix_store(int64_t offset = 0) {
    b.matrix_store(b.matrix_fill(b.constant(1.0, DType::f32)), shared, b.constant_int(offset),
                   b.constant_int(8), false);
  }
};

std::string error_of(const ir::Kernel& k) {
  try {
    check_matrix_barriers(k);
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CheckMatrixBarriers, ScalarWritesNeedABarrierBeforeAMatrixLoad) {
  SharedKernel s;
  s.scalar_store(s.at(0));
  s.matrix_load();
  EXPECT_EQ(error_of(s.k),
            "matrix_load: in kernel 'exchange', a matrix load of shared allocation %0 (64 x f32) "
            "(elements 0..63) follows a scalar store (elements 0..63) with no metile.barrier() "
            "between them; a barrier must publish scalar writes before a matrix load reads them");
  SharedKernel fixed;
  fixed.scalar_store(fixed.at(0));
  fixed.b.barrier();
  fixed.matrix_load();
  EXPECT_EQ(error_of(fixed.k), "(no error)");
}

TEST(CheckMatrixBarriers, AMatrixStoreNeedsABarrierBeforeScalarLoads) {
  SharedKernel s;
  s.matrix_store();
  s.scalar_load(s.at(0));
  const std::string e = error_of(s.k);
  EXPECT_NE(e.find("load: in kernel 'exchange', a scalar load of shared allocation %0"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("follows a matrix store (elements 0..63) with no metile.barrier() between "
                   "them; a barrier must publish a matrix store before scalar loads read it"),
            std::string::npos)
      << e;
}

TEST(CheckMatrixBarriers, AMatrixLoadMustFinishBeforeTheStorageIsOverwritten) {
  SharedKernel s;
  s.matrix_load();
  s.scalar_store(s.at(0));
  EXPECT_NE(error_of(s.k).find("a scalar store of shared allocation %0 (64 x f32) (elements "
                               "0..63) follows a matrix load (elements 0..63) with no "
                               "metile.barrier() between them; a barrier must finish the matrix "
                               "load before the storage is overwritten"),
            std::string::npos)
      << error_of(s.k);
  SharedKernel matrix;
  matrix.matrix_load();
  matrix.matrix_store();
  EXPECT_NE(error_of(matrix.k).find("a matrix store of shared allocation"), std::string::npos);
}

TEST(CheckMatrixBarriers, TheLoopBackedgeCounts) {
  // for: shared[t] = in[t]; barrier; matrix_load(shared): the next iteration's store
  // overwrites what this iteration's matrix load reads.
  SharedKernel s;
  s.b.begin_for(s.b.constant_int(0), s.b.constant_int(4), s.b.constant_int(1), {});
  s.scalar_store(s.at(0));
  s.b.barrier();
  s.matrix_load();
  s.b.end_for({});
  EXPECT_NE(error_of(s.k).find("follows a matrix load (elements 0..63) in the previous loop "
                               "iteration (the backedge) with no metile.barrier() between them; "
                               "a barrier must finish the matrix load before the storage is "
                               "overwritten"),
            std::string::npos)
      << error_of(s.k);
  SharedKernel fixed;
  fixed.b.begin_for(fixed.b.constant_int(0), fixed.b.constant_int(4), fixed.b.constant_int(1), {});
  fixed.scalar_store(fixed.at(0));
  fixed.b.barrier();
  fixed.matrix_load();
  fixed.b.barrier();
  fixed.b.end_for({});
  EXPECT_EQ(error_of(fixed.k), "(no error)");
}

TEST(CheckMatrixBarriers, DisjointRegionsOfOneAllocationNeedNoBarrier) {
  // Scalar writes to elements 64..127 while the matrix reads 0..63 and writes 128..191.
  SharedKernel s(192);
  s.matrix_load(0);
  s.scalar_store(s.at(64));
  s.matrix_store(128);
  s.scalar_load(s.at(0));
  EXPECT_EQ(error_of(s.k), "(no error)");
}

TEST(CheckMatrixBarriers, UnknownOffsetsOverlapTheAllocation) {
  // shared[in[t]]: the index is data, so it may be any element, even far from the tile.
  SharedKernel s(192);
  ValueId index = s.b.cast(s.b.load(s.b.ptr_add(s.in, s.b.thread_id())), DType::i32);
  s.scalar_store(s.b.ptr_add(s.shared, index));
  s.matrix_load(128);
  EXPECT_NE(error_of(s.k).find("(elements 128..191) follows a scalar store (any element)"),
            std::string::npos)
      << error_of(s.k);
}

TEST(CheckMatrixBarriers, LossyIndexConversionsOverlapTheAllocation) {
  // (t % 64 + 64) as i64, then back to i32: the narrowing could wrap, so it bounds nothing.
  SharedKernel s(192);
  ValueId lane = s.b.binary(OpKind::Rem, s.b.thread_id(), s.b.constant_int(64));
  ValueId wide = s.b.cast(s.b.binary(OpKind::Add, lane, s.b.constant_int(64)), DType::i64);
  s.scalar_store(s.b.ptr_add(s.shared, s.b.cast(wide, DType::i32)));
  s.matrix_load(128);
  EXPECT_NE(error_of(s.k).find("follows a scalar store (any element)"), std::string::npos)
      << error_of(s.k);
}

TEST(CheckMatrixBarriers, KernelsWithoutMatrixAccessesAreNotChecked) {
  SharedKernel s;
  s.scalar_store(s.at(0));
  s.scalar_load(s.at(1));
  EXPECT_EQ(error_of(s.k), "(no error)");
}

}  // namespace
}  // namespace metile::transform::testing
