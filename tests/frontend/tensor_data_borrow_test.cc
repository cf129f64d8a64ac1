// TensorData::borrow: a tensor over a caller's memory (what Python's Model.run
// makes of a numpy array), and the CacheLineAllocator that makes it possible
// without touching std::vector's internals.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "frontend/errors.h"
#include "frontend/tensor_data.h"

namespace disco {
namespace {

// A caller's buffer of floats 0, 1, 2, ... that says when it is released.
struct CallerBuffer {
  std::vector<float> values;
  bool released = false;
  std::shared_ptr<void> owner() {
    return std::shared_ptr<void>(values.data(), [this](void *) { released = true; });
  }
  explicit CallerBuffer(size_t n) : values(n) { std::iota(values.begin(), values.end(), 0.0f); }
};

TEST(TensorDataBorrow, UsesTheGivenMemoryAndKeepsItsValues) {
  CallerBuffer buf(6);
  TensorData t = TensorData::borrow(DType::F32, {2, 3}, buf.values.data(), buf.owner());
  EXPECT_EQ(t.data(), reinterpret_cast<const uint8_t *>(buf.values.data()));
  EXPECT_EQ(t.num_bytes(), 24u);
  EXPECT_EQ(t.bytes->capacity(), 24u);
  EXPECT_TRUE(t.borrowed());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.as<float>()[i], static_cast<float>(i)) << i;  // not zeroed
  EXPECT_DOUBLE_EQ(t.float_at(5), 5.0);
  t.mutable_as<float>()[4] = 40.0f;  // writes the caller's memory
  EXPECT_EQ(buf.values[4], 40.0f);
}

TEST(TensorDataBorrow, OwnerReleasedWhenTheLastTensorIsGone) {
  CallerBuffer buf(4);
  {
    TensorData t = TensorData::borrow(DType::F32, {4}, buf.values.data(), buf.owner());
    TensorData shared = t;  // shares the storage
    EXPECT_EQ(shared.bytes, t.bytes);
    EXPECT_EQ(shared.data(), t.data());
    t = TensorData();
    EXPECT_FALSE(buf.released);  // `shared` still reads it
    EXPECT_EQ(shared.as<float>()[3], 3.0f);
  }
  EXPECT_TRUE(buf.released);
}

TEST(TensorDataBorrow, DeepCopyOwnsItsBytes) {
  CallerBuffer buf(4);
  TensorData t = TensorData::borrow(DType::F32, {4}, buf.values.data(), buf.owner());
  TensorData copy = t;
  copy.bytes = std::make_shared<AlignedBytes>(*t.bytes);
  EXPECT_NE(copy.data(), t.data());
  EXPECT_FALSE(copy.borrowed());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(copy.data()) % kCacheLine, 0u);  // disco's own, aligned memory
  EXPECT_EQ(copy.as<float>()[2], 2.0f);
  copy.mutable_as<float>()[2] = -1.0f;
  EXPECT_EQ(buf.values[2], 2.0f);  // the caller's memory is untouched
  EXPECT_FALSE(buf.released);
  t = TensorData();
  EXPECT_TRUE(buf.released);  // the copy does not hold the owner
  EXPECT_EQ(copy.as<float>()[3], 3.0f);
}

TEST(TensorDataBorrow, CopyAssignmentIntoAnOwnedVectorCopiesTheBytes) {
  CallerBuffer buf(4);
  TensorData t = TensorData::borrow(DType::F32, {4}, buf.values.data(), buf.owner());
  AlignedBytes own(16, 7);
  own = *t.bytes;
  EXPECT_NE(own.data(), t.data());
  EXPECT_FALSE(own.get_allocator().borrowed());  // kept its plain allocator
  float f;
  std::memcpy(&f, own.data() + 12, 4);
  EXPECT_EQ(f, 3.0f);
}

TEST(TensorDataBorrow, GrowingMovesToOwnedZeroedMemory) {
  CallerBuffer buf(2);
  TensorData t = TensorData::borrow(DType::F32, {2}, buf.values.data(), buf.owner());
  t.bytes->resize(16);  // above the borrowed 8 bytes: reallocates
  EXPECT_NE(t.data(), reinterpret_cast<const uint8_t *>(buf.values.data()));
  EXPECT_FALSE(t.borrowed());
  EXPECT_EQ(t.as<float>()[1], 1.0f);  // moved along
  EXPECT_EQ(t.as<float>()[2], 0.0f);  // new elements are zero
  EXPECT_EQ(t.as<float>()[3], 0.0f);
  t.mutable_as<float>()[0] = 9.0f;
  EXPECT_EQ(buf.values[0], 0.0f);
  t.bytes->shrink_to_fit();
  t.bytes->resize(4);
  t.bytes->shrink_to_fit();  // fits the borrowed size again, but it is handed out once only
  EXPECT_NE(t.data(), reinterpret_cast<const uint8_t *>(buf.values.data()));
  EXPECT_EQ(buf.values[0], 0.0f);
  t = TensorData();
  EXPECT_TRUE(buf.released);
}

TEST(TensorDataBorrow, MoveAndSwapTakeTheBorrowingAlong) {
  CallerBuffer buf(4);
  TensorData t = TensorData::borrow(DType::F32, {4}, buf.values.data(), buf.owner());
  AlignedBytes moved = std::move(*t.bytes);
  EXPECT_EQ(moved.data(), reinterpret_cast<uint8_t *>(buf.values.data()));
  AlignedBytes assigned(8, 1);
  assigned = std::move(moved);  // propagates the allocator: frees its own, takes the borrowed
  EXPECT_EQ(assigned.data(), reinterpret_cast<uint8_t *>(buf.values.data()));
  AlignedBytes other(3, 5);
  other.swap(assigned);
  EXPECT_EQ(other.data(), reinterpret_cast<uint8_t *>(buf.values.data()));
  EXPECT_EQ(assigned.size(), 3u);
  EXPECT_EQ(assigned[2], 5);
  t = TensorData();
  EXPECT_FALSE(buf.released);  // `other` holds it
  other = AlignedBytes();
  moved = AlignedBytes();
  assigned = AlignedBytes();
  EXPECT_TRUE(buf.released);
}

TEST(TensorDataBorrow, AllocatorsCompareByWhatTheyCanFree) {
  using A = CacheLineAllocator<uint8_t>;
  int x = 0;
  const A plain, other_plain;
  const A b1 = A::borrowing(&x, sizeof x, nullptr), b1_copy = b1, b2 = A::borrowing(&x, sizeof x, nullptr);
  EXPECT_TRUE(plain == other_plain);
  EXPECT_TRUE(b1 == b1_copy);
  EXPECT_TRUE(b1 == CacheLineAllocator<float>(b1));  // rebound
  EXPECT_FALSE(plain == b1);
  EXPECT_FALSE(b1 == b2);
  EXPECT_TRUE(b1.select_on_container_copy_construction() == plain);
}

TEST(TensorDataBorrow, PlainTensorsStillZeroedAndAligned) {
  TensorData t(DType::F32, {3, 5});
  EXPECT_FALSE(t.borrowed());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % kCacheLine, 0u);
  for (int64_t i = 0; i < 15; ++i) EXPECT_EQ(t.as<float>()[i], 0.0f);
  AlignedBytes v(100);
  for (uint8_t b : v) EXPECT_EQ(b, 0);
}

TEST(TensorDataBorrow, EmptyTensorLetsTheOwnerGo) {
  CallerBuffer buf(1);
  TensorData t = TensorData::borrow(DType::F32, {0, 3}, buf.values.data(), buf.owner());
  EXPECT_TRUE(buf.released);
  EXPECT_EQ(t.num_bytes(), 0u);
  EXPECT_FALSE(t.borrowed());
}

TEST(TensorDataBorrow, NullDataIsAnError) {
  EXPECT_THROW(TensorData::borrow(DType::F32, {2}, nullptr, nullptr), Error);
}

}  // namespace
}  // namespace disco
