// Every limit in include/decomposed/limits.h, tested at the limit (accepted)
// and just past it (rejected with kResourceExhausted, or the documented
// behaviour). The inputs are hand-built bytes; docs/testing-and-hardening.md
// lists the limits and their reasons.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "decomposed/container/box.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/container/framing.h"
#include "decomposed/limits.h"
#include "decomposed/xla/literal_plan.h"
#include "decomposed/npy/npy.h"
#include "decomposed/xla/shape.h"
#include "gtest/gtest.h"
#include "wire_encode.h"

namespace decomposed {
namespace {

using ::decomposed::wire_encode::Tag;
using ::decomposed::wire_encode::Varint;
// A length-delimited field.
inline std::string Ld(int field, const std::string& payload) {
  return ::decomposed::wire_encode::Len(static_cast<uint32_t>(field), payload);
}

using absl::StatusCode;

std::string Packed(int field, const std::vector<uint64_t>& v) {
  std::string p;
  for (uint64_t x : v) p += Varint(x);
  return Ld(field, p);
}
// ShapeProto: element_type 2, dimensions 3, tuple_shapes 4, layout 5.
std::string ArrayShape(int type, const std::vector<uint64_t>& dims) {
  std::vector<uint64_t> m2m;
  for (size_t i = dims.size(); i-- > 0;) m2m.push_back(i);
  return Tag(2, 0) + Varint(type) + Packed(3, dims) + Ld(5, Packed(1, m2m));
}

// --- box payload: kMaxBoxPayload (strict), kMaxLenientBoxPayload ----------

// A box of exactly `payload` bytes holding value 5: a U64 shape padded with
// empty packed-dimension records (`1a 00`), then `3a 01 05`.
std::string BoxOfPayload(size_t payload) {
  // payload = 2 (shape tag+len) [+1 if len >= 128] + shape + 3
  for (size_t shape_len = 0; shape_len < 300; ++shape_len) {
    size_t len_bytes = Varint(shape_len).size();
    if (1 + len_bytes + shape_len + 3 != payload) continue;
    // shape = "10 09" or "10 89 00" (overlong varint 9) + k x "1a 00"
    std::string shape;
    size_t rest;
    if (shape_len % 2 == 0) {
      shape = std::string("\x10\x09", 2);
      rest = shape_len - 2;
    } else {
      shape = std::string("\x10\x89\x00", 3);
      rest = shape_len - 3;
    }
    for (size_t i = 0; i < rest / 2; ++i) shape += std::string("\x1a\x00", 2);
    std::string p = Ld(1, shape) + std::string("\x3a\x01\x05", 3);
    EXPECT_EQ(p.size(), payload);
    return std::string(1, static_cast<char>(payload)) + p;
  }
  ADD_FAILURE() << "no padding for " << payload;
  return "";
}

TEST(LimitsTest, BoxPayloadStrictAtAndPastLimit) {
  std::string at = BoxOfPayload(limits::kMaxBoxPayload);
  MemorySource a(at);
  absl::StatusOr<uint64_t> v = ReadBox(a, Frame{"count box"});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, 5u);
  EXPECT_EQ(a.position(), 1 + limits::kMaxBoxPayload);

  std::string past = BoxOfPayload(limits::kMaxBoxPayload + 1);
  MemorySource b(past);
  v = ReadBox(b, Frame{"count box"});
  EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(v.status().message().find("found 0x80"), std::string::npos);
  // The lenient mode reads the same box.
  MemorySource c(past);
  v = ReadBox(c, Frame{"count box"}, BoxReadOptions{true});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, 5u);
}

TEST(LimitsTest, BoxPayloadLenientAtLimit) {
  // 255 is the largest a length byte can say; nothing lies past it.
  std::string at = BoxOfPayload(limits::kMaxLenientBoxPayload);
  MemorySource a(at);
  absl::StatusOr<uint64_t> v = ReadBox(a, Frame{"count box"}, {true});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, 5u);
  EXPECT_EQ(a.position(), 256u);
  // One byte short of what the length byte declares: truncation.
  std::string cut = at.substr(0, at.size() - 1);
  MemorySource b(cut);
  v = ReadBox(b, Frame{"count box"}, {true});
  EXPECT_EQ(v.status().code(), StatusCode::kOutOfRange);
}

// --- kMaxMessageBytes -----------------------------------------------------

// A sparse file: box(snapshot_len), snapshot_len zero bytes (a hole), then
// an input count box of 0. Nothing of the hole is read: ReadHeader(nullptr)
// seeks over it.
class SparseFile {
 public:
  explicit SparseFile(uint64_t snapshot_len) {
    path_ = absl::StrCat(DECOMPOSED_BINARY_DIR, "/limits_sparse_", snapshot_len, "_",
                         getpid());
    char box[limits::kMaxBoxBytes];
    size_t n = EncodeBox(snapshot_len, box);
    char zero[limits::kMaxBoxBytes];
    size_t z = EncodeBox(0, zero);
    int fd = ::open(path_.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    ok_ = fd >= 0 && ::pwrite(fd, box, n, 0) == static_cast<ssize_t>(n) &&
          ::pwrite(fd, zero, z, static_cast<off_t>(n + snapshot_len)) ==
              static_cast<ssize_t>(z);
    if (fd >= 0) ::close(fd);
  }
  ~SparseFile() { ::unlink(path_.c_str()); }
  const std::string& path() const { return path_; }
  bool ok() const { return ok_; }

 private:
  std::string path_;
  bool ok_ = false;
};

TEST(LimitsTest, MessageBytesAtAndPastLimit) {
  {
    SparseFile f(limits::kMaxMessageBytes);
    ASSERT_TRUE(f.ok());
    OwnedFd fd;
    ASSERT_TRUE(OpenForReading(f.path(), &fd).ok());
    FdSource src(std::move(fd));
    DecomposedReader<FdSource> r(src);
    absl::StatusOr<ElementInfo> h = r.ReadHeader(nullptr);
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_EQ(h->length, limits::kMaxMessageBytes);
    absl::StatusOr<uint64_t> n = r.StartInputs();
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_EQ(*n, 0u);
  }
  {
    SparseFile f(limits::kMaxMessageBytes + 1);
    ASSERT_TRUE(f.ok());
    OwnedFd fd;
    ASSERT_TRUE(OpenForReading(f.path(), &fd).ok());
    FdSource src(std::move(fd));
    DecomposedReader<FdSource> r(src);
    absl::StatusOr<ElementInfo> h = r.ReadHeader(nullptr);
    EXPECT_EQ(h.status().code(), StatusCode::kResourceExhausted);
    EXPECT_NE(h.status().message().find("header length box"),
              std::string::npos);
  }
}

TEST(LimitsTest, WriterRefusesHeaderPastLimit) {
  // A real 2 GiB range to point at: a sparse file mapped read-only. The
  // writer checks the size before it reads anything; NullSink reads nothing.
  SparseFile f(limits::kMaxMessageBytes);
  ASSERT_TRUE(f.ok());
  int fd = ::open(f.path().c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  size_t len = static_cast<size_t>(limits::kMaxMessageBytes) + 1;
  void* p = ::mmap(nullptr, len, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  ASSERT_NE(p, MAP_FAILED);
  std::string_view big(static_cast<const char*>(p), len);
  {
    NullSink sink;
    DecomposedWriter<NullSink> w(sink);
    EXPECT_TRUE(w.WriteHeader(big.substr(0, len - 1)).ok());
    EXPECT_EQ(sink.position(), BoxSize(len - 1) + len - 1);
  }
  {
    NullSink sink;
    DecomposedWriter<NullSink> w(sink);
    EXPECT_EQ(w.WriteHeader(big).code(), StatusCode::kResourceExhausted);
    EXPECT_EQ(sink.position(), 0u);
  }
  ::munmap(p, len);
}

// --- kMaxRank ---------------------------------------------------------------

TEST(LimitsTest, RankAtAndPastLimit) {
  std::vector<uint64_t> dims(limits::kMaxRank, 1);
  absl::StatusOr<Shape> s = ParseShape(ArrayShape(11, dims), Frame{"shape"});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->dimensions.size(), limits::kMaxRank);
  EXPECT_TRUE(ValidateShape(*s, Frame{"shape"}, 0).ok());

  dims.push_back(1);
  s = ParseShape(ArrayShape(11, dims), Frame{"shape"});
  EXPECT_EQ(s.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.status().message().find("kMaxRank"), std::string::npos);
}

TEST(LimitsTest, RankLimitHoldsAcrossRepeatedRecords) {
  // 64 unpacked dimension records are fine; a 65th, or a 65th
  // minor_to_major entry, or a 65th is_dynamic_dimension flag in a second
  // record, is over the limit.
  std::string at = Tag(2, 0) + Varint(11);
  for (size_t i = 0; i < limits::kMaxRank; ++i) at += Tag(3, 0) + Varint(1);
  EXPECT_TRUE(ParseShape(at, Frame{"shape"}).ok());
  EXPECT_EQ(ParseShape(at + Tag(3, 0) + Varint(1), Frame{"shape"})
                .status()
                .code(),
            StatusCode::kResourceExhausted);

  std::vector<uint64_t> m2m(limits::kMaxRank + 1, 0);
  EXPECT_EQ(ParseShape(Tag(2, 0) + Varint(11) + Ld(5, Packed(1, m2m)),
                       Frame{"shape"})
                .status()
                .code(),
            StatusCode::kResourceExhausted);

  std::vector<uint64_t> flags(limits::kMaxRank, 0);
  std::string dyn = Tag(2, 0) + Varint(11) + Packed(6, flags);
  absl::StatusOr<Shape> ok = ParseShape(dyn, Frame{"shape"});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->is_dynamic_dimension.size(), limits::kMaxRank);
  EXPECT_EQ(ParseShape(dyn + Packed(6, {0}), Frame{"shape"}).status().code(),
            StatusCode::kResourceExhausted);
}

TEST(LimitsTest, NpyRankAtAndPastLimit) {
  auto header = [](size_t rank) {
    NpyHeader h{"<f4", false, std::vector<int64_t>(rank, 1)};
    return FormatNpyHeader(h);
  };
  absl::StatusOr<NpyHeader> h = ParseNpyHeader(header(limits::kMaxRank));
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->shape.size(), limits::kMaxRank);
  h = ParseNpyHeader(header(limits::kMaxRank + 1));
  EXPECT_EQ(h.status().code(), StatusCode::kResourceExhausted);
}

// --- kMaxElementCount ---------------------------------------------------------

TEST(LimitsTest, ElementCountAtAndPastLimit) {
  Shape s;
  s.element_type = 6;  // U8
  s.dimensions = {int64_t(limits::kMaxElementCount)};
  absl::StatusOr<uint64_t> n = ElementCount(s, Frame{"shape"}, 0);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, limits::kMaxElementCount);
  s.dimensions = {int64_t(limits::kMaxElementCount) + 1};
  EXPECT_EQ(ElementCount(s, Frame{"shape"}, 0).status().code(),
            StatusCode::kResourceExhausted);
  // The same as a product of two dimensions: 2^30 x 2^29, then 2^30 x
  // (2^29 + 1).
  s.dimensions = {int64_t{1} << 30, int64_t{1} << 29};
  EXPECT_TRUE(ElementCount(s, Frame{"shape"}, 0).ok());
  s.dimensions = {int64_t{1} << 30, (int64_t{1} << 29) + 1};
  EXPECT_EQ(ElementCount(s, Frame{"shape"}, 0).status().code(),
            StatusCode::kResourceExhausted);
  // A product that wraps 64 bits (2^32 x 2^32) is caught, not wrapped.
  s.dimensions = {int64_t{1} << 32, int64_t{1} << 32};
  EXPECT_EQ(ElementCount(s, Frame{"shape"}, 0).status().code(),
            StatusCode::kResourceExhausted);
}

TEST(LimitsTest, ByteSizeLimitForWideElements) {
  // Bytes are capped at kMaxElementCount * 8 = 2^62: C128 (16 bytes) at
  // 2^58 elements is the most, F64 (8 bytes) reaches the count limit.
  Shape s;
  s.element_type = 18;  // C128
  s.dimensions = {int64_t{1} << 58};
  EXPECT_TRUE(ElementCount(s, Frame{"shape"}, 0, 16).ok());
  s.dimensions = {(int64_t{1} << 58) + 1};
  EXPECT_EQ(ElementCount(s, Frame{"shape"}, 0, 16).status().code(),
            StatusCode::kResourceExhausted);
  s.element_type = 12;  // F64
  s.dimensions = {int64_t(limits::kMaxElementCount)};
  EXPECT_TRUE(ElementCount(s, Frame{"shape"}, 0, 8).ok());
  // ValidateShape applies the same rule.
  absl::StatusOr<Shape> v = ParseShape(
      ArrayShape(18, {(uint64_t{1} << 58) + 1}), Frame{"shape"});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(ValidateShape(*v, Frame{"shape"}, 0).code(),
            StatusCode::kResourceExhausted);
}

// --- kMaxTupleDepth -------------------------------------------------------------

// A leaf F32[] array under `depth` TUPLE levels.
std::string Nested(int depth) {
  std::string s = ArrayShape(11, {});
  for (int i = 0; i < depth; ++i) s = Tag(2, 0) + Varint(13) + Ld(4, s);
  return s;
}

TEST(LimitsTest, TupleDepthAtAndPastLimit) {
  absl::StatusOr<Shape> s =
      ParseShape(Nested(limits::kMaxTupleDepth), Frame{"shape"});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(ValidateShape(*s, Frame{"shape"}, 0).ok());
  s = ParseShape(Nested(limits::kMaxTupleDepth + 1), Frame{"shape"});
  EXPECT_EQ(s.status().code(), StatusCode::kResourceExhausted);
  // ValidateShape has its own guard for shapes built in memory.
  Shape deep;
  deep.element_type = 11;
  deep.has_layout = true;
  for (int i = 0; i <= limits::kMaxTupleDepth; ++i) {
    Shape t;
    t.element_type = 13;
    t.tuple_shapes.push_back(std::move(deep));
    deep = std::move(t);
  }
  EXPECT_EQ(ValidateShape(deep, Frame{"shape"}, 0).code(),
            StatusCode::kResourceExhausted);
}

// --- kMaxShapeBytes ----------------------------------------------------------

// A literal body whose shape field holds exactly `shape_bytes` bytes: F32[]
// plus an unknown field (ParseShape skips it) padding to size.
std::string BodyWithShapeOf(uint64_t shape_bytes) {
  std::string head = Tag(2, 0) + Varint(11);
  // pad = Tag(100,2) + Varint(k) + k bytes; find k.
  for (uint64_t k = shape_bytes - head.size() - 8;; ++k) {
    uint64_t total = head.size() + Tag(100, 2).size() + Varint(k).size() + k;
    if (total == shape_bytes) {
      return Ld(1, head + Tag(100, 2) + Varint(k) + std::string(k, 'x'));
    }
    if (total > shape_bytes) return "";
  }
}

TEST(LimitsTest, ShapeBytesAtAndPastLimit) {
  std::string at = BodyWithShapeOf(limits::kMaxShapeBytes);
  ASSERT_FALSE(at.empty());
  MemorySource a(at);
  absl::StatusOr<LiteralPlan> s = PlanLiteral(a, at.size(), Frame{"b"});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->shape.element_type, 11);

  std::string past = BodyWithShapeOf(limits::kMaxShapeBytes + 1);
  ASSERT_FALSE(past.empty());
  MemorySource b(past);
  s = PlanLiteral(b, past.size(), Frame{"b"});
  EXPECT_EQ(s.status().code(), StatusCode::kResourceExhausted);
  // Split over two shape records (merged by protobuf rules): same limit.
  std::string half = BodyWithShapeOf(limits::kMaxShapeBytes / 2 + 1);
  std::string two = half + half;
  MemorySource c(two);
  s = PlanLiteral(c, two.size(), Frame{"b"});
  EXPECT_EQ(s.status().code(), StatusCode::kResourceExhausted);
}

// --- kMaxNpyHeaderBytes --------------------------------------------------------

TEST(LimitsTest, NpyHeaderBytesAtAndPastLimit) {
  auto prefix = [](uint32_t len) {
    std::string p = std::string(kNpyMagic) + std::string("\x02\x00", 2);
    for (int i = 0; i < 4; ++i) p.push_back(static_cast<char>(len >> (8 * i)));
    return p;
  };
  absl::StatusOr<uint64_t> n = NpyHeaderSize(prefix(limits::kMaxNpyHeaderBytes));
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 12u + limits::kMaxNpyHeaderBytes);
  n = NpyHeaderSize(prefix(limits::kMaxNpyHeaderBytes + 1));
  EXPECT_EQ(n.status().code(), StatusCode::kResourceExhausted);

  // A whole header at the limit parses: the dict padded with spaces.
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  std::string text = dict + std::string(limits::kMaxNpyHeaderBytes -
                                            dict.size() - 1, ' ') + "\n";
  absl::StatusOr<NpyHeader> h =
      ParseNpyHeader(prefix(limits::kMaxNpyHeaderBytes) + text);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->shape, std::vector<int64_t>{3});
}

// --- kMaxPull -------------------------------------------------------------------

TEST(LimitsTest, BufferedSourcesHoldAtLeastMaxPull) {
  // Asked for a 1-byte buffer, a buffered source still holds kMaxPull, so
  // Pull(kMaxPull), the largest a decoder may ask (a precondition of Pull),
  // succeeds. Past the limit is a precondition violation; no decoder asks
  // more than 1 + 255 bytes (a lenient box).
  std::string data(limits::kMaxPull + 10, 'a');
  std::istringstream in(data);
  IstreamSource src(in, 1);
  ASSERT_TRUE(src.Pull(limits::kMaxPull));
  EXPECT_GE(src.available(), limits::kMaxPull);
  src.Advance(limits::kMaxPull);
  EXPECT_TRUE(src.Pull(10));
  EXPECT_FALSE(src.Pull(11));  // only 10 bytes are left
  EXPECT_TRUE(src.status().ok());
}

// --- kMaxTupleLiterals --------------------------------------------------------------

TEST(LimitsTest, TupleLiteralsAtAndPastLimit) {
  std::string rec = Tag(10, 2) + Varint(0);  // an empty tuple element
  std::string at;
  at.reserve(rec.size() * (limits::kMaxTupleLiterals + 1));
  for (size_t i = 0; i < limits::kMaxTupleLiterals; ++i) at += rec;
  MemorySource a(at);
  absl::StatusOr<LiteralPlan> s = PlanLiteral(a, at.size(), Frame{"b"});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->tuple_literals.size(), limits::kMaxTupleLiterals);
  EXPECT_EQ(s->records, limits::kMaxTupleLiterals);
  std::string past = at + rec;
  MemorySource b(past);
  s = PlanLiteral(b, past.size(), Frame{"b"});
  EXPECT_EQ(s.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.status().message().find("at most 1048576 tuple_literals"),
            std::string::npos)
      << s.status();
}

}  // namespace
}  // namespace decomposed
