// The transposing store's tiled gather (xla/transpose.h): GatherTiled must
// write exactly what Gather writes (logical row-major order) for every
// layout, element size and budget, read each byte it needs by position, and
// keep its reads within the payload.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "decomposed/xla/transpose.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace decomposed::internal {
namespace {

struct StringOut {
  std::string data;
  size_t puts = 0;
  absl::Status Put(std::string_view d) {
    data.append(d);
    ++puts;
    return absl::OkStatus();
  }
};

Shape MakeShape(std::vector<int64_t> dims, std::vector<int64_t> m2m) {
  Shape s;
  s.element_type = 11;
  s.dimensions = std::move(dims);
  s.has_layout = true;
  s.layout.minor_to_major = std::move(m2m);
  return s;
}

// The reference: the logical row-major walk, element by element, from the
// physical strides (written independently of Gather and GatherTiled).
std::string Reference(const std::string& phys, const Shape& shape, size_t eb) {
  const size_t r = shape.dimensions.size();
  std::vector<uint64_t> stride(r);
  uint64_t acc = 1;
  for (int64_t d : shape.layout.minor_to_major) {
    stride[d] = acc;
    acc *= shape.dimensions[d];
  }
  std::string out;
  std::vector<int64_t> idx(r, 0);
  for (uint64_t n = 0; n < acc; ++n) {
    uint64_t off = 0;
    for (size_t k = 0; k < r; ++k) off += idx[k] * stride[k];
    out.append(phys, off * eb, eb);
    for (size_t k = r; k-- > 0;) {
      if (++idx[k] < shape.dimensions[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

struct Counted {
  const std::string* phys;
  size_t calls = 0;
  uint64_t bytes = 0;
  absl::Status operator()(uint64_t off, char* dst, size_t n) {
    ++calls;
    bytes += n;
    if (off > phys->size() || n > phys->size() - off) {
      return absl::OutOfRangeError("read past the payload");
    }
    std::memcpy(dst, phys->data() + off, n);
    return absl::OkStatus();
  }
};

TEST(GatherTiledTest, AgreesWithTheReferenceForRandomLayoutsAndBudgets) {
  std::mt19937 rng(20261130);
  const size_t element_sizes[] = {1, 2, 4, 8, 16};
  const uint64_t budgets[] = {64, 200, 1000, 4096, 100000, 64 << 20};
  for (int round = 0; round < 400; ++round) {
    const size_t r = 1 + rng() % 5;
    std::vector<int64_t> dims(r);
    for (auto& d : dims) d = 1 + rng() % 7;
    if (rng() % 10 == 0) dims[rng() % r] = 1;
    std::vector<int64_t> m2m(r);
    std::iota(m2m.begin(), m2m.end(), 0);
    std::shuffle(m2m.begin(), m2m.end(), rng);
    const size_t eb = element_sizes[rng() % 5];
    const uint64_t budget = budgets[rng() % 6];
    Shape shape = MakeShape(dims, m2m);
    uint64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::string phys(n * eb, '\0');
    for (auto& c : phys) c = static_cast<char>(rng());
    StringOut out;
    Counted read{&phys};
    absl::Status s = GatherTiled(read, shape, eb, out, budget);
    ASSERT_TRUE(s.ok()) << s << " " << shape.ToString();
    ASSERT_EQ(out.data, Reference(phys, shape, eb))
        << shape.ToString() << " eb " << eb << " budget " << budget;
  }
}

TEST(GatherTiledTest, AColumnMajorMatrixIsReadInTilesOfTheBudget) {
  // F32[2048, 96]{0,1}: columns of 2048 contiguous floats. A 256 KiB budget
  // keeps 32 KiB each for the read window and the output buffer, so a tile
  // is 192 KiB / (96 * 4) = 512 rows: 4 tiles of 96 runs of 2 KiB, 8 KiB
  // apart (too far to merge). Every byte is read once.
  Shape shape = MakeShape({2048, 96}, {0, 1});
  std::string phys(2048 * 96 * 4, '\0');
  for (size_t i = 0; i < phys.size(); ++i) phys[i] = static_cast<char>(i * 31 + 7);
  StringOut out;
  Counted read{&phys};
  ASSERT_TRUE(GatherTiled(read, shape, 4, out, 256 << 10).ok());
  EXPECT_EQ(out.data, Reference(phys, shape, 4));
  EXPECT_EQ(read.bytes, phys.size());
  EXPECT_EQ(read.calls, 4u * 96u);
}

TEST(GatherTiledTest, RunsCloseTogetherAreMergedIntoOneRead) {
  // F32[512, 384]{0,1} with the same budget: tiles of 128 rows, runs of
  // 512 bytes 2 KiB apart. Runs within 4 KiB of each other are read with one
  // pread and split, 16 per 32 KiB window: 24 reads per tile instead of 384.
  Shape shape = MakeShape({512, 384}, {0, 1});
  std::string phys(512 * 384 * 4, '\0');
  for (size_t i = 0; i < phys.size(); ++i) phys[i] = static_cast<char>(i * 31 + 7);
  StringOut out;
  Counted read{&phys};
  ASSERT_TRUE(GatherTiled(read, shape, 4, out, 256 << 10).ok());
  EXPECT_EQ(out.data, Reference(phys, shape, 4));
  EXPECT_EQ(read.calls, 4u * 24u);
}

TEST(GatherTiledTest, ContiguousRowsAreReadWholeAndRowMajorIsOneRun) {
  // F32[6, 5, 1000]{2,0,1}: rows of 1000 floats are contiguous, so each is
  // one unit; the permutation of the outer dims is then a 6 x 5 transpose.
  Shape shape = MakeShape({6, 5, 1000}, {2, 0, 1});
  std::string phys(6 * 5 * 1000 * 4, '\0');
  for (size_t i = 0; i < phys.size(); ++i) phys[i] = static_cast<char>(i % 251);
  StringOut out;
  Counted read{&phys};
  ASSERT_TRUE(GatherTiled(read, shape, 4, out, 1 << 20).ok());
  EXPECT_EQ(out.data, Reference(phys, shape, 4));
  EXPECT_EQ(read.bytes, phys.size());
  // Row-major: one run, copied through in pieces.
  Shape rm = MakeShape({6, 5, 1000}, {2, 1, 0});
  StringOut out2;
  Counted read2{&phys};
  ASSERT_TRUE(GatherTiled(read2, rm, 4, out2, 1 << 20).ok());
  EXPECT_EQ(out2.data, phys);
  EXPECT_EQ(read2.calls, 1u);
}

TEST(GatherTiledTest, AnOverBudgetValueIsReadCoalesced) {
  // F32[4, 30000]{0,1}: one row (30000 floats) exceeds a 64 KiB budget, so
  // each row is read unit by unit; units 16 bytes apart are merged into
  // window-sized reads rather than 30000 reads per row.
  Shape shape = MakeShape({4, 30000}, {0, 1});
  std::string phys(4 * 30000 * 4, '\0');
  for (size_t i = 0; i < phys.size(); ++i) phys[i] = static_cast<char>(i * 13);
  StringOut out;
  Counted read{&phys};
  ASSERT_TRUE(GatherTiled(read, shape, 4, out, 64 << 10).ok());
  EXPECT_EQ(out.data, Reference(phys, shape, 4));
  EXPECT_LT(read.calls, 4u * 100u);
}

TEST(GatherTiledTest, ReadAndOutputErrorsStopTheWalk) {
  Shape shape = MakeShape({40, 50}, {0, 1});
  std::string phys(40 * 50 * 8, 'x');
  int calls = 0;
  StringOut out;
  absl::Status s = GatherTiled(
      [&](uint64_t, char*, size_t) -> absl::Status {
        if (++calls == 3) return absl::DataLossError("disk");
        return absl::OkStatus();
      },
      shape, 8, out, 2000);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(calls, 3);
  struct FailingOut {
    absl::Status Put(std::string_view) { return absl::CancelledError("stop"); }
  } bad;
  Counted read{&phys};
  EXPECT_EQ(GatherTiled(read, shape, 8, bad, 2000).code(), absl::StatusCode::kCancelled);
}

TEST(PhysicalStoreTest, ReadAtReadsBackTheTempFile) {
  test::TempDir d;
  PhysicalStore store;
  ASSERT_TRUE(store.Init(10, /*max_in_memory=*/4, d.path()).ok());
  EXPECT_TRUE(store.in_file());
  ASSERT_TRUE(store.Put("0123456789").ok());
  char buf[4];
  ASSERT_TRUE(store.ReadAt(3, buf, 4).ok());
  EXPECT_EQ(std::string(buf, 4), "3456");
  EXPECT_EQ(store.ReadAt(8, buf, 4).code(), absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace decomposed::internal
