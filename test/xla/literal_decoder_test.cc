#include "decomposed/npy/literal_to_npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "wire_encode.h"

namespace decomposed {
namespace {

using ::decomposed::wire_encode::Len;
using ::decomposed::wire_encode::Varint;

using ::decomposed::test::HandNpyHeader;
using ::decomposed::test::ReadFile;

using ::testing::HasSubstr;

std::string B(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

// Small hand encoders for the bigger cases (the small ones are literal bytes).
std::string Packed(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += Varint(static_cast<uint64_t>(x));
  return s;
}
std::string ShapeBytes(int type, const std::vector<int64_t>& dims,
                       const std::vector<int64_t>& m2m) {
  std::string s = Varint(2 << 3) + Varint(type);
  if (!dims.empty()) s += Len(3, Packed(dims));
  s += Len(5, dims.empty() ? "" : Len(1, Packed(m2m)));
  return s;
}


struct Decoded {
  absl::Status status;
  std::string npy;
  LiteralPlan plan;
  LiteralPath path = LiteralPath::kGeneral;
  std::string payload() const {
    return status.ok()
               ? npy.substr(npy.find('\n') + 1)
               : "";
  }
};

Decoded DecodeMem(const std::string& body, LiteralDecodeOptions o = {}) {
  Decoded d;
  MemorySource src(body);
  StringSink sink(&d.npy);
  d.status = DecodeLiteralToNpy(src, body.size(), Frame{"value_input", 3, "body"},
                                sink, o, &d.plan, &d.path);
  return d;
}

// F32[2]{0} = [1, 2]: shape {element_type: 11 dimensions: [2]
// layout {minor_to_major: [0]}}, then packed f32s (field 8).
const std::string kF32Shape = B({0x10, 0x0b, 0x1a, 0x01, 0x02, 0x2a, 0x03,
                                 0x0a, 0x01, 0x00});
const std::string kF32Data = B({0x42, 0x08, 0x00, 0x00, 0x80, 0x3f, 0x00,
                                0x00, 0x00, 0x40});
const std::string kF32Body = B({0x0a, 0x0a}) + kF32Shape + kF32Data;
const std::string kF32Payload = B({0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00,
                                   0x40});

TEST(LiteralDecoderTest, CanonicalF32Golden) {
  Decoded d = DecodeMem(kF32Body);
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.npy, HandNpyHeader("{'descr': '<f4', 'fortran_order': False, "
                              "'shape': (2,), }") +
                       kF32Payload);
  EXPECT_EQ(d.path, LiteralPath::kView);
  EXPECT_EQ(d.plan.shape.ToString(), "F32[2]{0}");
}

TEST(LiteralDecoderTest, DataBeforeShape) {
  Decoded d = DecodeMem(kF32Data + B({0x0a, 0x0a}) + kF32Shape);
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.payload(), kF32Payload);
}

TEST(LiteralDecoderTest, UnpackedFixed32AndUnknownFields) {
  // f32s unpacked: tag 0x45 (field 8, wire type 5) per value; plus an
  // unknown varint field 99 and a LEN field 100.
  std::string body = B({0x98, 0x06, 0x07}) + B({0x0a, 0x0a}) + kF32Shape +
                     B({0x45, 0x00, 0x00, 0x80, 0x3f}) +
                     B({0xa2, 0x06, 0x01, 0x7a}) +
                     B({0x45, 0x00, 0x00, 0x00, 0x40});
  Decoded d = DecodeMem(body);
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.payload(), kF32Payload);
  EXPECT_EQ(d.path, LiteralPath::kGeneral);
}

TEST(LiteralDecoderTest, S32VarintsNegativeAndSplit) {
  // S32[3]{0} = [-1, 300, 5]: -1 is the 10-byte ff..ff 01; 300 is ac 02.
  std::string shape = B({0x10, 0x04, 0x1a, 0x01, 0x03, 0x2a, 0x03, 0x0a,
                         0x01, 0x00});
  std::string one = B({0x0a, 0x0a}) + shape +
                    B({0x22, 0x0d, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                       0xff, 0xff, 0x01, 0xac, 0x02, 0x05});
  std::string want = B({0xff, 0xff, 0xff, 0xff, 0x2c, 0x01, 0x00, 0x00, 0x05,
                        0x00, 0x00, 0x00});
  Decoded d = DecodeMem(one);
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.payload(), want);
  EXPECT_EQ(d.path, LiteralPath::kVarint);
  // The same values split over a packed record and an unpacked one (0x20).
  std::string split = B({0x0a, 0x0a}) + shape +
                      B({0x22, 0x0c, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                         0xff, 0xff, 0x01, 0xac, 0x02}) +
                      B({0x20, 0x05});
  d = DecodeMem(split);
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.payload(), want);
  EXPECT_EQ(d.path, LiteralPath::kGeneral);
}

TEST(LiteralDecoderTest, PredAnyNonZeroIsTrue) {
  // PRED[3]{0}: packed 02 00 01 -> 1 0 1.
  std::string body = B({0x0a, 0x0a, 0x10, 0x01, 0x1a, 0x01, 0x03, 0x2a, 0x03,
                        0x0a, 0x01, 0x00, 0x12, 0x03, 0x02, 0x00, 0x01});
  Decoded d = DecodeMem(body);
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.payload(), B({1, 0, 1}));
  EXPECT_EQ(NpyHeaderFor(d.plan).descr, "|b1");
}

TEST(LiteralDecoderTest, BytesFieldLastOneWins) {
  // U8[2]{0}: u8s (field 3) given twice; the second wins.
  std::string body = B({0x0a, 0x0a, 0x10, 0x06, 0x1a, 0x01, 0x02, 0x2a, 0x03,
                        0x0a, 0x01, 0x00, 0x1a, 0x03, 9, 9, 9, 0x1a, 0x02, 7,
                        8});
  Decoded d = DecodeMem(body);
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.payload(), B({7, 8}));
}

TEST(LiteralDecoderTest, ShapeSplitOverTwoRecordsMerges) {
  // shape {element_type: 11, dims: [2]} then data then shape {layout {0}}.
  std::string body = B({0x0a, 0x05, 0x10, 0x0b, 0x1a, 0x01, 0x02}) + kF32Data +
                     B({0x0a, 0x05, 0x2a, 0x03, 0x0a, 0x01, 0x00});
  Decoded d = DecodeMem(body);
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.payload(), kF32Payload);
}

TEST(LiteralDecoderTest, LiteralSplitOverTwoRanges) {
  // Two occurrences of a message field merge: range 1 holds the shape,
  // range 2 the data.
  std::string all = B({0x0a, 0x0a}) + kF32Shape + kF32Data;
  MemorySource src(all);
  std::string npy;
  StringSink sink(&npy);
  std::vector<ByteRange> ranges = {{0, 12}, {12, kF32Data.size()}};
  ASSERT_TRUE(DecodeLiteralToNpy(src, ranges, Frame{"x"}, sink).ok());
  EXPECT_EQ(npy.substr(128), kF32Payload);
}

TEST(LiteralDecoderTest, ScalarAndZeroSize) {
  // F32[] scalar: shape {element_type: 11 layout {}} + f32s [1.0].
  std::string scalar = B({0x0a, 0x04, 0x10, 0x0b, 0x2a, 0x00, 0x42, 0x04,
                          0x00, 0x00, 0x80, 0x3f});
  Decoded d = DecodeMem(scalar);
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.npy, HandNpyHeader("{'descr': '<f4', 'fortran_order': False, "
                              "'shape': (), }") +
                       B({0x00, 0x00, 0x80, 0x3f}));
  // S32[0]{0} with no data at all: fine (0 == 0).
  std::string empty = B({0x0a, 0x0a, 0x10, 0x04, 0x1a, 0x01, 0x00, 0x2a,
                         0x03, 0x0a, 0x01, 0x00});
  d = DecodeMem(empty);
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.npy, HandNpyHeader("{'descr': '<i4', 'fortran_order': False, "
                              "'shape': (0,), }"));
}

TEST(LiteralDecoderTest, ColumnMajorIsFortranOrder) {
  // U8[2,3]{0,1}: physical bytes 0..5 are column-major.
  std::string body = Len(1, ShapeBytes(6, {2, 3}, {0, 1})) +
                     Len(3, B({0, 1, 2, 3, 4, 5}));
  Decoded d = DecodeMem(body);
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_TRUE(NpyHeaderFor(d.plan).fortran_order);
  EXPECT_EQ(d.npy, HandNpyHeader("{'descr': '|u1', 'fortran_order': True, "
                              "'shape': (2, 3), }") +
                       B({0, 1, 2, 3, 4, 5}));
}

// Logical C-order array of a physical buffer, by IndexUtil's formula
// (linear = sum index[m2m[k]] * prod_{j<k} dims[m2m[j]]), for the test.
std::string NaiveLogical(const std::string& phys,
                         const std::vector<int64_t>& dims,
                         const std::vector<int64_t>& m2m, size_t eb) {
  size_t n = 1;
  for (int64_t d : dims) n *= d;
  std::string out;
  std::vector<int64_t> idx(dims.size(), 0);
  for (size_t i = 0; i < n; ++i) {
    size_t rem = i;
    for (size_t d = dims.size(); d-- > 0;) {
      idx[d] = rem % dims[d];
      rem /= dims[d];
    }
    size_t lin = 0, mul = 1;
    for (int64_t k : m2m) {
      lin += idx[k] * mul;
      mul *= dims[k];
    }
    out += phys.substr(lin * eb, eb);
  }
  return out;
}

TEST(LiteralDecoderTest, RandomLayoutIsTransposed) {
  std::vector<int64_t> dims = {2, 3, 4};
  std::vector<int64_t> m2m = {1, 0, 2};
  std::string phys;
  for (int i = 0; i < 24; ++i) {
    uint16_t v = static_cast<uint16_t>(1000 + i);
    phys.append(reinterpret_cast<const char*>(&v), 2);
  }
  // U16 (7) is a bytes field (16).
  std::string body = Len(1, ShapeBytes(7, dims, m2m)) + Len(16, phys);
  Decoded d = DecodeMem(body);
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.plan.order, PhysicalOrder::kPermuted);
  EXPECT_FALSE(NpyHeaderFor(d.plan).fortran_order);
  EXPECT_EQ(d.payload(), NaiveLogical(phys, dims, m2m, 2));
  // Same through an in-memory store (varint type S64: no direct view) and
  // through a temp file (max_in_memory_transpose = 0).
  std::string s64phys;
  std::vector<int64_t> vals;
  for (int i = 0; i < 24; ++i) {
    vals.push_back(i % 2 ? -i * 1000003LL : i);
    int64_t v = vals.back();
    s64phys.append(reinterpret_cast<const char*>(&v), 8);
  }
  std::string s64 = Len(1, ShapeBytes(5, dims, m2m)) + Len(5, Packed(vals));
  for (uint64_t mem : {uint64_t{1} << 20, uint64_t{0}}) {
    LiteralDecodeOptions o;
    o.max_in_memory_transpose = mem;
    o.temp_dir = ::testing::TempDir();
    d = DecodeMem(s64, o);
    ASSERT_TRUE(d.status.ok()) << d.status;
    EXPECT_EQ(d.payload(), NaiveLogical(s64phys, dims, m2m, 8)) << mem;
  }
}

// --- errors ---------------------------------------------------------------

void ExpectError(const std::string& body, absl::StatusCode code,
                 const std::string& needle) {
  Decoded d = DecodeMem(body);
  EXPECT_EQ(d.status.code(), code) << d.status;
  EXPECT_THAT(std::string(d.status.message()), HasSubstr(needle));
  EXPECT_THAT(std::string(d.status.message()), HasSubstr("value_input 3"));
  EXPECT_THAT(std::string(d.status.message()), HasSubstr("at byte"));
}

TEST(LiteralDecoderErrorTest, NoShape) {
  ExpectError(kF32Data, absl::StatusCode::kInvalidArgument, "has no shape");
}

TEST(LiteralDecoderErrorTest, NoLayout) {
  // F32[2] without field 5.
  ExpectError(B({0x0a, 0x05, 0x10, 0x0b, 0x1a, 0x01, 0x02}) + kF32Data,
              absl::StatusCode::kInvalidArgument, "no layout");
  // A scalar needs the empty layout too.
  ExpectError(B({0x0a, 0x02, 0x10, 0x0b, 0x42, 0x04, 0, 0, 0x80, 0x3f}),
              absl::StatusCode::kInvalidArgument, "no layout");
}

TEST(LiteralDecoderErrorTest, ElementSizeInBits) {
  // layout {minor_to_major: [0] element_size_in_bits: 4}
  ExpectError(B({0x0a, 0x0c, 0x10, 0x0b, 0x1a, 0x01, 0x02, 0x2a, 0x05, 0x0a,
                 0x01, 0x00, 0x38, 0x04}) +
                  kF32Data,
              absl::StatusCode::kInvalidArgument, "element_size_in_bits");
}

TEST(LiteralDecoderErrorTest, BadPermutation) {
  ExpectError(Len(1, ShapeBytes(6, {2, 3}, {0, 0})) + Len(3, "abcdef"),
              absl::StatusCode::kInvalidArgument, "permutation");
}

TEST(LiteralDecoderErrorTest, CountMismatch) {
  // F32[3] with 2 values.
  ExpectError(Len(1, ShapeBytes(11, {3}, {0})) + kF32Data,
              absl::StatusCode::kInvalidArgument, "2 values");
  // U8[4] with 3 bytes.
  ExpectError(Len(1, ShapeBytes(6, {4}, {0})) + Len(3, "abc"),
              absl::StatusCode::kInvalidArgument, "3 bytes");
  // S32[2] with 3 varints, and with 1.
  ExpectError(Len(1, ShapeBytes(4, {2}, {0})) + Len(4, B({1, 2, 3})),
              absl::StatusCode::kInvalidArgument, "more varint values");
  ExpectError(Len(1, ShapeBytes(4, {2}, {0})) + Len(4, B({1})),
              absl::StatusCode::kInvalidArgument, "1 elements");
}

TEST(LiteralDecoderErrorTest, EmptyLiteralWithNonEmptyShape) {
  ExpectError(Len(1, ShapeBytes(4, {2}, {0})), absl::StatusCode::kInvalidArgument,
              "no data");
  ExpectError(Len(1, ShapeBytes(11, {2}, {0})),
              absl::StatusCode::kInvalidArgument, "no data");
  ExpectError(Len(1, ShapeBytes(16, {2}, {0})),
              absl::StatusCode::kInvalidArgument, "no data");
}

TEST(LiteralDecoderErrorTest, RaggedPackedFixed) {
  ExpectError(Len(1, ShapeBytes(11, {1}, {0})) + Len(8, "abcde"),
              absl::StatusCode::kInvalidArgument, "ragged");
}

TEST(LiteralDecoderErrorTest, TruncatedVarintInPackedField) {
  ExpectError(Len(1, ShapeBytes(4, {2}, {0})) + Len(4, B({0x01, 0x80})),
              absl::StatusCode::kInvalidArgument, "malformed or truncated");
}

TEST(LiteralDecoderErrorTest, RecordPastTheEnd) {
  ExpectError(Len(1, ShapeBytes(6, {2}, {0})) + B({0x1a, 0x05, 1, 2}),
              absl::StatusCode::kInvalidArgument, "length within");
}

TEST(LiteralDecoderErrorTest, TypesXlaRefuses) {
  // TUPLE (13), TOKEN (17), OPAQUE (14), S1 (30), U1 (31), F6E3M2FN (35),
  // F6E2M3FN (36), an unknown number (40).
  ExpectError(Len(1, B({0x10, 0x0d})), absl::StatusCode::kInvalidArgument,
              "TUPLE");
  ExpectError(Len(1, B({0x10, 0x11})), absl::StatusCode::kInvalidArgument,
              "TOKEN");
  ExpectError(Len(1, B({0x10, 0x0e})), absl::StatusCode::kInvalidArgument,
              "OPAQUE_TYPE");
  ExpectError(Len(1, ShapeBytes(30, {1}, {0})) + Len(30, "a"),
              absl::StatusCode::kInvalidArgument, "S1");
  ExpectError(Len(1, ShapeBytes(31, {1}, {0})) + Len(31, "a"),
              absl::StatusCode::kInvalidArgument, "U1");
  ExpectError(Len(1, ShapeBytes(35, {1}, {0})) + Len(35, "a"),
              absl::StatusCode::kInvalidArgument, "F6E3M2FN");
  ExpectError(Len(1, ShapeBytes(36, {1}, {0})) + Len(36, "a"),
              absl::StatusCode::kInvalidArgument, "F6E2M3FN");
  ExpectError(Len(1, ShapeBytes(40, {1}, {0})),
              absl::StatusCode::kInvalidArgument, "element_type 40");
}

TEST(LiteralDecoderErrorTest, NegativeDimension) {
  ExpectError(Len(1, ShapeBytes(6, {-1}, {0})),
              absl::StatusCode::kInvalidArgument, "dimension");
}

TEST(LiteralDecoderErrorTest, HugeShapeAllocatesNothing) {
  // U8[2^40] with a 3-byte payload: rejected by the count check before any
  // allocation or write of the payload.
  Decoded d = DecodeMem(Len(1, ShapeBytes(6, {int64_t{1} << 40}, {0})) +
                        Len(3, "abc"));
  EXPECT_EQ(d.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(d.npy.empty());
}

TEST(LiteralDecoderErrorTest, FuzzedBodiesNeverCrash) {
  std::mt19937 rng(7);
  std::string seed = Len(1, ShapeBytes(4, {3, 2}, {0, 1})) +
                     Len(4, Packed({1, -2, 3, 300, 5, 6}));
  for (int i = 0; i < 20000; ++i) {
    std::string b = seed;
    int edits = 1 + rng() % 4;
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % b.size();
      switch (rng() % 3) {
        case 0: b[at] = static_cast<char>(rng()); break;
        case 1: b.erase(at, 1 + rng() % 3); break;
        default: b.insert(at, 1, static_cast<char>(rng()));
      }
      if (b.empty()) b.assign(1, 'x');
    }
    Decoded d = DecodeMem(b);
    if (d.status.ok()) {
      EXPECT_EQ(d.npy.size(), 128 + d.plan.data_bytes);
    }
  }
}

// --- a fault-injecting source: short reads and EINTR ----------------------

// A BufferedSource backend over a string that returns 1..7 bytes per read
// and fails every fifth read with EINTR (which BufferedSource retries).
class ShortReadBackend {
 public:
  explicit ShortReadBackend(const std::string* data) : data_(data) {}
  ssize_t ReadSome(char* dst, size_t n) {
    if (++calls_ % 5 == 0) {
      errno = EINTR;
      return -1;
    }
    size_t k = std::min({n, size_t{1} + calls_ % 7, data_->size() - pos_});
    std::memcpy(dst, data_->data() + pos_, k);
    pos_ += k;
    return static_cast<ssize_t>(k);
  }
  bool Seekable() const { return true; }
  bool SeekTo(uint64_t pos) {
    pos_ = static_cast<size_t>(pos);
    return true;
  }
  std::optional<uint64_t> Size() const { return data_->size(); }

 private:
  const std::string* data_;
  size_t pos_ = 0;
  size_t calls_ = 0;
};

TEST(LiteralDecoderFaultTest, ShortReadsGiveTheSameOutput) {
  std::vector<int64_t> vals;
  for (int i = 0; i < 3000; ++i) vals.push_back((i % 2 ? -1 : 1) * i * 977);
  std::vector<std::string> bodies = {
      kF32Body, kF32Data + B({0x0a, 0x0a}) + kF32Shape,
      Len(1, ShapeBytes(5, {3000}, {0})) + Len(5, Packed(vals)),
      Len(1, ShapeBytes(4, {10, 300}, {0, 1})) + Len(4, Packed(vals)),
      Len(1, ShapeBytes(6, {5, 6, 100}, {2, 0, 1})) + Len(3, std::string(3000, 'q')),
  };
  for (const std::string& body : bodies) {
    Decoded want = DecodeMem(body);
    ASSERT_TRUE(want.status.ok()) << want.status;
    BufferedSource<ShortReadBackend> src(ShortReadBackend(&body), 4096);
    std::string npy;
    StringSink sink(&npy);
    absl::Status s = DecodeLiteralToNpy(src, body.size(), Frame{"x"}, sink);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(npy, want.npy);
  }
}

// --- file descriptors: kernel copy vs buffer, window boundaries -----------

std::string WriteTemp(const std::string& name, const std::string& data) {
  std::string path = ::testing::TempDir() + "/literal_decoder_test_" + name;
  std::ofstream(path, std::ios::binary) << data;
  return path;
}


Decoded DecodeFile(const std::string& path, uint64_t offset, uint64_t length,
                   LiteralDecodeOptions o, size_t src_buffer = 256 << 10) {
  Decoded d;
  OwnedFd fd;
  EXPECT_TRUE(OpenForReading(path, &fd).ok());
  FdSource src(std::move(fd), src_buffer);
  std::string out = path + ".npy";
  AtomicFileSink sink;
  EXPECT_TRUE(sink.Open(out).ok());
  ByteRange r{offset, length};
  d.status = DecodeLiteralToNpy(src, std::span<const ByteRange>(&r, 1),
                                Frame{"value_input", 0, "body"}, sink, o,
                                &d.plan, &d.path);
  if (d.status.ok()) {
    EXPECT_TRUE(sink.Commit().ok());
    d.npy = ReadFile(out);
    ::unlink(out.c_str());
  }
  return d;
}

TEST(LiteralDecoderFdTest, KernelAndBufferCopiesAgree) {
  // F32[300000] behind a 7-byte prefix, so the data is not aligned.
  std::string data;
  for (int i = 0; i < 300000; ++i) {
    float f = static_cast<float>(i) * 0.5f;
    data.append(reinterpret_cast<const char*>(&f), 4);
  }
  std::string body = Len(1, ShapeBytes(11, {300000}, {0})) + Len(8, data);
  std::string path = WriteTemp("kernel_copy.bin", "prefix!" + body + "tail");
  const std::pair<CopyMethod, LiteralPath> ways[] = {
      {CopyMethod::kKernel, LiteralPath::kKernelCopy},
      {CopyMethod::kBuffer, LiteralPath::kBufferCopy},
      {CopyMethod::kSplice, LiteralPath::kSpliceCopy},
      // 1.2 MB is over kSpliceMinBytes: the default splices.
      {CopyMethod::kAuto, LiteralPath::kSpliceCopy}};
  for (const auto& [m, want_path] : ways) {
    LiteralDecodeOptions o;
    o.copy = m;
    Decoded d = DecodeFile(path, 7, body.size(), o);
    ASSERT_TRUE(d.status.ok()) << d.status;
    EXPECT_EQ(d.npy.substr(128), data);
    EXPECT_EQ(d.path, want_path) << static_cast<int>(m);
  }
  ::unlink(path.c_str());
}

TEST(LiteralDecoderFdTest, SmallPayloadsUseTheBufferByDefault) {
  // F32[1000]: 4000 bytes, under kSpliceMinBytes.
  std::string data;
  for (int i = 0; i < 1000; ++i) {
    float f = static_cast<float>(i);
    data.append(reinterpret_cast<const char*>(&f), 4);
  }
  std::string body = Len(1, ShapeBytes(11, {1000}, {0})) + Len(8, data);
  std::string path = WriteTemp("small_copy.bin", "xyz" + body);
  Decoded d = DecodeFile(path, 3, body.size(), {});
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.npy.substr(128), data);
  EXPECT_EQ(d.path, LiteralPath::kBufferCopy);
  ::unlink(path.c_str());
}

TEST(LiteralDecoderFdTest, VarintsAcrossSmallWindows) {
  // 200000 S64 varints of every width through a 4 KiB source window.
  std::mt19937_64 rng(3);
  std::vector<int64_t> vals;
  std::string want;
  for (int i = 0; i < 200000; ++i) {
    int shift = static_cast<int>(rng() % 64);
    int64_t v = static_cast<int64_t>(rng() >> shift);
    if (rng() % 2) v = -v;
    vals.push_back(v);
    want.append(reinterpret_cast<const char*>(&v), 8);
  }
  std::string body = Len(1, ShapeBytes(5, {200000}, {0})) + Len(5, Packed(vals));
  std::string path = WriteTemp("varints.bin", body);
  Decoded d = DecodeFile(path, 0, body.size(), {}, 4096);
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.path, LiteralPath::kVarint);
  EXPECT_EQ(d.npy.substr(128), want);
  ::unlink(path.c_str());
}

TEST(LiteralDecoderFdTest, LiteralOverTwoGiB) {
  // U8[2^31 + 5]: a body over protobuf's 2 GiB limit, in a sparse file (the
  // data is a hole that reads as zeros), decoded through an FdSource and an
  // MmapSource into a NullSink. Checks the 64-bit sizes end to end.
  const uint64_t n = (uint64_t{1} << 31) + 5;
  std::string head = Len(1, ShapeBytes(6, {static_cast<int64_t>(n)}, {0})) +
                     Varint((3 << 3) | 2) + Varint(n);
  std::string path = ::testing::TempDir() + "/literal_decoder_test_over_2gib." +
                     std::to_string(::getpid()) + ".bin";
  {
    std::ofstream(path, std::ios::binary) << head;
  }
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(head.size() + n)), 0);
  const uint64_t body = head.size() + n;
  {
    OwnedFd fd;
    ASSERT_TRUE(OpenForReading(path, &fd).ok());
    FdSource src(std::move(fd));
    NullSink sink;
    LiteralPlan plan;
    absl::Status s = DecodeLiteralToNpy(src, body, Frame{"big"}, sink, {}, &plan);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(plan.element_count, n);
    EXPECT_EQ(sink.position(), 128 + n);
  }
  {
    MmapSource src(path);
    ASSERT_TRUE(src.status().ok());
    NullSink sink;
    LiteralPath p;
    absl::Status s = DecodeLiteralToNpy(src, body, Frame{"big"}, sink, {},
                                        nullptr, &p);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(p, LiteralPath::kView);
    EXPECT_EQ(sink.position(), 128 + n);
  }
  ::unlink(path.c_str());
}

TEST(LiteralDecoderFdTest, TruncatedFileIsOutOfRange) {
  std::string body = Len(1, ShapeBytes(11, {1000}, {0})) +
                     Len(8, std::string(4000, 'x'));
  std::string path = WriteTemp("truncated.bin", body.substr(0, 2000));
  Decoded d = DecodeFile(path, 0, body.size(), {});
  EXPECT_EQ(d.status.code(), absl::StatusCode::kOutOfRange) << d.status;
  EXPECT_THAT(std::string(d.status.message()), HasSubstr("value_input 0"));
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace decomposed
