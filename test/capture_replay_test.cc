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
#include "decomposed/xla/literal_encoder.h"
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
  HostTensor ts[4] = {{bf, "torch.bfloat16", {3, 2}, {1, 3}},  // transposed view
                      {ids, "torch.int64", {2}, {}},
                      {flags, "torch.bool", {3}, {}},
                      {f8, "torch.float8_e4m3fn", {2, 2}, {}}};
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

TEST(Replay, NoXlaTypeWritesNoFile) {
  std::string root = TempRoot();
  uint32_t c[1] = {0};
  HostTensor t{c, "torch.complex32", {1}, {}};
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
  req.inputs.push_back(ArrayBody({s4, PrimitiveType::kS4, {2}, std::nullopt}));
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
  HostTensor t{x, "torch.float32", {2}, {}};
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
  HostTensor bad{x, "torch.complex32", {1}, {}};
  auto d2 = cap.Capture(&again, {&bad, 1});
  EXPECT_EQ(d2.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(ListDir(root + "/neff1/rank6"), std::vector<std::string>{"call1"});
}

}  // namespace
}  // namespace decomposed::capture
