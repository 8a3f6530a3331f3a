#include "decomposed/npy/npy_reader.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace decomposed {
namespace {

// Builds an .npy file by hand (NumPy's format, docs/format.md §12.2) with
// the given version and dict text; the header is padded to 64 bytes.
std::string Npy(int major, const std::string& dict, const std::string& data) {
  size_t fixed = major == 1 ? 10 : 12;
  size_t total = fixed + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  size_t len = padded - fixed;
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) {
    out.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  }
  out += dict;
  out.append(len - dict.size() - 1, ' ');
  out.push_back('\n');
  return out + data;
}

std::string Dict(const std::string& descr, bool fortran,
                 const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': " +
         (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
}

struct Read {
  absl::StatusOr<NpyArrayInfo> info;
  std::string data;
  absl::Status stream;
};

Read ReadAll(const std::string& file, NpyReadOptions o = {}) {
  Read r;
  MemorySource src(file);
  r.info = ReadNpyArrayHeader(src, o);
  if (!r.info.ok()) return r;
  r.stream = ForEachNpyDataChunk(src, *r.info, [&](std::string_view c) {
    r.data.append(c);
    return absl::OkStatus();
  });
  return r;
}

template <class T>
std::string Raw(std::initializer_list<T> v) {
  return std::string(reinterpret_cast<const char*>(std::data(v)),
                     v.size() * sizeof(T));
}

TEST(NpyReader, Version1Float32) {
  std::string data = Raw<float>({1, 2, 3, 4, 5, 6});
  Read r = ReadAll(Npy(1, Dict("<f4", false, "(2, 3)"), data));
  ASSERT_TRUE(r.info.ok()) << r.info.status();
  EXPECT_EQ(r.info->type, PrimitiveType::kF32);
  EXPECT_EQ(r.info->dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.info->data_offset, 128u);  // 10 + 59-byte dict + newline = 70, padded to 128
  EXPECT_EQ(r.info->data_bytes, 24u);
  EXPECT_TRUE(r.stream.ok());
  EXPECT_EQ(r.data, data);
}

TEST(NpyReader, Versions2And3AndKeyOrder) {
  std::string data = Raw<int16_t>({-1, 2});
  for (int v : {2, 3}) {
    Read r = ReadAll(Npy(v,
                         "{'shape': (2,), 'fortran_order': False, 'descr': "
                         "'<i2'}",
                         data));
    ASSERT_TRUE(r.info.ok()) << r.info.status();
    EXPECT_EQ(r.info->type, PrimitiveType::kS16);
    EXPECT_EQ(r.info->header.major_version, v);
    EXPECT_EQ(r.data, data);
  }
}

TEST(NpyReader, EveryPlainDescr) {
  struct Case {
    const char* descr;
    PrimitiveType type;
  } cases[] = {
      {"|b1", PrimitiveType::kPred}, {"|i1", PrimitiveType::kS8},
      {"<i2", PrimitiveType::kS16},  {"<i4", PrimitiveType::kS32},
      {"<i8", PrimitiveType::kS64},  {"|u1", PrimitiveType::kU8},
      {"<u2", PrimitiveType::kU16},  {"<u4", PrimitiveType::kU32},
      {"<u8", PrimitiveType::kU64},  {"<f2", PrimitiveType::kF16},
      {"<f4", PrimitiveType::kF32},  {"<f8", PrimitiveType::kF64},
      {"<c8", PrimitiveType::kC64},  {"<c16", PrimitiveType::kC128},
      {"=f4", PrimitiveType::kF32},  {"|i1", PrimitiveType::kS8},
  };
  for (const Case& c : cases) {
    size_t w = Info(c.type).element_bytes;
    Read r = ReadAll(Npy(1, Dict(c.descr, false, "(3,)"),
                         std::string(3 * w, '\x01')));
    ASSERT_TRUE(r.info.ok()) << c.descr << ": " << r.info.status();
    EXPECT_EQ(r.info->type, c.type) << c.descr;
    EXPECT_EQ(r.data.size(), 3 * w);
  }
}

TEST(NpyReader, ScalarAndZeroSize) {
  Read s = ReadAll(Npy(1, Dict("<f8", false, "()"), Raw<double>({2.5})));
  ASSERT_TRUE(s.info.ok());
  EXPECT_TRUE(s.info->dims().empty());
  EXPECT_EQ(s.info->element_count, 1u);
  Read z = ReadAll(Npy(1, Dict("<f4", false, "(0, 7)"), ""));
  ASSERT_TRUE(z.info.ok());
  EXPECT_EQ(z.info->element_count, 0u);
  EXPECT_TRUE(z.stream.ok());
}

TEST(NpyReader, BigEndianIsSwapped) {
  // >f4 1.0 = 3f 80 00 00 ; >i2 -2 = ff fe ; >c8 (1, -1)
  Read f = ReadAll(Npy(1, Dict(">f4", false, "(1,)"),
                       std::string("\x3f\x80\x00\x00", 4)));
  ASSERT_TRUE(f.info.ok());
  EXPECT_EQ(f.info->type, PrimitiveType::kF32);
  EXPECT_EQ(f.data, Raw<float>({1.0f}));
  Read i = ReadAll(Npy(1, Dict(">i2", false, "(1,)"), "\xff\xfe"));
  EXPECT_EQ(i.data, Raw<int16_t>({-2}));
  Read c = ReadAll(Npy(1, Dict(">c8", false, "()"),
                       std::string("\x3f\x80\x00\x00\xbf\x80\x00\x00", 8)));
  ASSERT_TRUE(c.info.ok());
  EXPECT_EQ(c.info->swap_unit, 4u);
  EXPECT_EQ(c.data, Raw<float>({1.0f, -1.0f}));
  // One-byte types have no byte order to convert.
  Read b = ReadAll(Npy(1, Dict(">u1", false, "(1,)"), "\x07"));
  ASSERT_TRUE(b.info.ok());
  EXPECT_EQ(b.info->swap_unit, 0u);
}

TEST(NpyReader, BigEndianRefusedWhenAsked) {
  NpyReadOptions o;
  o.allow_big_endian = false;
  Read f = ReadAll(Npy(1, Dict(">f4", false, "(1,)"), std::string(4, 0)), o);
  EXPECT_EQ(f.info.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(f.info.status().message().find("big endian"), std::string::npos);
}

TEST(NpyReader, FortranOrderIsReported) {
  Read r = ReadAll(Npy(1, Dict("<f4", true, "(2, 3)"), std::string(24, 0)));
  ASSERT_TRUE(r.info.ok());
  EXPECT_TRUE(r.info->header.fortran_order);
}

TEST(NpyReader, VoidNeedsATrueDtype) {
  Read r = ReadAll(Npy(1, Dict("|V2", false, "(2,)"), std::string(4, 0)));
  EXPECT_EQ(r.info.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.info.status().message().find("true dtype"), std::string::npos)
      << r.info.status();
  NpyReadOptions o;
  o.dtype = PrimitiveType::kBF16;
  r = ReadAll(Npy(1, Dict("|V2", false, "(2,)"), std::string(4, 0)), o);
  ASSERT_TRUE(r.info.ok());
  EXPECT_EQ(r.info->type, PrimitiveType::kBF16);
  // Width must match: |V1 cannot be BF16.
  r = ReadAll(Npy(1, Dict("|V1", false, "(2,)"), std::string(2, 0)), o);
  EXPECT_FALSE(r.info.ok());
  o.dtype = PrimitiveType::kF8E4M3FN;
  r = ReadAll(Npy(1, Dict("|V1", false, "(2,)"), std::string(2, 0)), o);
  ASSERT_TRUE(r.info.ok());
  EXPECT_EQ(r.info->type, PrimitiveType::kF8E4M3FN);
}

TEST(NpyReader, OverrideReinterpretsSameWidth) {
  NpyReadOptions o;
  o.dtype = PrimitiveType::kBF16;
  Read r = ReadAll(Npy(1, Dict("<u2", false, "(1,)"), "\x80\x3f"), o);
  ASSERT_TRUE(r.info.ok());
  EXPECT_EQ(r.info->type, PrimitiveType::kBF16);
  r = ReadAll(Npy(1, Dict("<f4", false, "(1,)"), std::string(4, 0)), o);
  EXPECT_EQ(r.info.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(NpyReader, Errors) {
  // Bad magic.
  std::string good = Npy(1, Dict("<f4", false, "(1,)"), std::string(4, 0));
  std::string bad = good;
  bad[1] = 'X';
  Read r = ReadAll(bad);
  EXPECT_EQ(r.info.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.info.status().message().find("magic"), std::string::npos);
  // Truncated preamble and truncated header.
  r = ReadAll(good.substr(0, 5));
  EXPECT_EQ(r.info.status().code(), absl::StatusCode::kOutOfRange);
  r = ReadAll(good.substr(0, 30));
  EXPECT_EQ(r.info.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(r.info.status().message().find("npy header"), std::string::npos);
  // Oversized header length (v2: 4-byte length of 0x7fffffff).
  std::string huge = std::string("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12);
  r = ReadAll(huge + "{}");
  EXPECT_EQ(r.info.status().code(), absl::StatusCode::kResourceExhausted);
  // Data short of the shape.
  r = ReadAll(good.substr(0, good.size() - 1));
  EXPECT_EQ(r.info.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(r.info.status().message().find("npy data"), std::string::npos);
  EXPECT_NE(r.info.status().message().find("at byte 128"), std::string::npos)
      << r.info.status();
  // Trailing bytes.
  r = ReadAll(good + "x");
  EXPECT_EQ(r.info.status().code(), absl::StatusCode::kInvalidArgument);
  NpyReadOptions lax;
  lax.reject_trailing_data = false;
  EXPECT_TRUE(ReadAll(good + "x", lax).info.ok());
  // Unsupported descrs.
  for (const char* d : {"<U3", "|O", "<M8", "|S4", "<f16", "<i3"}) {
    r = ReadAll(Npy(1, Dict(d, false, "(1,)"), std::string(4, 0)));
    EXPECT_EQ(r.info.status().code(), absl::StatusCode::kUnimplemented) << d;
  }
  // Unknown version.
  std::string v4 = good;
  v4[6] = 4;
  EXPECT_FALSE(ReadAll(v4).info.ok());
  // Malformed dict.
  r = ReadAll(Npy(1, "{'descr': '<f4', 'shape': (1,), }", std::string(4, 0)));
  EXPECT_FALSE(r.info.ok());
}

// A stream whose size is unknown learns of missing data while streaming.
TEST(NpyReader, TruncationFoundWhileStreaming) {
  std::string f = Npy(1, Dict("<f4", false, "(4,)"), std::string(8, 0));
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], f.data(), f.size()),
            static_cast<ssize_t>(f.size()));
  ::close(fds[1]);
  FdSource src{OwnedFd(fds[0])};
  absl::StatusOr<NpyArrayInfo> info = ReadNpyArrayHeader(src, {});
  ASSERT_TRUE(info.ok()) << info.status();
  absl::Status s = ForEachNpyDataChunk(
      src, *info, [](std::string_view) { return absl::OkStatus(); });
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << s;
}

TEST(NpyReader, Sidecar) {
  std::string dir = ::testing::TempDir();
  std::string path = dir + "/sidecar_test.npy";
  std::remove((path + ".meta").c_str());
  absl::StatusOr<std::optional<PrimitiveType>> none = ReadNpyMetaSidecar(path);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  std::ofstream(path + ".meta") << R"({"ml_dtype": "bfloat16"})";
  absl::StatusOr<std::optional<PrimitiveType>> t = ReadNpyMetaSidecar(path);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(**t, PrimitiveType::kBF16);
  std::ofstream(path + ".meta") << R"({"ml_dtype": "float8_e4m3fn"})";
  EXPECT_EQ(**ReadNpyMetaSidecar(path), PrimitiveType::kF8E4M3FN);
  std::ofstream(path + ".meta") << R"({"ml_dtype": "nonsense"})";
  EXPECT_FALSE(ReadNpyMetaSidecar(path).ok());
  std::ofstream(path + ".meta") << "not json";
  EXPECT_FALSE(ReadNpyMetaSidecar(path).ok());
  std::remove((path + ".meta").c_str());
}

TEST(NpyReader, SidecarThatIsNotARegularFileIsRefusedWithoutReading) {
  // A FIFO blocked the open forever; a device such as /dev/zero was read
  // without end. Both are refused after a stat.
  std::string path = ::testing::TempDir() + "/sidecar_fifo_test.npy";
  std::remove((path + ".meta").c_str());
  ASSERT_EQ(::mkfifo((path + ".meta").c_str(), 0600), 0);
  absl::StatusOr<std::optional<PrimitiveType>> t = ReadNpyMetaSidecar(path);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kFailedPrecondition);
  std::remove((path + ".meta").c_str());
  ASSERT_EQ(::symlink("/dev/zero", (path + ".meta").c_str()), 0);
  t = ReadNpyMetaSidecar(path);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kFailedPrecondition);
  std::remove((path + ".meta").c_str());
}

TEST(NpyReader, DtypeNames) {
  EXPECT_EQ(ParseDtypeName("bf16"), PrimitiveType::kBF16);
  EXPECT_EQ(ParseDtypeName("BF16"), PrimitiveType::kBF16);
  EXPECT_EQ(ParseDtypeName("bfloat16"), PrimitiveType::kBF16);
  EXPECT_EQ(ParseDtypeName("float32"), PrimitiveType::kF32);
  EXPECT_EQ(ParseDtypeName("f8e4m3fn"), PrimitiveType::kF8E4M3FN);
  EXPECT_EQ(ParseDtypeName("int4"), PrimitiveType::kS4);
  EXPECT_FALSE(ParseDtypeName("float7").has_value());
}

}  // namespace
}  // namespace decomposed
