// Replay conversion (bundle <-> decomposed) and the capturer end to end, as
// library APIs.
#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "decomposed/capture/bundle_reader.h"
#include "decomposed/capture/capturer.h"
#include "decomposed/capture/replay.h"
#include "decomposed/container/framing.h"
#include "decomposed/snapshot/inspect.h"
#include "decomposed/xla/literal_source.h"
#include "decomposed/xla/literal_decoder.h"
#include "decomposed/snapshot/producer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "nlohmann/json.hpp"

namespace decomposed::capture {
namespace {

using ::decomposed::test::ListDir;

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TempRoot() {
  std::string t = testing::TempDir() + "/capture_replay_XXXXXX";
  EXPECT_NE(::mkdtemp(t.data()), nullptr);
  return t;
}
bool Exists(const std::string& p) { return ::access(p.c_str(), F_OK) == 0; }

// HloModuleProto { name: "m" (1), entry_computation_name: "main" (2) }.
std::string ModuleFile(const std::string& root) {
  std::string path = root + "/model.hlo";
  std::ofstream(path, std::ios::binary) << std::string("\x0a\x01m\x12\x04main", 9);
  return path;
}

TEST(Replay, BundleToDecomposedAndBack) {
  std::string root = TempRoot();
  uint16_t bf[6] = {0x3f80, 0x4000, 0x4040, 0x4080, 0x40a0, 0x40c0};
  int64_t ids[2] = {-5, 1LL << 40};
  uint8_t flags[3] = {1, 0, 1};
  uint8_t f8[4] = {0x38, 0x40, 0x44, 0x48};
  HostTensor ts[4] = {{bf, TorchType::kBFloat16, {3, 2}, {1, 3}},  // transposed view
                      {ids, TorchType::kInt64, {2}, {}},
                      {flags, TorchType::kBool, {3}, {}},
                      {f8, TorchType::kFloat8E4M3FN, {2, 2}, {}}};
  for (BundleFormat f : {BundleFormat::kNpy, BundleFormat::kPt}) {
    std::string name(BundleFormatName(f));
    CallMeta m;
    m.hash = "h";
    m.format = f;
    std::string src = root + "/" + name + "/h/rank0/call0";
    ASSERT_TRUE(WriteBundle(src, ts, m).ok());
    std::string dec = root + "/" + name + ".decomposed";
    absl::Status s = BundleToDecomposed(src, ModuleFile(root), dec);
    ASSERT_TRUE(s.ok()) << s;
    // Region [1] holds four inputs with the mapped XLA types.
    absl::StatusOr<InspectReport> r = InspectFile(dec);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->inputs.size(), 4u);
    EXPECT_EQ(r->inputs[0].shape.ToString(), "BF16[3,2]{1,0}");
    EXPECT_EQ(r->inputs[1].shape.ToString(), "S64[2]{0}");
    EXPECT_EQ(r->inputs[2].shape.ToString(), "PRED[3]{0}");
    EXPECT_EQ(r->inputs[3].shape.ToString(), "F8E4M3FN[2,2]{1,0}");
    ASSERT_TRUE(r->output_count_offset.has_value());  // count 0 written
    EXPECT_TRUE(r->outputs.empty());
    ASSERT_TRUE(r->module.has_value());
    EXPECT_EQ(r->module->name, "m");
    for (BundleFormat back : {BundleFormat::kNpy, BundleFormat::kPt}) {
      std::string out = root + "/back_" + name + "_" +
                        std::string(BundleFormatName(back)) + "/x/rank0/call7";
      DecomposedToBundleOptions o;
      o.format = back;
      o.hash = "x";
      s = DecomposedToBundle(dec, out, o);
      ASSERT_TRUE(s.ok()) << s;
      absl::StatusOr<Bundle> a = OpenBundle(src);
      absl::StatusOr<Bundle> b = OpenBundle(out);
      ASSERT_TRUE(a.ok() && b.ok());
      ASSERT_TRUE(VerifyBundle(*b).ok()) << VerifyBundle(*b);
      EXPECT_EQ(b->meta["call_index"], 7);
      EXPECT_EQ(b->meta["hash"], "x");
      ASSERT_EQ(b->inputs.size(), 4u);
      for (size_t i = 0; i < 4; ++i) {
        auto x = LoadTensor(*a, i);
        auto y = LoadTensor(*b, i);
        ASSERT_TRUE(x.ok() && y.ok());
        EXPECT_EQ(x->dtype, y->dtype) << i;
        EXPECT_EQ(x->shape, y->shape) << i;
        EXPECT_EQ(x->bytes, y->bytes) << i;
      }
      EXPECT_EQ(ListDir(root + "/back_" + name + "_" +
                     std::string(BundleFormatName(back)) + "/x/rank0"),
                std::vector<std::string>{"call7"});
    }
  }
}

std::string B(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

// Literal bodies written by hand (docs/format.md §8), and the C-order bytes
// each must become in a bundle.
struct HandLiteral {
  std::string body;
  TorchType dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};
std::vector<HandLiteral> HandLiterals() {
  return {
      // U8[2,3]{0,1}: column-major 00 03 01 04 02 05 is [[0,1,2],[3,4,5]].
      {B({0x0a, 0x0c, 0x10, 0x06, 0x1a, 0x02, 0x02, 0x03, 0x2a, 0x04, 0x0a,
          0x02, 0x00, 0x01, 0x1a, 0x06, 0x00, 0x03, 0x01, 0x04, 0x02, 0x05}),
       TorchType::kUInt8, {2, 3}, B({0, 1, 2, 3, 4, 5})},
      // S32[3]{0} = [-1, 300, 0] as varints (-1 takes 10 bytes).
      {B({0x0a, 0x0a, 0x10, 0x04, 0x1a, 0x01, 0x03, 0x2a, 0x03, 0x0a, 0x01,
          0x00, 0x22, 0x0d, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
          0xff, 0x01, 0xac, 0x02, 0x00}),
       TorchType::kInt32, {3},
       B({0xff, 0xff, 0xff, 0xff, 0x2c, 0x01, 0, 0, 0, 0, 0, 0})},
      // U8[2,2,2]{0,2,1}: physical 00 04 01 05 02 06 03 07 is 0..7.
      {B({0x0a, 0x0e, 0x10, 0x06, 0x1a, 0x03, 0x02, 0x02, 0x02, 0x2a, 0x05,
          0x0a, 0x03, 0x00, 0x02, 0x01, 0x1a, 0x08, 0x00, 0x04, 0x01, 0x05,
          0x02, 0x06, 0x03, 0x07}),
       TorchType::kUInt8, {2, 2, 2}, B({0, 1, 2, 3, 4, 5, 6, 7})},
      // PRED[3]{0} = 01 00 05: non-zero is true.
      {B({0x0a, 0x0a, 0x10, 0x01, 0x1a, 0x01, 0x03, 0x2a, 0x03, 0x0a, 0x01,
          0x00, 0x12, 0x03, 0x01, 0x00, 0x05}),
       TorchType::kBool, {3}, B({1, 0, 1})},
  };
}

TEST(Replay, HandLiteralsStreamIntoBothFormats) {
  std::string root = TempRoot();
  PackRequest req;
  absl::StatusOr<std::string> snap =
      SnapshotFromModule(std::string("\x0a\x01m\x12\x04main", 9));
  ASSERT_TRUE(snap.ok());
  req.snapshot = *snap;
  const std::vector<HandLiteral> lits = HandLiterals();
  for (const HandLiteral& l : lits) {
    req.inputs.push_back(SerializedLiteral(l.body));
  }
  ASSERT_TRUE(PackToFile(req, root + "/hand.dec").ok());
  for (BundleFormat f : {BundleFormat::kNpy, BundleFormat::kPt}) {
    std::string out = root + "/" + std::string(BundleFormatName(f)) + "/call2";
    DecomposedToBundleOptions o;
    o.format = f;
    absl::Status s = DecomposedToBundle(root + "/hand.dec", out, o);
    ASSERT_TRUE(s.ok()) << s;
    absl::StatusOr<Bundle> b = OpenBundle(out);
    ASSERT_TRUE(b.ok()) << b.status();
    // VerifyBundle checks every file, the .pt's CRC-32 included.
    ASSERT_TRUE(VerifyBundle(*b).ok()) << VerifyBundle(*b);
    EXPECT_EQ(b->meta["call_index"], 2);
    ASSERT_EQ(b->inputs.size(), lits.size());
    for (size_t i = 0; i < lits.size(); ++i) {
      absl::StatusOr<LoadedTensor> t = LoadTensor(*b, i);
      ASSERT_TRUE(t.ok()) << t.status();
      EXPECT_EQ(t->dtype, &Torch(lits[i].dtype)) << i;
      EXPECT_EQ(t->shape, lits[i].shape) << i;
      EXPECT_EQ(t->bytes, lits[i].bytes) << i;
    }
  }
}

TEST(Replay, BundleWriterTakesKernelCopies) {
  // F32[100000] from an FdSource with CopyMethod::kKernel into an npy
  // tensor: past the source's window the decoder copies through the tensor
  // sink's fd. shape: 10 0b 1a 03 a0 8d 06 (100000) 2a 03 0a 01 00; f32s
  // (field 8, tag 42) of 400000 bytes (size varint 80 b5 18).
  std::string root = TempRoot();
  std::string data;
  for (int i = 0; i < 400000; ++i) data.push_back(static_cast<char>(i * 7));
  std::string head = B({0x0a, 0x0c, 0x10, 0x0b, 0x1a, 0x03, 0xa0, 0x8d, 0x06,
                        0x2a, 0x03, 0x0a, 0x01, 0x00, 0x42, 0x80, 0xb5, 0x18});
  std::string body = head + data;
  std::string path = root + "/body.bin";
  std::ofstream(path, std::ios::binary) << body;
  absl::StatusOr<std::unique_ptr<BundleWriter>> w =
      BundleWriter::Create(root + "/b/call0", BundleFormat::kNpy);
  ASSERT_TRUE(w.ok()) << w.status();
  OwnedFd fd;
  ASSERT_TRUE(OpenForReading(path, &fd).ok());
  FdSource src(std::move(fd), 4096);  // most bytes are past the window
  LiteralDecodeOptions d;
  d.copy = CopyMethod::kKernel;
  LiteralPath p;
  absl::Status s = DecodeLiteral(src, body.size(), Frame{"input", 0, "body"},
                                 (*w)->NextTensor("input 0"), d, nullptr, &p);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(p, LiteralPath::kKernelCopy);
  EXPECT_EQ((*w)->tensor_count(), 1u);
  CallMeta m;
  m.format = BundleFormat::kNpy;
  ASSERT_TRUE((*w)->Commit(m).ok());
  absl::StatusOr<Bundle> b = OpenBundle(root + "/b/call0");
  ASSERT_TRUE(b.ok()) << b.status();
  absl::StatusOr<LoadedTensor> t = LoadTensor(*b, 0);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype, &Torch(TorchType::kFloat32));
  EXPECT_EQ(t->bytes, data);
}

TEST(Replay, BundleWriterDroppedLeavesNothing) {
  std::string root = TempRoot();
  {
    absl::StatusOr<std::unique_ptr<BundleWriter>> w =
        BundleWriter::Create(root + "/b/call0", BundleFormat::kPt);
    ASSERT_TRUE(w.ok());
    uint8_t v[2] = {1, 2};
    ASSERT_TRUE((*w)->AddTensor({v, TorchType::kUInt8, {2}, {}}).ok());
  }
  EXPECT_TRUE(ListDir(root + "/b").empty());
}

TEST(Replay, NoXlaTypeWritesNoFile) {
  std::string root = TempRoot();
  uint32_t c[1] = {0};
  HostTensor t{c, TorchType::kComplex32, {1}, {}};
  CallMeta m;
  ASSERT_TRUE(WriteBundle(root + "/call0", {&t, 1}, m).ok());
  absl::Status s =
      BundleToDecomposed(root + "/call0", ModuleFile(root), root + "/x.dec");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_FALSE(Exists(root + "/x.dec"));
}

TEST(Replay, NoTorchTypeLeavesNoBundle) {
  std::string root = TempRoot();
  // A decomposed file whose input is S4 (no PyTorch dtype).
  PackRequest req;
  absl::StatusOr<std::string> snap =
      SnapshotFromModule(std::string("\x0a\x01m\x12\x04main", 9));
  ASSERT_TRUE(snap.ok());
  req.snapshot = *snap;
  uint8_t s4[2] = {1, 7};
  req.inputs.push_back(
      ArrayLiteral({s4, PrimitiveType::kS4, {2}, std::nullopt}));
  ASSERT_TRUE(PackToFile(req, root + "/s4.dec").ok());
  absl::Status s = DecomposedToBundle(root + "/s4.dec", root + "/b/call0");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("S4"));
  EXPECT_TRUE(ListDir(root + "/b").empty());
  // Corrupt input: an error, nothing left either.
  std::ofstream(root + "/junk.dec") << "not a snapshot";
  EXPECT_FALSE(DecomposedToBundle(root + "/junk.dec", root + "/b/call1").ok());
  EXPECT_TRUE(ListDir(root + "/b").empty());
}

TEST(Capturer, CaptureWritesTheSelectedBundle) {
  std::string root = TempRoot();
  auto cfg = ResolveSnapshotConfig(std::map<std::string, std::string>{
      {"VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_ENABLE", "1"},
      {"VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_CAPTURE_TOKEN", "12"},
      {"VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_FORMAT", "npy"}});
  ASSERT_TRUE(cfg.ok());
  CaptureBudget budget(4, [](std::string_view) {});
  SnapshotCapturer cap(*cfg, "neff1", {6, 2, 1}, root, &budget);
  float x[2] = {1, 2};
  HostTensor t{x, TorchType::kFloat32, {2}, {}};
  ForwardInfo prefill{{"a-1"}, {0}, true, 1, 0};
  ForwardInfo decode{{"pad?", "a-1"}, {3, 10}, false, 2, 1};
  auto d0 = cap.Capture(&prefill, {&t, 1});
  ASSERT_TRUE(d0.ok());
  EXPECT_FALSE(d0->capture);
  auto d1 = cap.Capture(&decode, {&t, 1});
  ASSERT_TRUE(d1.ok()) << d1.status();
  ASSERT_TRUE(d1->capture);
  EXPECT_EQ(d1->call_dir, root + "/neff1/rank6/call1");
  auto b = OpenBundle(d1->call_dir);
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(VerifyBundle(*b).ok());
  const auto& m = b->meta;
  EXPECT_EQ(m["selected_by"], nlohmann::json({"token"}));
  EXPECT_EQ(m["matches"], nlohmann::json::parse(
      R"([{"batch_index":1,"position":12,"reason":"token","request_id":"a-1"}])"));
  EXPECT_EQ(m["tp_rank"], 2);
  EXPECT_EQ(m["dp_rank"], 1);
  EXPECT_EQ(m["global_step"], 1);
  EXPECT_EQ(m["is_prompt"], false);
  EXPECT_EQ(m["format"], "npy");
  // A write failure is returned (the reference aborts the forward).
  ForwardInfo again = decode;
  HostTensor bad{x, TorchType::kComplex32, {1}, {}};
  auto d2 = cap.Capture(&again, {&bad, 1});
  EXPECT_EQ(d2.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(ListDir(root + "/neff1/rank6"), std::vector<std::string>{"call1"});
}

}  // namespace
}  // namespace decomposed::capture
