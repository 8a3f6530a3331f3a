// Bundle writer: golden bytes worked out by hand, and failure injection (a
// failing sink, /dev/full, a file-size limit, an unusable parent, an
// existing call directory) that must leave no call<N> behind.
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "decomposed/io/byte_sink.h"
#include "decomposed/capture/bundle_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace decomposed::capture {
namespace {

using ::testing::HasSubstr;

// Accepts `budget` bytes, then fails every write (a disk filling up).
class FailingSink {
 public:
  explicit FailingSink(uint64_t budget) : budget_(budget) {}
  bool Write(std::string_view d) {
    if (!status_.ok()) return false;
    if (pos_ + d.size() > budget_) {
      status_ = absl::ResourceExhaustedError("no space left (injected)");
      return false;
    }
    pos_ += d.size();
    return true;
  }
  bool Flush() { return status_.ok(); }
  uint64_t position() const { return pos_; }
  const absl::Status& status() const { return status_; }

 private:
  uint64_t budget_;
  uint64_t pos_ = 0;
  absl::Status status_;
};
static_assert(ByteSink<FailingSink>);

std::string TempRoot() {
  std::string t = testing::TempDir() + "/capture_bundle_XXXXXX";
  EXPECT_NE(::mkdtemp(t.data()), nullptr);
  return t;
}

std::vector<std::string> List(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(TorchPickle, GoldenFloat32) {
  // Worked out by hand from pickle protocol 2 and torch's
  // Tensor.__reduce_ex__ -> _rebuild_tensor_v2(storage, offset, size,
  // stride, requires_grad, backward_hooks).
  static const char kWant[] =
      "\x80\x02"
      "ctorch._utils\n_rebuild_tensor_v2\n"
      "(("
      "X\x07\x00\x00\x00storage"
      "ctorch\nFloatStorage\n"
      "X\x01\x00\x00\x00" "0"
      "X\x03\x00\x00\x00" "cpu"
      "K\x06"
      "tQ"
      "K\x00"
      "K\x02K\x03\x86"
      "K\x03K\x01\x86"
      "\x89"
      "ccollections\nOrderedDict\n)R"
      "tR.";
  EXPECT_EQ(TorchTensorPickle(*FindTorchDtype("torch.float32"), {2, 3}),
            std::string(kWant, sizeof(kWant) - 1));
}

TEST(TorchPickle, GoldenFloat8UsesV3AndBytes) {
  static const char kWant[] =
      "\x80\x02"
      "ctorch._utils\n_rebuild_tensor_v3\n"
      "(("
      "X\x07\x00\x00\x00storage"
      "ctorch\nUntypedStorage\n"
      "X\x01\x00\x00\x00" "0"
      "X\x03\x00\x00\x00" "cpu"
      "M\x2c\x01"            // 300 bytes
      "tQ"
      "K\x00"
      "(K\x02K\x03K\x05K\x0at"  // rank 4: MARK ... TUPLE
      "(K\x96K\x32K\x0aK\x01t"  // strides 150, 50, 10, 1
      "\x89"
      "ccollections\nOrderedDict\n)R"
      "ctorch\nfloat8_e4m3fn\n"
      "tR.";
  EXPECT_EQ(TorchTensorPickle(*FindTorchDtype("torch.float8_e4m3fn"),
                              {2, 3, 5, 10}),
            std::string(kWant, sizeof(kWant) - 1));
}

TEST(Npy, Bf16IsV2AndRaw) {
  uint16_t v[3] = {0x3f80, 0x4000, 0xc040};
  HostTensor t{v, TorchType::kBFloat16, {3}, {}};
  std::string out;
  StringSink s(&out);
  ASSERT_TRUE(WriteNpyTensor(t, s).ok());
  // 10 fixed bytes + a 58-byte dict + '\n' = 69, padded to 128.
  ASSERT_EQ(out.size(), 128u + 6);
  EXPECT_THAT(out.substr(0, 128), HasSubstr("{'descr': '|V2', 'fortran_order': False, 'shape': (3,), }"));
  EXPECT_EQ(out.substr(128), std::string("\x80\x3f\x00\x40\x40\xc0", 6));
}

TEST(Npy, NoNumpyRepresentationAsksForPt) {
  uint32_t v[1] = {0};
  HostTensor t{v, TorchType::kComplex32, {1}, {}};
  std::string out;
  StringSink s(&out);
  absl::Status st = WriteNpyTensor(t, s);
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(st.message(), HasSubstr("pt"));
}

TEST(HostTensor, StridedCopyIsCOrder) {
  // A (2, 3) int32 view of a (3, 2) buffer transposed.
  int32_t buf[6] = {0, 3, 1, 4, 2, 5};
  HostTensor t{buf, TorchType::kInt32, {2, 3}, {1, 2}};
  auto l = ValidateHostTensor(t, "t");
  ASSERT_TRUE(l.ok());
  EXPECT_FALSE(l->contiguous);
  std::string got;
  ForEachTensorChunk(t, *l, [&](std::string_view d) {
    got.append(d);
    return true;
  }, /*chunk_bytes=*/8);
  std::vector<int32_t> vals(6);
  std::memcpy(vals.data(), got.data(), 24);
  EXPECT_EQ(vals, (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
}

TEST(HostTensor, StridedViewsAnyChunkSize) {
  // A (2, 3, 5) buffer of uint16 element ids; views: row slice (inner stride
  // 1), every other column, a permutation, and a broadcast (stride 0).
  std::vector<uint16_t> buf(30);
  for (int i = 0; i < 30; ++i) buf[i] = static_cast<uint16_t>(i);
  struct View { std::vector<int64_t> shape, strides; };
  const View views[] = {
      {{2, 3, 3}, {15, 5, 1}},
      {{2, 3, 3}, {15, 5, 2}},
      {{5, 3, 2}, {1, 5, 15}},
      {{2, 4, 5}, {15, 0, 1}},
  };
  for (const View& v : views) {
    std::vector<uint16_t> want;
    for (int64_t a = 0; a < v.shape[0]; ++a)
      for (int64_t b = 0; b < v.shape[1]; ++b)
        for (int64_t c = 0; c < v.shape[2]; ++c)
          want.push_back(buf[a * v.strides[0] + b * v.strides[1] + c * v.strides[2]]);
    HostTensor t{buf.data(), TorchType::kInt16, v.shape, v.strides};
    auto l = ValidateHostTensor(t, "t");
    ASSERT_TRUE(l.ok());
    for (size_t chunk : {1, 2, 3, 4, 6, 7, 64, 1 << 20}) {
      std::string got;
      size_t max_piece = 0;
      ForEachTensorChunk(t, *l, [&](std::string_view d) {
        got.append(d);
        max_piece = std::max(max_piece, d.size());
        return true;
      }, chunk);
      ASSERT_EQ(got.size(), want.size() * 2);
      EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0) << chunk;
      EXPECT_LE(max_piece, std::max<size_t>(chunk, 2));
    }
  }
}

TEST(HostTensor, Rejects) {
  int32_t b[1] = {0};
  EXPECT_FALSE(ValidateHostTensor({b, static_cast<TorchType>(kNumTorchTypes), {1}, {}}, "x").ok());
  EXPECT_FALSE(ValidateHostTensor({b, TorchType::kInt32, {-1}, {}}, "x").ok());
  EXPECT_FALSE(ValidateHostTensor({b, TorchType::kInt32, {1, 1}, {1}}, "x").ok());
  EXPECT_FALSE(ValidateHostTensor({nullptr, TorchType::kInt32, {1}, {}}, "x").ok());
  EXPECT_FALSE(ValidateHostTensor(
      {b, TorchType::kInt32, {1 << 30, 1 << 30, 1 << 30}, {}}, "x").ok());
  EXPECT_TRUE(ValidateHostTensor({nullptr, TorchType::kFloat32, {0, 4}, {}}, "x").ok());
}

TEST(Meta, GoldenJson) {
  // json.dumps(meta, indent=2, sort_keys=True), by hand.
  CallMeta m;
  m.hash = "abc";
  m.format = BundleFormat::kNpy;
  m.global_rank = 5;
  m.tp_rank = 1;
  m.dp_rank = 2;
  m.call_index = 3;
  m.selected_by = {"token", "request"};
  m.matches = {{0, "r-1", 11, "token"}};
  m.forward = ForwardInfo{{"r-1"}, {10}, false, 1, 42};
  HostTensor t{nullptr, TorchType::kFloat32, {0, 2}, {}};
  const char* want = R"({
  "call_index": 3,
  "dp_rank": 2,
  "format": "npy",
  "global_rank": 5,
  "global_step": 42,
  "hash": "abc",
  "inputs": [
    {
      "dtype": "torch.float32",
      "index": 0,
      "shape": [
        0,
        2
      ]
    }
  ],
  "is_prompt": false,
  "matches": [
    {
      "batch_index": 0,
      "position": 11,
      "reason": "token",
      "request_id": "r-1"
    }
  ],
  "positions": [
    10
  ],
  "req_ids": [
    "r-1"
  ],
  "schema": 1,
  "selected_by": [
    "request",
    "token"
  ],
  "tp_rank": 1
})";
  EXPECT_EQ(FormatMetaJson(m, {&t, 1}), want);
}

TEST(Meta, NoContext) {
  CallMeta m;
  m.hash = "h\xc3\xa9";  // non-ASCII is \u-escaped like Python's default
  const char* want = R"({
  "call_index": 0,
  "dp_rank": 0,
  "format": "pt",
  "global_rank": 0,
  "global_step": null,
  "hash": "h\u00e9",
  "inputs": [],
  "is_prompt": null,
  "matches": [],
  "positions": [],
  "req_ids": [],
  "schema": 1,
  "selected_by": [],
  "tp_rank": 0
})";
  EXPECT_EQ(FormatMetaJson(m, std::span<const HostTensor>()), want);
}

CallMeta SimpleMeta(BundleFormat f) {
  CallMeta m;
  m.hash = "h";
  m.format = f;
  m.selected_by = {"call_index"};
  return m;
}

TEST(WriteBundle, WritesAllFilesAndNoTemp) {
  std::string root = TempRoot();
  float v[4] = {1, 2, 3, 4};
  HostTensor ts[2] = {{v, TorchType::kFloat32, {4}, {}},
                      {v, TorchType::kInt32, {2, 2}, {}}};
  for (BundleFormat f : {BundleFormat::kNpy, BundleFormat::kPt}) {
    std::string dir = root + "/h/rank0/call" +
                      (f == BundleFormat::kNpy ? "0" : "1");
    ASSERT_TRUE(WriteBundle(dir, ts, SimpleMeta(f)).ok());
    std::string e = std::string(BundleFormatName(f));
    EXPECT_EQ(List(dir), (std::vector<std::string>{
                             "meta.json", "tensor0." + e, "tensor1." + e}));
  }
  EXPECT_EQ(List(root + "/h/rank0"),
            (std::vector<std::string>{"call0", "call1"}));
}

TEST(WriteBundle, NeverOverwrites) {
  std::string root = TempRoot();
  float v[1] = {1};
  HostTensor t{v, TorchType::kFloat32, {1}, {}};
  std::string dir = root + "/call0";
  ASSERT_TRUE(WriteBundle(dir, {&t, 1}, SimpleMeta(BundleFormat::kNpy)).ok());
  std::string before = Slurp(dir + "/meta.json");
  absl::Status s = WriteBundle(dir, {&t, 1}, SimpleMeta(BundleFormat::kPt));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Slurp(dir + "/meta.json"), before);
  EXPECT_EQ(List(root), std::vector<std::string>{"call0"});
  // An existing empty directory is not replaced either.
  ASSERT_EQ(::mkdir((root + "/call1").c_str(), 0755), 0);
  s = WriteBundle(root + "/call1", {&t, 1}, SimpleMeta(BundleFormat::kPt));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(List(root + "/call1").empty());
}

TEST(WriteBundle, BadInputWritesNothing) {
  std::string root = TempRoot();
  uint32_t v[1] = {0};
  HostTensor ts[2] = {{v, TorchType::kFloat32, {1}, {}},
                      {v, TorchType::kComplex32, {1}, {}}};
  absl::Status s =
      WriteBundle(root + "/h/rank0/call0", ts, SimpleMeta(BundleFormat::kNpy));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("FORMAT=pt"));
  EXPECT_TRUE(List(root).empty());
}

TEST(FailureInjection, FailingSinkMidway) {
  std::vector<float> v(1000, 1.5f);
  HostTensor t{v.data(), TorchType::kFloat32, {1000}, {}};
  for (uint64_t budget : {0, 10, 64, 100, 1000, 4000}) {
    FailingSink a(budget);
    EXPECT_FALSE(WriteNpyTensor(t, a).ok()) << budget;
    FailingSink b(budget);
    absl::Status s = WritePtTensor(t, b);
    EXPECT_FALSE(s.ok()) << budget;
    EXPECT_THAT(s.message(), HasSubstr("injected"));
  }
}

TEST(FailureInjection, DevFull) {
  int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (fd < 0) GTEST_SKIP() << "no /dev/full";
  std::vector<float> v(1 << 16, 2.0f);
  HostTensor t{v.data(), TorchType::kFloat32, {1 << 16}, {}};
  FdSink sink{OwnedFd(fd)};
  absl::Status s = WritePtTensor(t, sink);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;  // ENOSPC
}

TEST(FailureInjection, FileSizeLimitMidwayLeavesNoCallDir) {
  // A write that fails midway on the real file system: RLIMIT_FSIZE makes
  // write(2) fail with EFBIG once a file reaches the limit.
  std::string root = TempRoot();
  std::vector<float> small(4, 1.0f);
  std::vector<float> big(1 << 16, 1.0f);  // 256 KiB
  HostTensor ts[3] = {{small.data(), TorchType::kFloat32, {4}, {}},
                      {big.data(), TorchType::kFloat32, {1 << 16}, {}},
                      {small.data(), TorchType::kFloat32, {4}, {}}};
  struct sigaction ign{}, old{};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGXFSZ, &ign, &old);
  rlimit saved;
  ::getrlimit(RLIMIT_FSIZE, &saved);
  rlimit lim = saved;
  lim.rlim_cur = 64 << 10;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &lim), 0);
  absl::Status npy =
      WriteBundle(root + "/h/rank0/call0", ts, SimpleMeta(BundleFormat::kNpy));
  absl::Status pt =
      WriteBundle(root + "/h/rank0/call1", ts, SimpleMeta(BundleFormat::kPt));
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::sigaction(SIGXFSZ, &old, nullptr);
  EXPECT_FALSE(npy.ok());
  EXPECT_FALSE(pt.ok());
  EXPECT_THAT(npy.message(), HasSubstr("input 1"));
  // Parents may exist; no call<N> and no temporary directory.
  EXPECT_TRUE(List(root + "/h/rank0").empty())
      << ::testing::PrintToString(List(root + "/h/rank0"));
}

TEST(FailureInjection, UnusableDirectory) {
  std::string root = TempRoot();
  { std::ofstream(root + "/file") << "x"; }
  float v[1] = {1};
  HostTensor t{v, TorchType::kFloat32, {1}, {}};
  absl::Status s =
      WriteBundle(root + "/file/h/call0", {&t, 1}, SimpleMeta(BundleFormat::kPt));
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(List(root), std::vector<std::string>{"file"});
  if (::geteuid() != 0) {  // root ignores permission bits
    ASSERT_EQ(::mkdir((root + "/ro").c_str(), 0555), 0);
    s = WriteBundle(root + "/ro/call0", {&t, 1}, SimpleMeta(BundleFormat::kPt));
    EXPECT_FALSE(s.ok());
    EXPECT_TRUE(List(root + "/ro").empty());
  }
}

}  // namespace
}  // namespace decomposed::capture
