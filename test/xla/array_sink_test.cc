// The array sinks of the literal decoder: ArrayBuffer (xla/array_buffer.h)
// against values worked out by hand from docs/format.md, and NpyArraySink
// (npy/literal_to_npy.h) against hand-written .npy bytes. Literal bodies are
// literal bytes: tag, length, payload, as the wire format spells them.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/limited_source.h"
#include "decomposed/npy/literal_to_npy.h"
#include "decomposed/xla/array_buffer.h"
#include "decomposed/xla/literal_decoder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace decomposed {
namespace {

using ::decomposed::test::HandNpyHeader;
using ::decomposed::test::ReadFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string B(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

struct Result {
  absl::Status status;
  LiteralPath path = LiteralPath::kGeneral;
};

Result Decode(const std::string& body, ArraySink& sink) {
  MemorySource src(body);
  Result r;
  r.status = DecodeLiteral(src, body.size(), Frame{"input", 0, "body"}, sink,
                           {}, nullptr, &r.path);
  return r;
}

// S32[3]{0} = [-1, 300, 0]. shape: 10 04 (S32) 1a 01 03 (dims [3])
// 2a 03 0a 01 00 (minor_to_major [0]); s32s (field 4, tag 22): -1 is the
// 10-byte sign-extended varint ff ff ff ff ff ff ff ff ff 01, 300 is ac 02,
// 0 is 00: 13 bytes.
const std::string kS32Body =
    B({0x0a, 0x0a, 0x10, 0x04, 0x1a, 0x01, 0x03, 0x2a, 0x03, 0x0a, 0x01,
       0x00, 0x22, 0x0d, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
       0xff, 0x01, 0xac, 0x02, 0x00});

TEST(ArrayBuffer, S32VarintsWithANegative) {
  ArrayBuffer a;
  Result r = Decode(kS32Body, a);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.path, LiteralPath::kVarint);
  ASSERT_TRUE(a.complete());
  EXPECT_EQ(a.type(), PrimitiveType::kS32);
  EXPECT_THAT(a.dims(), ElementsAre(3));
  EXPECT_EQ(a.element_count(), 3u);
  EXPECT_EQ(a.order(), ElementOrder::kRowMajor);
  EXPECT_FALSE(a.header().size_proven);  // varints: count known only at end
  // Little endian: -1 = ff ff ff ff, 300 = 2c 01 00 00, 0.
  EXPECT_EQ(a.bytes(), B({0xff, 0xff, 0xff, 0xff, 0x2c, 0x01, 0x00, 0x00,
                          0x00, 0x00, 0x00, 0x00}));
  EXPECT_THAT(a.Values<int32_t>(), ElementsAre(-1, 300, 0));
  EXPECT_TRUE(a.Values<int64_t>().empty());  // wrong width: no view
}

TEST(ArrayBuffer, PredIsOneBytePerElementZeroOrOne) {
  // PRED[4]{0} (10 01): preds (field 2, tag 12) = 01 00 05 01. Any non-zero
  // varint is true, stored as 01.
  const std::string body = B({0x0a, 0x0a, 0x10, 0x01, 0x1a, 0x01, 0x04, 0x2a,
                              0x03, 0x0a, 0x01, 0x00, 0x12, 0x04, 0x01, 0x00,
                              0x05, 0x01});
  ArrayBuffer a;
  Result r = Decode(body, a);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(a.type(), PrimitiveType::kPred);
  EXPECT_EQ(a.bytes(), B({0x01, 0x00, 0x01, 0x01}));
}

TEST(ArrayBuffer, Bf16BytesAreCopiedAsTheyAre) {
  // BF16[2]{0} (10 10): bf16s (field 13, tag 6a) = 80 3f 00 40, i.e. 1.0
  // and 2.0 as little-endian bfloat16.
  const std::string body = B({0x0a, 0x0a, 0x10, 0x10, 0x1a, 0x01, 0x02, 0x2a,
                              0x03, 0x0a, 0x01, 0x00, 0x6a, 0x04, 0x80, 0x3f,
                              0x00, 0x40});
  ArrayBuffer a;
  Result r = Decode(body, a);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.path, LiteralPath::kView);  // a MemorySource: zero-copy
  EXPECT_EQ(a.type(), PrimitiveType::kBF16);
  EXPECT_TRUE(a.header().size_proven);
  EXPECT_EQ(a.bytes(), B({0x80, 0x3f, 0x00, 0x40}));
  EXPECT_THAT(a.Values<uint16_t>(), ElementsAre(0x3f80, 0x4000));
}

// U8[2,3]{0,1}: column-major. Element (i, j) is 3i + j, so the physical
// (first-dimension-fastest) bytes are (0,0) (1,0) (0,1) (1,1) (0,2) (1,2) =
// 00 03 01 04 02 05. shape: 10 06 1a 02 02 03 2a 04 0a 02 00 01.
const std::string kColumnMajorBody =
    B({0x0a, 0x0c, 0x10, 0x06, 0x1a, 0x02, 0x02, 0x03, 0x2a, 0x04, 0x0a,
       0x02, 0x00, 0x01, 0x1a, 0x06, 0x00, 0x03, 0x01, 0x04, 0x02, 0x05});

TEST(ArrayBuffer, ColumnMajorIsTransposedToRowMajor) {
  ArrayBuffer a;
  Result r = Decode(kColumnMajorBody, a);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.path, LiteralPath::kTranspose);
  EXPECT_EQ(a.order(), ElementOrder::kRowMajor);
  EXPECT_THAT(a.dims(), ElementsAre(2, 3));
  EXPECT_EQ(a.bytes(), B({0x00, 0x01, 0x02, 0x03, 0x04, 0x05}));
}

TEST(ArrayBuffer, ColumnMajorKeptWhenAccepted) {
  ArrayBuffer a;
  a.accept_column_major(true);
  Result r = Decode(kColumnMajorBody, a);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.path, LiteralPath::kView);
  EXPECT_EQ(a.order(), ElementOrder::kColumnMajor);
  EXPECT_EQ(a.bytes(), B({0x00, 0x03, 0x01, 0x04, 0x02, 0x05}));
}

TEST(ArrayBuffer, ThreeDimensionalPermutation) {
  // U8[2,2,2]{0,2,1}: dimension 0 fastest, then 2, then 1. Element
  // (i0, i1, i2) has row-major index 4 i0 + 2 i1 + i2 and sits at physical
  // index i0 + 2 (i2 + 2 i1). Walking the physical order:
  //   i1=0: i2=0: (0,0,0)=0 (1,0,0)=4; i2=1: (0,0,1)=1 (1,0,1)=5
  //   i1=1: i2=0: (0,1,0)=2 (1,1,0)=6; i2=1: (0,1,1)=3 (1,1,1)=7
  // shape: 10 06 1a 03 02 02 02 2a 05 0a 03 00 02 01.
  const std::string body =
      B({0x0a, 0x0e, 0x10, 0x06, 0x1a, 0x03, 0x02, 0x02, 0x02, 0x2a, 0x05,
         0x0a, 0x03, 0x00, 0x02, 0x01, 0x1a, 0x08, 0x00, 0x04, 0x01, 0x05,
         0x02, 0x06, 0x03, 0x07});
  for (bool accept : {false, true}) {  // a permutation is always gathered
    ArrayBuffer a;
    a.accept_column_major(accept);
    Result r = Decode(body, a);
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_EQ(r.path, LiteralPath::kTranspose);
    EXPECT_EQ(a.order(), ElementOrder::kRowMajor);
    EXPECT_EQ(a.bytes(),
              B({0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07}));
  }
}

TEST(ArrayBuffer, PermutedVarintsGoThroughThePhysicalStore) {
  // S32[2,2]{0,1} = [[1, 2], [3, 4]]: physical order 1 3 2 4.
  const std::string body = B({0x0a, 0x0c, 0x10, 0x04, 0x1a, 0x02, 0x02, 0x02,
                              0x2a, 0x04, 0x0a, 0x02, 0x00, 0x01, 0x22, 0x04,
                              0x01, 0x03, 0x02, 0x04});
  ArrayBuffer a;
  Result r = Decode(body, a);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(a.Values<int32_t>(), ElementsAre(1, 2, 3, 4));
}

TEST(ArrayBuffer, FromABoundedView) {
  // The body between other bytes, handed to the decoder as a LimitedSource:
  // it reads exactly the body and reports offsets of the whole stream.
  const std::string stream = "head" + kS32Body + "tail";
  MemorySource src(stream);
  ASSERT_TRUE(src.Skip(4));
  LimitedSource<MemorySource> body(src, 4 + kS32Body.size());
  ArrayBuffer a;
  absl::Status s = DecodeLiteral(body, body.remaining(),
                                 Frame{"input", 0, "body"}, a);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(a.Values<int32_t>(), ElementsAre(-1, 300, 0));

  // Cut one byte short: the last varint runs past the view.
  MemorySource src2(stream);
  ASSERT_TRUE(src2.Skip(4));
  LimitedSource<MemorySource> cut(src2, 4 + kS32Body.size() - 1);
  ArrayBuffer b;
  s = DecodeLiteral(cut, cut.remaining(), Frame{"input", 0, "body"}, b);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("input 0 body"));
  EXPECT_THAT(s.message(), HasSubstr("(at byte 16)"));  // the s32s tag
}

TEST(ArrayBuffer, CallerMemory) {
  std::vector<char> mem(12, 'x');
  ArrayBuffer a(mem);
  ASSERT_TRUE(Decode(kS32Body, a).status.ok());
  EXPECT_EQ(a.bytes().data(), mem.data());
  EXPECT_EQ(std::string(mem.data(), 12),
            B({0xff, 0xff, 0xff, 0xff, 0x2c, 0x01, 0x00, 0x00, 0x00, 0x00,
               0x00, 0x00}));
  EXPECT_TRUE(a.TakeBytes().empty());  // nothing owned

  std::vector<char> small(11);
  ArrayBuffer b(small);
  absl::Status s = Decode(kS32Body, b).status;
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("at most 11 bytes, found S32 of 12"));
  EXPECT_FALSE(b.complete());
}

TEST(ArrayBuffer, MaxBytesAndReuse) {
  ArrayBuffer a;
  a.set_max_bytes(11);
  EXPECT_EQ(Decode(kS32Body, a).status.code(),
            absl::StatusCode::kResourceExhausted);
  a.set_max_bytes(12);
  ASSERT_TRUE(Decode(kS32Body, a).status.ok());
  // Reused for another literal: starts over.
  ASSERT_TRUE(Decode(kColumnMajorBody, a).status.ok());
  EXPECT_EQ(a.type(), PrimitiveType::kU8);
  EXPECT_EQ(a.size(), 6u);
  std::vector<char> taken = a.TakeBytes();
  EXPECT_EQ(std::string(taken.begin(), taken.end()),
            B({0x00, 0x01, 0x02, 0x03, 0x04, 0x05}));
  EXPECT_FALSE(a.complete());
}

TEST(ArrayBuffer, FewerVarintsThanTheShapeIsAnErrorAndNotComplete) {
  // S32[1000000000]{0} with one varint: the declared 4 GB are never
  // reserved (size_proven is false) and the count mismatch is reported.
  const std::string body = B({0x0a, 0x0e, 0x10, 0x04, 0x1a, 0x05, 0x80, 0x94,
                              0xeb, 0xdc, 0x03, 0x2a, 0x03, 0x0a, 0x01, 0x00,
                              0x22, 0x01, 0x07});
  ArrayBuffer a;
  absl::Status s = Decode(body, a).status;
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("found 1 elements"));
  EXPECT_FALSE(a.complete());
  EXPECT_EQ(a.size(), 4u);
}

// --- NpyArraySink ---------------------------------------------------------

TEST(NpyArraySink, ColumnMajorIsWrittenAsFortranOrder) {
  std::string out;
  StringSink file(&out);
  NpyArraySink<StringSink> npy(file);
  EXPECT_TRUE(npy.AcceptsColumnMajor());
  Result r = Decode(kColumnMajorBody, npy);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(out, HandNpyHeader("{'descr': '|u1', 'fortran_order': True, "
                               "'shape': (2, 3), }") +
                     B({0x00, 0x03, 0x01, 0x04, 0x02, 0x05}));
}

TEST(NpyArraySink, BeginWriteFinishByHand) {
  std::string out;
  StringSink file(&out);
  NpyArraySink<StringSink> npy(file);
  ArrayHeader h;
  h.type = &Info(PrimitiveType::kBF16);
  h.dims = {2};
  h.element_count = 2;
  h.byte_size = 4;
  ASSERT_TRUE(npy.Begin(h).ok());
  ASSERT_TRUE(npy.Write(B({0x80, 0x3f, 0x00})).ok());  // splits an element
  ASSERT_TRUE(npy.Write(B({0x40})).ok());
  EXPECT_FALSE(npy.Write(B({0x00})).ok());  // past the declared size
  EXPECT_EQ(npy.PayloadFd(), nullptr);      // a StringSink has no fd
  EXPECT_EQ(out, HandNpyHeader("{'descr': '|V2', 'fortran_order': False, "
                               "'shape': (2,), }") +
                     B({0x80, 0x3f, 0x00, 0x40}));
}

TEST(NpyArraySink, FdSinkTakesKernelCopies) {
  std::string path = ::testing::TempDir() + "/array_sink_test_fd.npy";
  {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                    0644);
    ASSERT_GE(fd, 0);
    FdSink file{OwnedFd(fd)};
    NpyArraySink<FdSink> npy(file);
    ArrayHeader h;
    h.type = &Info(PrimitiveType::kU8);
    h.dims = {4};
    h.element_count = 4;
    h.byte_size = 4;
    ASSERT_TRUE(npy.Begin(h).ok());
    ASSERT_TRUE(npy.Write("ab").ok());
    FdSink* fs = npy.PayloadFd();
    ASSERT_EQ(fs, &file);
    // What the decoder does for a kernel copy: flush, write to the fd, say so.
    ASSERT_TRUE(fs->Flush());
    ASSERT_EQ(::write(fs->fd(), "cd", 2), 2);
    ASSERT_TRUE(npy.WroteToFd(2).ok());
    EXPECT_FALSE(npy.WroteToFd(1).ok());  // more than declared
    ASSERT_TRUE(npy.Finish().ok());
    EXPECT_EQ(file.position(), 128u + 4);
  }
  EXPECT_EQ(ReadFile(path), HandNpyHeader("{'descr': '|u1', 'fortran_order': "
                                          "False, 'shape': (4,), }") +
                                "abcd");
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace decomposed
