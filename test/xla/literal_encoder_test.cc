#include "decomposed/xla/literal_source.h"
#include "decomposed/xla/literal_encoder.h"

#include <cstring>
#include <string>
#include <vector>

#include "decomposed/proto/hlo.pb.h"
#include "gtest/gtest.h"
#include "test_literals.h"

namespace decomposed {
namespace {

using testing::Bytes;

// Encodes a literal from memory; returns the body (or the error text).
std::string Encode(const void* data, PrimitiveType t,
                   std::vector<int64_t> dims,
                   std::optional<std::vector<int64_t>> m2m = std::nullopt,
                   bool tail = true, uint64_t* declared = nullptr) {
  LiteralEncodeOptions o;
  o.allow_unloadable_types = true;
  o.shape.tail_padding_alignment = tail;
  auto body =
      ArrayLiteral(ArrayView{data, t, std::move(dims), std::move(m2m)}, o);
  absl::StatusOr<uint64_t> n = body->Prepare();
  if (!n.ok()) return "ERROR " + std::string(n.status().message());
  if (declared) *declared = *n;
  std::string out;
  absl::Status s = body->Write([&](std::string_view c) {
    out.append(c);
    return absl::OkStatus();
  });
  if (!s.ok()) return "ERROR " + std::string(s.message());
  EXPECT_EQ(out.size(), *n) << "declared length must be exact";
  return out;
}

// ---- Golden bytes, worked out by hand from docs/format.md §8 and §9 ----

TEST(LiteralEncoderGolden, F32Vector) {
  float v[2] = {1.0f, 2.0f};
  // shape: 10 0b | 1a 01 02 | 2a 06 [0a 01 00  80 01 01] | 32 01 00 = 16
  // data:  42 08 | 00 00 80 3f | 00 00 00 40
  EXPECT_EQ(Encode(v, PrimitiveType::kF32, {2}),
            Bytes({0x0a, 0x10, 0x10, 0x0b, 0x1a, 0x01, 0x02, 0x2a, 0x06, 0x0a,
                   0x01, 0x00, 0x80, 0x01, 0x01, 0x32, 0x01, 0x00, 0x42, 0x08,
                   0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40}));
}

TEST(LiteralEncoderGolden, S32NegativeScalarTf211Layout) {
  int32_t v = -1;
  // shape: 10 04 | 2a 00 (a scalar's empty layout) ; data: 22 0a + ten-byte
  // sign-extended varint of -1.
  EXPECT_EQ(Encode(&v, PrimitiveType::kS32, {}, std::nullopt, false),
            Bytes({0x0a, 0x04, 0x10, 0x04, 0x2a, 0x00, 0x22, 0x0a, 0xff, 0xff,
                   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
}

TEST(LiteralEncoderGolden, S32ScalarModernLayout) {
  int32_t v = 5;
  // shape: 10 04 | 2a 03 [80 01 01] ; data: 22 01 05
  EXPECT_EQ(Encode(&v, PrimitiveType::kS32, {}),
            Bytes({0x0a, 0x07, 0x10, 0x04, 0x2a, 0x03, 0x80, 0x01, 0x01, 0x22,
                   0x01, 0x05}));
}

TEST(LiteralEncoderGolden, PredNormalizesNonZero) {
  uint8_t v[3] = {1, 0, 5};
  EXPECT_EQ(Encode(v, PrimitiveType::kPred, {3}),
            Bytes({0x0a, 0x10, 0x10, 0x01, 0x1a, 0x01, 0x03, 0x2a, 0x06, 0x0a,
                   0x01, 0x00, 0x80, 0x01, 0x01, 0x32, 0x01, 0x00, 0x12, 0x03,
                   0x01, 0x00, 0x01}));
}

TEST(LiteralEncoderGolden, Bf16Bytes) {
  uint16_t v[2] = {0x3f80, 0x4000};  // 1.0, 2.0
  EXPECT_EQ(Encode(v, PrimitiveType::kBF16, {2}),
            Bytes({0x0a, 0x10, 0x10, 0x10, 0x1a, 0x01, 0x02, 0x2a, 0x06, 0x0a,
                   0x01, 0x00, 0x80, 0x01, 0x01, 0x32, 0x01, 0x00, 0x6a, 0x04,
                   0x80, 0x3f, 0x00, 0x40}));
}

TEST(LiteralEncoderGolden, U16TwoByteTag) {
  uint16_t v = 0x1234;
  // u16s is field 16: tag (16 << 3 | 2) = 130 = 82 01.
  EXPECT_EQ(Encode(&v, PrimitiveType::kU16, {1}),
            Bytes({0x0a, 0x10, 0x10, 0x07, 0x1a, 0x01, 0x01, 0x2a, 0x06, 0x0a,
                   0x01, 0x00, 0x80, 0x01, 0x01, 0x32, 0x01, 0x00, 0x82, 0x01,
                   0x02, 0x34, 0x12}));
}

TEST(LiteralEncoderGolden, ColumnMajorLayout) {
  float v[4] = {0, 0, 0, 0};
  // dims 1a 02 02 02 ; layout 2a 04 [0a 02 00 01] ; dyn 32 02 00 00
  std::string got =
      Encode(v, PrimitiveType::kF32, {2, 2}, std::vector<int64_t>{0, 1}, false);
  std::string want = Bytes({0x0a, 0x10, 0x10, 0x0b, 0x1a, 0x02, 0x02, 0x02,
                            0x2a, 0x04, 0x0a, 0x02, 0x00, 0x01, 0x32, 0x02,
                            0x00, 0x00, 0x42, 0x10});
  want.append(16, '\0');
  EXPECT_EQ(got, want);
}

TEST(LiteralEncoderGolden, ZeroSizeHasNoDataField) {
  float dummy = 0;
  EXPECT_EQ(Encode(&dummy, PrimitiveType::kF32, {0}),
            Bytes({0x0a, 0x10, 0x10, 0x0b, 0x1a, 0x01, 0x00, 0x2a, 0x06, 0x0a,
                   0x01, 0x00, 0x80, 0x01, 0x01, 0x32, 0x01, 0x00}));
}

TEST(LiteralEncoderGolden, U64Varint) {
  uint64_t v = 300;  // varint ac 02
  EXPECT_EQ(Encode(&v, PrimitiveType::kU64, {1}),
            Bytes({0x0a, 0x10, 0x10, 0x09, 0x1a, 0x01, 0x01, 0x2a, 0x06, 0x0a,
                   0x01, 0x00, 0x80, 0x01, 0x01, 0x32, 0x01, 0x00, 0x3a, 0x02,
                   0xac, 0x02}));
}

TEST(LiteralEncoderGolden, C64Interleaved) {
  float v[2] = {1.0f, -1.0f};
  EXPECT_EQ(Encode(v, PrimitiveType::kC64, {}, std::nullopt, false),
            Bytes({0x0a, 0x04, 0x10, 0x0f, 0x2a, 0x00, 0x62, 0x08, 0x00, 0x00,
                   0x80, 0x3f, 0x00, 0x00, 0x80, 0xbf}));
}

TEST(LiteralEncoderGolden, S4OneElementPerByte) {
  uint8_t v[2] = {0x0d, 0x07};  // -3, 7
  // s4s is field 21: tag (21 << 3 | 2) = 170 = aa 01.
  EXPECT_EQ(Encode(v, PrimitiveType::kS4, {2}, std::nullopt, false),
            Bytes({0x0a, 0x0d, 0x10, 0x15, 0x1a, 0x01, 0x02, 0x2a, 0x03, 0x0a,
                   0x01, 0x00, 0x32, 0x01, 0x00, 0xaa, 0x01, 0x02, 0x0d,
                   0x07}));
}

// ---- Every element type: our bytes == protobuf's serialization, and
// protobuf decodes them back to the source elements ----

class AllTypes : public ::testing::TestWithParam<int> {};

TEST_P(AllTypes, MatchesProtobufAndRoundTrips) {
  const PrimitiveType t = static_cast<PrimitiveType>(GetParam());
  const PrimitiveTypeInfo& info = Info(t);
  ASSERT_NE(info.encoding, DataEncoding::kNone) << info.name;
  for (std::vector<int64_t> dims :
       {std::vector<int64_t>{}, {5}, {3, 4}, {2, 0, 3}, {2, 3, 5}}) {
    uint64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::string data = testing::RandomElements(t, n, GetParam() * 31 + n);
    std::string body = Encode(data.data(), t, dims);
    xla::LiteralProto p;
    ASSERT_TRUE(p.ParseFromString(body)) << info.name;
    EXPECT_EQ(p.shape().element_type(), static_cast<int>(t));
    EXPECT_EQ(std::vector<int64_t>(p.shape().dimensions().begin(),
                                   p.shape().dimensions().end()),
              dims);
    EXPECT_TRUE(p.shape().has_layout());
    EXPECT_EQ(p.shape().layout().tail_padding_alignment_in_elements(), 1);
    EXPECT_EQ(p.shape().is_dynamic_dimension_size(),
              static_cast<int>(dims.size()));
    EXPECT_EQ(testing::ElementBytes(p, t), data) << info.name;
    // Protobuf's own serialization of the message it parsed is the same
    // bytes: field order, packing and empty-field omission all agree.
    EXPECT_EQ(p.SerializeAsString(), body) << info.name;
  }
}

// Every array type; TUPLE, OPAQUE_TYPE, TOKEN and BUFFER have no literal
// encoding and are left out here rather than skipped at run time.
std::vector<int> ArrayTypes() {
  std::vector<int> out;
  for (int t = 1; t < kNumPrimitiveTypes; ++t) {
    if (Info(static_cast<PrimitiveType>(t)).encoding != DataEncoding::kNone) {
      out.push_back(t);
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Types, AllTypes,
                         ::testing::ValuesIn(ArrayTypes()),
                         [](const auto& i) {
                           return std::string(Info(static_cast<PrimitiveType>(
                                                       i.param))
                                                  .name);
                         });

// ---- Streaming behaviour ----

// Yields the given bytes one byte per chunk; after `change_after` passes it
// yields `second` instead.
class DribbleSource : public ElementSource {
 public:
  DribbleSource(std::string first, std::string second)
      : first_(std::move(first)), second_(std::move(second)) {}
  absl::Status ForEachChunk(const ChunkFn& fn) override {
    const std::string& d = passes_++ == 0 ? first_ : second_;
    for (char c : d) {
      if (absl::Status s = fn(std::string_view(&c, 1)); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  int passes_ = 0;

 private:
  std::string first_, second_;
};

TEST(LiteralEncoder, VarintsAcrossOneByteChunks) {
  std::vector<int64_t> v = {-1, 0, 1, 127, 128, INT64_MIN, INT64_MAX};
  std::string raw(reinterpret_cast<const char*>(v.data()), v.size() * 8);
  DribbleSource src(raw, raw);
  absl::StatusOr<LiteralEncoder> e = LiteralEncoder::Create(
      ArraySpec{PrimitiveType::kS64, {7}, std::nullopt}, &src);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(src.passes_, 1) << "one sizing pass";
  std::string out;
  ASSERT_TRUE(e->Write([&](std::string_view c) {
                 out.append(c);
                 return absl::OkStatus();
               }).ok());
  EXPECT_EQ(out.size(), e->body_size());
  xla::LiteralProto p;
  ASSERT_TRUE(p.ParseFromString(out));
  EXPECT_EQ(std::vector<int64_t>(p.s64s().begin(), p.s64s().end()), v);
}

TEST(LiteralEncoder, DataChangedBetweenPassesIsDataLoss) {
  int32_t a[2] = {1, 2}, b[2] = {-1, -2};  // same size in, longer varints
  DribbleSource src(std::string(reinterpret_cast<char*>(a), 8),
                    std::string(reinterpret_cast<char*>(b), 8));
  absl::StatusOr<LiteralEncoder> e = LiteralEncoder::Create(
      ArraySpec{PrimitiveType::kS32, {2}, std::nullopt}, &src);
  ASSERT_TRUE(e.ok());
  absl::Status s =
      e->Write([](std::string_view) { return absl::OkStatus(); });
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
}

TEST(LiteralEncoder, ShortDataIsAnError) {
  std::string raw(7, '\0');  // F32[2] needs 8
  DribbleSource src(raw, raw);
  absl::StatusOr<LiteralEncoder> e = LiteralEncoder::Create(
      ArraySpec{PrimitiveType::kF32, {2}, std::nullopt}, &src);
  ASSERT_TRUE(e.ok());  // fixed size: no pass at Create
  absl::Status s = e->Write([](std::string_view) { return absl::OkStatus(); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("expected 8 bytes"), std::string::npos) << s;
}

TEST(LiteralEncoder, RejectsBadSpecs) {
  float v = 0;
  EXPECT_NE(Encode(&v, PrimitiveType::kTuple, {}).find("ERROR"),
            std::string::npos);
  EXPECT_NE(Encode(&v, PrimitiveType::kF32, {1, 1},
                   std::vector<int64_t>{0, 0})
                .find("minor_to_major"),
            std::string::npos);
  EXPECT_NE(Encode(&v, PrimitiveType::kF32, {-1}).find("ERROR"),
            std::string::npos);
  EXPECT_NE(Encode(nullptr, PrimitiveType::kF32, {1}).find("ERROR"),
            std::string::npos);
}

TEST(LiteralEncoder, RefusesUnloadableTypesByDefault) {
  uint8_t v = 1;
  auto body =
      ArrayLiteral(ArrayView{&v, PrimitiveType::kS1, {1}, std::nullopt});
  absl::StatusOr<uint64_t> n = body->Prepare();
  EXPECT_EQ(n.status().code(), absl::StatusCode::kUnimplemented);
  auto ok = ArrayLiteral(ArrayView{&v, PrimitiveType::kS4, {1}, std::nullopt});
  EXPECT_TRUE(ok->Prepare().ok());
}

TEST(LiteralEncoder, ColumnMajorKeepsPhysicalOrder) {
  float v[6] = {0, 1, 2, 3, 4, 5};
  std::string body =
      Encode(v, PrimitiveType::kF32, {2, 3}, std::vector<int64_t>{0, 1});
  xla::LiteralProto p;
  ASSERT_TRUE(p.ParseFromString(body));
  EXPECT_EQ(p.shape().layout().minor_to_major(0), 0);
  EXPECT_EQ(p.shape().layout().minor_to_major(1), 1);
  EXPECT_EQ(std::vector<float>(p.f32s().begin(), p.f32s().end()),
            std::vector<float>(v, v + 6));
}

TEST(LiteralEncoder, SerializedBodyValidates) {
  // No shape: XLA would say "LiteralProto has no shape".
  auto b = SerializedLiteral(Bytes({0x42, 0x04, 0, 0, 0, 0}));
  absl::StatusOr<uint64_t> n = b->Prepare();
  EXPECT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("no shape"), std::string::npos);
  // Truncated field.
  auto c = SerializedLiteral(Bytes({0x0a, 0x10, 0x10}));
  EXPECT_FALSE(c->Prepare().ok());
  // A good one passes through byte for byte.
  float v = 3;
  std::string good = Encode(&v, PrimitiveType::kF32, {});
  auto d = SerializedLiteral(good);
  ASSERT_TRUE(d->Prepare().ok());
  std::string out;
  ASSERT_TRUE(d->Write([&](std::string_view x) {
                 out.append(x);
                 return absl::OkStatus();
               }).ok());
  EXPECT_EQ(out, good);
  EXPECT_EQ(*d->ShapeBytes(), good.substr(2, good[1]));
}

}  // namespace
}  // namespace decomposed
