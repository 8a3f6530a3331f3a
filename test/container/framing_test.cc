// Primitive B, Composite C and the whole decomposed file: golden bytes
// assembled by hand from the spec, round trips, truncation at every byte,
// trailing data, and declared sizes past the end of the data.
//
// Boxes below are minimal boxes `[2+n] 3a [n] <varint>` (see box_test.cc):
// a value v < 128 is `03 3a 01 v`.
#include "decomposed/container/framing.h"

#include <string>
#include <vector>

#include "decomposed/testing/fault_source.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "read_whole.h"
#include "test_util.h"

namespace decomposed {
namespace {

using ::decomposed::test::HexBytes;
using ::decomposed::test::ReadWhole;
using ::decomposed::test::ToHex;
using ::decomposed::test::WholeFile;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr uint64_t kMax = ~uint64_t{0};

// --- the tiny file ------------------------------------------------------------
//
// Snapshot: HloSnapshot { hlo (1) { hlo_module (1) { name (1): "m" } } }
//   name "m":          0a 01 6d
//   hlo_module:        0a 03 0a 01 6d
//   hlo:               0a 05 0a 03 0a 01 6d          (7 bytes)
// Input 0: LiteralProto { shape (1) { element_type (2): S32 (4),
//                                     layout (5) {} }, s32s (4): [5] }
//   shape payload      10 04 2a 00 -> 0a 04 10 04 2a 00
//   s32s packed        tag (4<<3)|2 = 22: 22 01 05
//   body               0a 04 10 04 2a 00 22 01 05     (9 bytes)
// Input 1: s32s [1, 2] and no shape (framing does not look inside bodies)
//   body               22 02 01 02                   (4 bytes)
// Output 0: like input 0 with s32s [10]
//   body               0a 04 10 04 2a 00 22 01 0a     (9 bytes)
//
//   offset  bytes                          frame
//   0       03 3a 01 07                    header length box (7)
//   4       0a 05 0a 03 0a 01 6d           header
//   11      03 3a 01 02                    input count box (2)
//   15      03 3a 01 09                    input 0 body length box (9)
//   19      0a 04 10 04 2a 00 22 01 05     input 0 body
//   28      03 3a 01 04                    input 1 body length box (4)
//   32      22 02 01 02                    input 1 body
//   36      03 3a 01 01                    output count box (1)
//   40      03 3a 01 09                    output 0 body length box (9)
//   44      0a 04 10 04 2a 00 22 01 0a     output 0 body
//   53      end
const char kTinyHex[] =
    "03 3a 01 07  0a 05 0a 03 0a 01 6d"
    "03 3a 01 02"
    "03 3a 01 09  0a 04 10 04 2a 00 22 01 05"
    "03 3a 01 04  22 02 01 02"
    "03 3a 01 01"
    "03 3a 01 09  0a 04 10 04 2a 00 22 01 0a";
constexpr size_t kTinySize = 53;
constexpr size_t kTinyRegion1End = 36;

const std::string& Tiny() {
  static const std::string* s = new std::string(HexBytes(kTinyHex));
  return *s;
}

TEST(TinyFileTest, Layout) {
  ASSERT_EQ(Tiny().size(), kTinySize);
  MemorySource src(Tiny());
  absl::StatusOr<WholeFile> f = ReadWhole(src);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->header.box_offset, 0u);
  EXPECT_EQ(f->header.box_length, 4u);
  EXPECT_EQ(f->header.offset, 4u);
  EXPECT_EQ(f->header.length, 7u);
  EXPECT_EQ(ToHex(f->snapshot), "0a 05 0a 03 0a 01 6d");
  ASSERT_EQ(f->inputs.size(), 2u);
  EXPECT_EQ(f->inputs[0].box_offset, 15u);
  EXPECT_EQ(f->inputs[0].box_length, 4u);
  EXPECT_EQ(f->inputs[0].offset, 19u);
  EXPECT_EQ(f->inputs[0].length, 9u);
  EXPECT_EQ(f->inputs[1].box_offset, 28u);
  EXPECT_EQ(f->inputs[1].offset, 32u);
  EXPECT_EQ(f->inputs[1].length, 4u);
  EXPECT_EQ(ToHex(f->input_bodies[0]), "0a 04 10 04 2a 00 22 01 05");
  EXPECT_EQ(ToHex(f->input_bodies[1]), "22 02 01 02");
  EXPECT_TRUE(f->outputs_present);
  ASSERT_EQ(f->outputs.size(), 1u);
  EXPECT_EQ(f->outputs[0].box_offset, 40u);
  EXPECT_EQ(f->outputs[0].offset, 44u);
  EXPECT_EQ(f->outputs[0].length, 9u);
  EXPECT_EQ(ToHex(f->output_bodies[0]), "0a 04 10 04 2a 00 22 01 0a");
  EXPECT_EQ(f->end_position, kTinySize);
}

TEST(TinyFileTest, WriterProducesTheGoldenBytes) {
  std::string out;
  StringSink sink(&out);
  DecomposedWriter<StringSink> w(sink);
  ASSERT_TRUE(w.WriteHeader(HexBytes("0a 05 0a 03 0a 01 6d")).ok());
  ASSERT_TRUE(w.BeginInputs(2).ok());
  ASSERT_TRUE(w.WriteElement(HexBytes("0a 04 10 04 2a 00 22 01 05")).ok());
  // The second input streamed in two pieces.
  ASSERT_TRUE(w.BeginElement(4).ok());
  ASSERT_TRUE(w.Append(HexBytes("22 02")).ok());
  ASSERT_TRUE(w.Append(HexBytes("01 02")).ok());
  ASSERT_TRUE(w.BeginOutputs(1).ok());
  ASSERT_TRUE(w.WriteElement(HexBytes("0a 04 10 04 2a 00 22 01 0a")).ok());
  ASSERT_TRUE(w.Finish().ok());
  EXPECT_EQ(ToHex(out), ToHex(Tiny()));
}

TEST(TinyFileTest, WithoutRegion2) {
  std::string cut = Tiny().substr(0, kTinyRegion1End);
  MemorySource src(cut);
  absl::StatusOr<WholeFile> f = ReadWhole(src);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_FALSE(f->outputs_present);
  EXPECT_EQ(f->inputs.size(), 2u);
  EXPECT_EQ(f->end_position, kTinyRegion1End);

  // The writer leaves region [2] out only when told to.
  std::string out;
  StringSink sink(&out);
  DecomposedWriteOptions o;
  o.write_output_count = false;
  DecomposedWriter<StringSink> w(sink, o);
  ASSERT_TRUE(w.WriteHeader(f->snapshot).ok());
  ASSERT_TRUE(w.BeginInputs(2).ok());
  ASSERT_TRUE(w.WriteElement(f->input_bodies[0]).ok());
  ASSERT_TRUE(w.WriteElement(f->input_bodies[1]).ok());
  ASSERT_TRUE(w.Finish().ok());
  EXPECT_EQ(ToHex(out), ToHex(cut));
}

TEST(TinyFileTest, WriterAlwaysWritesAnOutputCountByDefault) {
  // Region [1] of the tiny file, then an output count of 0: 03 3a 01 00.
  std::string out;
  StringSink sink(&out);
  DecomposedWriter<StringSink> w(sink);
  ASSERT_TRUE(w.WriteHeader(HexBytes("0a 05 0a 03 0a 01 6d")).ok());
  ASSERT_TRUE(w.BeginInputs(2).ok());
  ASSERT_TRUE(w.WriteElement(HexBytes("0a 04 10 04 2a 00 22 01 05")).ok());
  ASSERT_TRUE(w.WriteElement(HexBytes("22 02 01 02")).ok());
  ASSERT_TRUE(w.Finish().ok());
  EXPECT_EQ(ToHex(out),
            ToHex(Tiny().substr(0, kTinyRegion1End) + HexBytes("03 3a 01 00")));
  MemorySource src(out);
  absl::StatusOr<WholeFile> f = ReadWhole(src);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->outputs_present);
  EXPECT_TRUE(f->outputs.empty());
}

// The frame that a file cut after `t` bytes must name. With a source of
// known size, a count that cannot fit in the bytes that remain (3 bytes per
// element at least) is rejected at the count box itself.
std::string ExpectedFrame(size_t t, bool known_size) {
  if (t < 4) return "header length box";
  if (t < 11) return "header";
  if (t < 15) return "input count box";
  if (known_size && t < 21) return "input count box";  // 2 > (t-15)/3
  if (t < 19) return "input 0 body length box";
  if (t < 28) return "input 0 body";
  if (t < 32) return "input 1 body length box";
  if (t < 36) return "input 1 body";
  if (t == 36) return "";  // region [2] absent: valid
  if (t < 40) return "output count box";
  if (known_size && t < 43) return "output count box";  // 1 > (t-40)/3
  if (t < 44) return "output 0 body length box";
  if (t < 53) return "output 0 body";
  return "";
}

template <class MakeSource>
void CheckEveryTruncation(MakeSource make, bool known_size) {
  for (size_t t = 0; t <= kTinySize; ++t) {
    std::string cut = Tiny().substr(0, t);
    auto src = make(cut);
    absl::StatusOr<WholeFile> f = ReadWhole(*src);
    std::string frame = ExpectedFrame(t, known_size);
    if (frame.empty()) {
      ASSERT_TRUE(f.ok()) << "cut at " << t << ": " << f.status();
      EXPECT_EQ(f->outputs_present, t == kTinySize);
      continue;
    }
    ASSERT_FALSE(f.ok()) << "cut at " << t;
    EXPECT_EQ(f.status().code(), absl::StatusCode::kOutOfRange)
        << "cut at " << t << ": " << f.status();
    EXPECT_THAT(std::string(f.status().message()), StartsWith(frame + ":"))
        << "cut at " << t;
    EXPECT_THAT(f.status().message(), HasSubstr("(at byte "))
        << "cut at " << t;
  }
}

TEST(TruncationTest, EveryByteOffsetKnownSize) {
  CheckEveryTruncation(
      [](const std::string& s) { return std::make_unique<MemorySource>(s); },
      true);
}

TEST(TruncationTest, EveryByteOffsetUnknownSize) {
  // Like a pipe: no size, no seeking, 1-byte reads.
  CheckEveryTruncation(
      [](const std::string& s) {
        testing::FaultOptions o;
        o.known_size = false;
        o.seekable = false;
        o.max_read = 1;
        return std::make_unique<testing::FaultSource>(s, o);
      },
      false);
}

TEST(TruncationTest, MessagesGiveExpectedAndFound) {
  // Cut inside input 0's body: 2 of its 9 bytes remain.
  std::string cut = Tiny().substr(0, 21);
  MemorySource src(cut);
  absl::StatusOr<WholeFile> f = ReadWhole(src);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(),
            "input 0 body: declared 9 bytes but 2 remain (at byte 19)");
  // Cut inside the header.
  cut = Tiny().substr(0, 6);
  MemorySource src2(cut);
  f = ReadWhole(src2);
  EXPECT_EQ(f.status().message(),
            "header: declared 7 bytes but 2 remain (at byte 4)");
  // Cut inside the output count box: 2 of its 4 bytes.
  cut = Tiny().substr(0, 38);
  MemorySource src3(cut);
  f = ReadWhole(src3);
  EXPECT_EQ(f.status().message(),
            "output count box: declared 3 bytes but 1 remain (at byte 37)");
}

TEST(TrailingDataTest, BytesAfterRegion2AreAnError) {
  for (const char* extra : {"00", "03 3a 01 00", "ff ff ff"}) {
    std::string data = Tiny() + HexBytes(extra);
    MemorySource src(data);
    absl::StatusOr<WholeFile> f = ReadWhole(src);
    ASSERT_FALSE(f.ok()) << extra;
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(f.status().message()), StartsWith("trailing data:"));
    EXPECT_THAT(f.status().message(), HasSubstr("(at byte 53)"));
    EXPECT_THAT(f.status().message(),
                HasSubstr(absl::StrCat(HexBytes(extra).size(), " more bytes")));
    // Also through a pipe-like source.
    testing::FaultOptions o;
    o.known_size = false;
    o.seekable = false;
    testing::FaultSource pipe(data, o);
    f = ReadWhole(pipe);
    ASSERT_FALSE(f.ok());
    EXPECT_THAT(std::string(f.status().message()), StartsWith("trailing data:"));
  }
}

TEST(TrailingDataTest, GarbageWhereRegion2ShouldBe) {
  // One stray byte after region [1] is read as a truncated output count box.
  std::string data = Tiny().substr(0, kTinyRegion1End) + HexBytes("05");
  MemorySource src(data);
  absl::StatusOr<WholeFile> f = ReadWhole(src);
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()), StartsWith("output count box:"));
}

// --- declared sizes past the end ----------------------------------------------

TEST(DeclaredSizeTest, CountLargerThanRemainingBytes) {
  // Snapshot of 0 bytes (03 3a 01 00), then an input count of 2^64-1 with
  // nothing after it. Rejected at the count, before any element is read.
  std::string data =
      HexBytes("03 3a 01 00  0c 3a 0a ff ff ff ff ff ff ff ff ff 01");
  MemorySource src(data);
  DecomposedReader<MemorySource> r(src);
  ASSERT_TRUE(r.ReadHeader(nullptr).ok());
  absl::StatusOr<uint64_t> n = r.StartInputs();
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(n.status().message()), StartsWith("input count box:"));
  EXPECT_THAT(n.status().message(),
              HasSubstr("a count of 18446744073709551615"));
  EXPECT_THAT(n.status().message(), HasSubstr("(at byte 4)"));
}

TEST(DeclaredSizeTest, CountThatExactlyFits) {
  // Count 2 then two empty elements (03 3a 01 00 each): 6 bytes for 2.
  std::string data = HexBytes("03 3a 01 02  03 3a 01 00  03 3a 01 00");
  MemorySource src(data);
  BlockReader<MemorySource> r(src, "input");
  ASSERT_EQ(*r.Start(), 2u);
  ElementInfo e;
  EXPECT_TRUE(*r.Next(&e));
  EXPECT_EQ(e.length, 0u);
  EXPECT_TRUE(*r.Next(&e));
  EXPECT_FALSE(*r.Next(&e));
  EXPECT_TRUE(r.done());
}

TEST(DeclaredSizeTest, BodyLengthPastTheEnd) {
  // Count 1, then a body length of 2^32 with 3 bytes after it.
  std::string data = HexBytes("03 3a 01 01  07 3a 05 80 80 80 80 10  61 62 63");
  MemorySource src(data);
  BlockReader<MemorySource> r(src, "input");
  ASSERT_TRUE(r.Start().ok());
  ElementInfo e;
  absl::StatusOr<bool> more = r.Next(&e);
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().message(),
            "input 0 body: declared 4294967296 bytes but 3 remain (at byte 12)");
}

TEST(DeclaredSizeTest, UnknownSizeNeverAllocatesTheDeclaredLength) {
  // Snapshot length 2^31 - 2 (varint fe ff ff ff 07) with 3 bytes after it,
  // through a source that cannot tell its size: the header reads, the body
  // fails, and the string grew only by what arrived.
  std::string data = HexBytes("07 3a 05 fe ff ff ff 07  61 62 63");
  testing::FaultOptions o;
  o.known_size = false;
  o.seekable = false;
  testing::FaultSource src(data, o);
  DecomposedReader<testing::FaultSource> r(src);
  std::string snapshot;
  absl::StatusOr<ElementInfo> h = r.ReadHeader(&snapshot);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(h.status().message(),
            "header: declared 2147483646 bytes but 3 remain (at byte 8)");
  EXPECT_LT(snapshot.capacity(), size_t{1} << 20);
}

TEST(DeclaredSizeTest, SnapshotOverProtobufLimit) {
  // 2^31 bytes (varint 80 80 80 80 08): over the 2 GiB - 1 limit.
  std::string data = HexBytes("07 3a 05 80 80 80 80 08");
  testing::FaultOptions o;
  o.known_size = false;
  testing::FaultSource src(data, o);
  DecomposedReader<testing::FaultSource> r(src);
  absl::StatusOr<ElementInfo> h = r.ReadHeader(nullptr);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(h.status().message()),
              StartsWith("header length box:"));
}

// --- Primitive B ----------------------------------------------------------------

TEST(ElementTest, GoldenBytes) {
  // box(3) then "abc" (61 62 63).
  std::string out;
  StringSink sink(&out);
  ElementWriter<StringSink> w(sink);
  ASSERT_TRUE(w.Write("abc").ok());
  EXPECT_EQ(ToHex(out), "03 3a 01 03 61 62 63");
  // With shape: box = 09 0a 04 10 09 2a 00 3a 01 03.
  out.clear();
  ElementWriter<StringSink> shaped(sink, BoxWriteOptions{true});
  ASSERT_TRUE(shaped.Write("abc").ok());
  EXPECT_EQ(ToHex(out), "09 0a 04 10 09 2a 00 3a 01 03 61 62 63");
}

TEST(ElementTest, RoundTripBodySizes) {
  for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{127}, uint64_t{128},
                     uint64_t{4097}, uint64_t{300000}}) {
    std::string body(static_cast<size_t>(n), '\0');
    for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>(i * 31);
    std::string out;
    StringSink sink(&out);
    ElementWriter<StringSink> w(sink);
    ASSERT_TRUE(w.Write(body).ok());
    EXPECT_EQ(out.size(), BoxSize(n) + n);

    // Zero-copy view.
    MemorySource mem(out);
    ElementReader<MemorySource> r(mem);
    absl::StatusOr<ElementInfo> e = r.Read(Frame{"b"}, Frame{"body"});
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_EQ(e->length, n);
    EXPECT_EQ(e->offset, BoxSize(n));
    EXPECT_EQ(r.body().remaining(), n);
    std::optional<std::string_view> view = r.body().ReadView(e->length);
    ASSERT_TRUE(view);
    EXPECT_EQ(view->data(), out.data() + e->offset);  // no copy
    EXPECT_EQ(*view, body);
    EXPECT_FALSE(r.body().ReadView(1));  // nothing past the body

    // Streamed in chunks through 1000-byte reads.
    testing::FaultOptions o;
    o.max_read = 1000;
    testing::FaultSource buffered(out, o);
    ElementReader<testing::FaultSource> rb(buffered);
    e = rb.Read(Frame{"b"}, Frame{"body"});
    ASSERT_TRUE(e.ok()) << e.status();
    std::string got;
    int chunks = 0;
    ASSERT_TRUE(ForEachChunk(rb.body(), e->length, Frame{"body"},
                             [&](std::string_view c) {
                               got.append(c.data(), c.size());
                               ++chunks;
                               return absl::OkStatus();
                             })
                    .ok());
    EXPECT_EQ(got, body);
    if (n > 4096) {
      EXPECT_GT(chunks, 1);
    }

    // Skipped.
    testing::FaultSource skipper(out, o);
    ElementReader<testing::FaultSource> rs(skipper);
    ASSERT_TRUE(rs.Read(Frame{"b"}, Frame{"body"}).ok());
    ASSERT_TRUE(rs.Finish().ok());
    EXPECT_EQ(skipper.position(), out.size());
  }
}

TEST(ElementTest, HugeDeclaredLengthsRoundTripThroughTheHeader) {
  // The body length box carries the full 64-bit value; the body itself is
  // then rejected as truncated, never allocated.
  for (uint64_t n : {uint64_t{1} << 32, kMax}) {
    std::string out;
    StringSink sink(&out);
    ASSERT_TRUE(WriteBox(sink, n));
    out += "xyz";
    testing::FaultOptions o;
    o.known_size = false;
    o.seekable = false;
    testing::FaultSource src(out, o);
    ElementReader<testing::FaultSource> r(src);
    absl::StatusOr<ElementInfo> e = r.Read(Frame{"b"}, Frame{"body"});
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_EQ(e->length, n);
    std::string body;
    absl::Status s = ReadToString(r.body(), e->length, Frame{"body"}, &body);
    EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("declared ", n,
                                                    " bytes but 3 remain")));
    // Skipping the rest fails the same way.
    s = r.Finish();
    EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
    // A known-size source rejects it at the header.
    MemorySource mem(out);
    ElementReader<MemorySource> rm(mem);
    s = rm.Read(Frame{"b"}, Frame{"body"}).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
    EXPECT_THAT(s.message(), HasSubstr("body: declared"));
    EXPECT_THAT(s.message(), HasSubstr("but 3 remain"));
  }
}

TEST(ElementTest, SeekableSourcesSkipWithoutReading) {
  std::string body(1 << 20, 'x');
  std::string out;
  StringSink sink(&out);
  ElementWriter<StringSink> w(sink);
  ASSERT_TRUE(w.Write(body).ok());
  ASSERT_TRUE(w.Write("tail").ok());
  testing::FaultSource src(out);
  ElementReader<testing::FaultSource> r(src);
  ASSERT_TRUE(r.Read(Frame{"b"}, Frame{"body"}).ok());
  // The next Read() moves past the unread body: a seek, not a read.
  absl::StatusOr<ElementInfo> e = r.Read(Frame{"b"}, Frame{"body"});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(src.backend().seeks(), 1u);
  // Only the first buffer (4096 bytes) and nothing of the skipped MiB, then
  // the buffer at the second element.
  EXPECT_LE(src.backend().calls(), 2u);
  std::string tail;
  ASSERT_TRUE(ReadToString(r.body(), e->length, Frame{"body"}, &tail).ok());
  EXPECT_EQ(tail, "tail");
}

// --- Composite C ------------------------------------------------------------------

TEST(BlockTest, GoldenBytes) {
  // count 2, then box(1) "a" (61), then box(0) and no body.
  std::string out;
  StringSink sink(&out);
  std::vector<std::string> bodies = {"a", ""};
  BlockWriter<StringSink> w(sink);
  ASSERT_TRUE(w.Write(bodies).ok());
  EXPECT_EQ(ToHex(out), "03 3a 01 02 03 3a 01 01 61 03 3a 01 00");
  // An empty list is just its count.
  out.clear();
  ASSERT_TRUE(w.Write(std::vector<std::string>{}).ok());
  EXPECT_EQ(ToHex(out), "03 3a 01 00");
}

TEST(BlockTest, RoundTripCounts) {
  for (uint64_t n : {0, 1, 127, 128, 1000}) {
    std::vector<std::string> bodies;
    for (uint64_t i = 0; i < n; ++i) bodies.push_back(std::string(i % 5, 'a' + i % 26));
    std::string out;
    StringSink sink(&out);
    ASSERT_TRUE(BlockWriter<StringSink>(sink).Write(bodies).ok());
    for (int mode = 0; mode < 2; ++mode) {
      testing::FaultOptions o;
      o.max_read = 3;
      o.known_size = mode == 0;
      testing::FaultSource src(out, o);
      BlockReader<testing::FaultSource> r(src, "input");
      absl::StatusOr<uint64_t> count = r.Start();
      ASSERT_TRUE(count.ok()) << count.status();
      EXPECT_EQ(*count, n);
      ElementInfo e;
      for (uint64_t i = 0; i < n; ++i) {
        absl::StatusOr<bool> more = r.Next(&e);
        ASSERT_TRUE(more.ok() && *more) << i;
        EXPECT_EQ(r.current_index(), static_cast<int64_t>(i));
        std::string body;
        ASSERT_TRUE(
            ReadToString(r.body(), e.length, r.BodyFrame(), &body).ok());
        EXPECT_EQ(body, bodies[i]);
      }
      EXPECT_FALSE(*r.Next(&e));
      EXPECT_EQ(src.position(), out.size());
    }
  }
}

TEST(BlockTest, NextSkipsWhatTheConsumerLeft) {
  std::vector<std::string> bodies = {"hello", "world", "!"};
  std::string out;
  StringSink sink(&out);
  ASSERT_TRUE(BlockWriter<StringSink>(sink).Write(bodies).ok());
  MemorySource src(out);
  BlockReader<MemorySource> r(src, "output");
  ASSERT_TRUE(r.Start().ok());
  ElementInfo e;
  ASSERT_TRUE(*r.Next(&e));
  r.body().Advance(2);  // read "he" only
  ASSERT_TRUE(*r.Next(&e));
  EXPECT_EQ(*r.body().ReadView(e.length), "world");
  ASSERT_TRUE(*r.Next(&e));  // nothing read of "!"
  EXPECT_FALSE(*r.Next(&e));
  EXPECT_EQ(src.position(), out.size());
}

TEST(BlockTest, ConsumerCannotReadPastTheBody) {
  // The body view ends where the body does, though the source goes on:
  // a decoder handed the view sees a clean end of data there.
  std::vector<std::string> bodies = {"ab", "cd"};
  std::string out;
  StringSink sink(&out);
  ASSERT_TRUE(BlockWriter<StringSink>(sink).Write(bodies).ok());
  MemorySource src(out);
  BlockReader<MemorySource> r(src, "output");
  ASSERT_TRUE(r.Start().ok());
  ElementInfo e;
  ASSERT_TRUE(*r.Next(&e));
  EXPECT_EQ(r.body().available(), 2u);
  EXPECT_EQ(*r.body().size(), e.offset + 2);
  EXPECT_FALSE(r.body().Pull(3));
  EXPECT_FALSE(r.body().ReadView(3));
  char buf[3];
  EXPECT_FALSE(r.body().Read(buf, 3));
  EXPECT_EQ(src.position(), e.offset + 2);  // stopped at the body end
  EXPECT_TRUE(r.body().status().ok());
  // The next element is intact.
  ASSERT_TRUE(*r.Next(&e));
  EXPECT_EQ(*r.body().ReadView(2), "cd");
  EXPECT_FALSE(*r.Next(&e));
  EXPECT_TRUE(r.done());
}

TEST(BlockTest, SeekableConsumersMayGoBackInsideTheBody) {
  // The literal decoder plans a body, then seeks back to its data: the view
  // allows seeks inside the body only.
  std::vector<std::string> bodies = {"0123", "xyz"};
  std::string out;
  StringSink sink(&out);
  ASSERT_TRUE(BlockWriter<StringSink>(sink).Write(bodies).ok());
  MemorySource src(out);
  BlockReader<MemorySource> r(src, "input");
  ASSERT_TRUE(r.Start().ok());
  ElementInfo e;
  ASSERT_TRUE(*r.Next(&e));
  ASSERT_TRUE(r.body().Skip(4));
  EXPECT_FALSE(r.body().Seek(e.offset - 1));
  EXPECT_FALSE(r.body().Seek(e.offset + 5));
  ASSERT_TRUE(r.body().Seek(e.offset + 1));
  EXPECT_EQ(*r.body().ReadView(2), "12");
  ASSERT_TRUE(*r.Next(&e));
  EXPECT_EQ(*r.body().ReadView(3), "xyz");
}

TEST(BlockTest, NextBeforeStart) {
  std::string out = HexBytes("03 3a 01 00");
  MemorySource src(out);
  BlockReader<MemorySource> r(src, "input");
  ElementInfo e;
  EXPECT_EQ(r.Next(&e).status().code(), absl::StatusCode::kFailedPrecondition);
}

// --- whole file round trips ----------------------------------------------------

TEST(WholeFileTest, RoundTrips) {
  for (uint64_t n_in : {0, 1, 127, 128}) {
    for (int outputs : {-1, 0, 3}) {
      std::string snapshot(static_cast<size_t>(n_in) * 3 + 1, 's');
      std::vector<std::string> in, out_bodies;
      for (uint64_t i = 0; i < n_in; ++i) {
        // Body sizes cycle through 0, 1, 127, 128.
        static const size_t kSizes[] = {0, 1, 127, 128};
        in.push_back(std::string(kSizes[i % 4], static_cast<char>('a' + i % 26)));
      }
      for (int i = 0; i < outputs; ++i) out_bodies.push_back(std::string(i * 100, 'o'));
      std::string data;
      StringSink sink(&data);
      DecomposedWriteOptions wo;
      wo.write_output_count = outputs >= 0;
      wo.box.with_shape = (n_in % 2) == 1;
      DecomposedWriter<StringSink> w(sink, wo);
      ASSERT_TRUE(w.WriteHeader(snapshot).ok());
      ASSERT_TRUE(w.BeginInputs(in.size()).ok());
      for (const auto& b : in) ASSERT_TRUE(w.WriteElement(b).ok());
      if (outputs > 0) {
        ASSERT_TRUE(w.BeginOutputs(out_bodies.size()).ok());
        for (const auto& b : out_bodies) ASSERT_TRUE(w.WriteElement(b).ok());
      }
      ASSERT_TRUE(w.Finish().ok());

      MemorySource src(data);
      absl::StatusOr<WholeFile> f = ReadWhole(src);
      ASSERT_TRUE(f.ok()) << f.status();
      EXPECT_EQ(f->snapshot, snapshot);
      EXPECT_EQ(f->input_bodies, in);
      EXPECT_EQ(f->outputs_present, outputs >= 0);
      EXPECT_EQ(f->output_bodies, out_bodies);
      EXPECT_EQ(f->end_position, data.size());
    }
  }
}

TEST(WholeFileTest, SkippingEverythingStillChecksTheEnd) {
  MemorySource src(Tiny());
  DecomposedReader<MemorySource> r(src);
  ASSERT_TRUE(r.ReadHeader(nullptr).ok());
  ASSERT_EQ(*r.StartInputs(), 2u);
  absl::StatusOr<std::optional<uint64_t>> m = r.StartOutputs();
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(**m, 1u);
  EXPECT_TRUE(r.Finish().ok());
  EXPECT_EQ(src.position(), kTinySize);
}

TEST(WholeFileTest, SnapshotViewThenSkipToRegion1) {
  // OpenHeader leaves region [0] readable through a view; StartInputs
  // moves past whatever the consumer left of it.
  MemorySource src(Tiny());
  DecomposedReader<MemorySource> r(src);
  absl::StatusOr<ElementInfo> h = r.OpenHeader();
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->offset, 4u);
  EXPECT_EQ(h->length, 7u);
  EXPECT_EQ(r.header().remaining(), 7u);
  EXPECT_EQ(ToHex(std::string(*r.header().ReadView(3))), "0a 05 0a");
  EXPECT_FALSE(r.header().ReadView(5));  // 4 bytes left in region [0]
  ASSERT_EQ(*r.StartInputs(), 2u);
  EXPECT_EQ(r.inputs().count_offset(), 11u);
  ElementInfo e;
  ASSERT_TRUE(*r.NextInput(&e));
  EXPECT_EQ(ToHex(std::string(*r.inputs().body().ReadView(e.length))),
            "0a 04 10 04 2a 00 22 01 05");
}

TEST(WholeFileTest, RequiredOutputs) {
  // Present: the count.
  {
    MemorySource src(Tiny());
    DecomposedReader<MemorySource> r(src);
    ASSERT_TRUE(r.ReadHeader(nullptr).ok());
    ASSERT_TRUE(r.StartInputs().ok());
    absl::StatusOr<uint64_t> m = r.StartRequiredOutputs("asked for");
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(*m, 1u);
    EXPECT_TRUE(r.Finish().ok());
  }
  // Absent: an error at the end of region [1], named with the option's
  // output name.
  std::string cut = Tiny().substr(0, kTinyRegion1End);
  MemorySource src(cut);
  DecomposedReadOptions o;
  o.output_name = "snapshot_output";
  DecomposedReader<MemorySource> r(src, o);
  ASSERT_TRUE(r.ReadHeader(nullptr).ok());
  ASSERT_TRUE(r.StartInputs().ok());
  absl::StatusOr<uint64_t> m = r.StartRequiredOutputs("asked for");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(m.status().message(),
            "snapshot_output count box: expected region [2] (asked for), "
            "found the end of the file: this file holds no outputs (at byte "
            "36)");
}

TEST(WholeFileTest, ElementNamesComeFromTheOptions) {
  std::string cut = Tiny().substr(0, 21);  // inside input 0's body
  MemorySource src(cut);
  DecomposedReadOptions o;
  o.input_name = "value_input";
  DecomposedReader<MemorySource> r(src, o);
  ASSERT_TRUE(r.ReadHeader(nullptr).ok());
  ASSERT_TRUE(r.StartInputs().ok());
  ElementInfo e;
  absl::StatusOr<bool> more = r.NextInput(&e);
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().message(),
            "value_input 0 body: declared 9 bytes but 2 remain (at byte 19)");
}

TEST(WholeFileTest, CallsOutOfOrder) {
  MemorySource src(Tiny());
  DecomposedReader<MemorySource> r(src);
  EXPECT_EQ(r.StartInputs().status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.StartOutputs().status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.Finish().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(r.ReadHeader(nullptr).ok());
  EXPECT_EQ(r.ReadHeader(nullptr).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ElementInfo e;
  EXPECT_EQ(r.NextInput(&e).status().code(),
            absl::StatusCode::kFailedPrecondition);  // before StartInputs
  ASSERT_TRUE(r.StartInputs().ok());
  EXPECT_EQ(r.Finish().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(r.StartOutputs().ok());
  EXPECT_TRUE(r.Finish().ok());
  EXPECT_EQ(r.Finish().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(WriterTest, ElementAndBlockWritersCountBytesAndElements) {
  std::string out;
  StringSink sink(&out);
  ElementWriter<StringSink> e(sink);
  ASSERT_TRUE(e.Begin(3).ok());
  EXPECT_EQ(e.body_left(), 3u);
  EXPECT_THAT(e.Append("abcd").message(),
              HasSubstr("4 more bytes but only 3 declared bytes left"));
  ASSERT_TRUE(e.Append("ab").ok());
  EXPECT_THAT(e.Begin(1).message(), HasSubstr("1 declared bytes not written"));
  ASSERT_TRUE(e.AppendedExternally(1).ok());
  EXPECT_TRUE(e.CheckDone().ok());
  EXPECT_EQ(ToHex(out), "03 3a 01 03 61 62");  // the last byte went elsewhere

  out.clear();
  BlockWriter<StringSink> r(sink);
  ASSERT_TRUE(r.Begin(2).ok());
  ASSERT_TRUE(r.WriteElement("a").ok());
  EXPECT_THAT(r.Finish().message(), HasSubstr("declared 2 elements but wrote 1"));
  ASSERT_TRUE(r.BeginElement(1).ok());
  EXPECT_THAT(r.Finish().message(), HasSubstr("1 declared bytes not written"));
  ASSERT_TRUE(r.Append("b").ok());
  EXPECT_TRUE(r.Finish().ok());
  EXPECT_THAT(r.WriteElement("c").message(),
              HasSubstr("more elements than the 2 declared"));
  EXPECT_EQ(ToHex(out), "03 3a 01 02 03 3a 01 01 61 03 3a 01 01 62");
}

TEST(WriterTest, MisuseIsReported) {
  std::string data;
  StringSink sink(&data);
  {
    DecomposedWriter<StringSink> w(sink);
    EXPECT_EQ(w.BeginInputs(1).code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(w.Finish().code(), absl::StatusCode::kFailedPrecondition);
    ASSERT_TRUE(w.WriteHeader("x").ok());
    EXPECT_EQ(w.WriteHeader("x").code(),
              absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(w.WriteElement("x").code(),
              absl::StatusCode::kFailedPrecondition);
    ASSERT_TRUE(w.BeginInputs(1).ok());
    ASSERT_TRUE(w.BeginElement(3).ok());
    EXPECT_EQ(w.Append("abcd").code(), absl::StatusCode::kFailedPrecondition);
    ASSERT_TRUE(w.Append("ab").ok());
    // The element is short of one byte.
    EXPECT_THAT(w.Finish().message(), HasSubstr("1 declared bytes not written"));
    ASSERT_TRUE(w.Append("c").ok());
    EXPECT_THAT(w.WriteElement("y").message(), HasSubstr("more elements"));
  }
  {
    DecomposedWriter<StringSink> w(sink);
    ASSERT_TRUE(w.WriteHeader("x").ok());
    ASSERT_TRUE(w.BeginInputs(2).ok());
    ASSERT_TRUE(w.WriteElement("a").ok());
    EXPECT_THAT(w.BeginOutputs(0).message(),
                HasSubstr("declared 2 elements but wrote 1"));
    EXPECT_THAT(w.Finish().message(),
                HasSubstr("declared 2 elements but wrote 1"));
  }
}

}  // namespace
}  // namespace decomposed
