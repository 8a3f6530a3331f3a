// Bundle reader: round trips through WriteBundle for every dtype and both
// formats, listing, incomplete bundles, and meta.json/file mismatches.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "decomposed/capture/bundle_reader.h"
#include "decomposed/capture/bundle_writer.h"
#include "decomposed/npy/stored_zip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace decomposed::capture {
namespace {

using ::testing::HasSubstr;

std::string TempRoot() {
  std::string t = testing::TempDir() + "/capture_reader_XXXXXX";
  EXPECT_NE(::mkdtemp(t.data()), nullptr);
  return t;
}

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
void Spit(const std::string& path, const std::string& s) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << s;
}

CallMeta Meta(BundleFormat f, int64_t call) {
  CallMeta m;
  m.hash = "h";
  m.format = f;
  m.call_index = call;
  m.selected_by = {"call_index"};
  return m;
}

TEST(Reader, RoundTripEveryDtypeBothFormats) {
  std::string root = TempRoot();
  int64_t call = 0;
  for (const TorchDtype& d : kTorchDtypes) {
    for (BundleFormat f : {BundleFormat::kNpy, BundleFormat::kPt}) {
      if (f == BundleFormat::kNpy && d.npy_descr.empty()) continue;
      // Two inputs: a transposed (strided) 3x4 view and a scalar.
      const int64_t es = d.element_bytes;
      std::vector<uint8_t> phys(12 * es), scalar(es);
      for (size_t k = 0; k < phys.size(); ++k) phys[k] = static_cast<uint8_t>(k * 7 + 1);
      for (size_t k = 0; k < scalar.size(); ++k) scalar[k] = static_cast<uint8_t>(200 + k);
      if (d.attr == "bool") {
        for (auto& b : phys) b &= 1;
        scalar[0] = 1;
      }
      HostTensor ts[2] = {{phys.data(), d.type, {3, 4}, {1, 3}},
                          {scalar.data(), d.type, {}, {}}};
      std::string dir = root + "/h/rank2/call" + std::to_string(call);
      ASSERT_TRUE(WriteBundle(dir, ts, Meta(f, call)).ok()) << d.name;
      absl::StatusOr<Bundle> b = OpenBundle(dir);
      ASSERT_TRUE(b.ok()) << b.status();
      ASSERT_TRUE(VerifyBundle(*b).ok()) << d.name << VerifyBundle(*b);
      ASSERT_EQ(b->inputs.size(), 2u);
      absl::StatusOr<LoadedTensor> t0 = LoadTensor(*b, 0);
      ASSERT_TRUE(t0.ok()) << t0.status();
      EXPECT_EQ(t0->dtype, &d);
      EXPECT_EQ(t0->shape, (std::vector<int64_t>{3, 4}));
      std::string want;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j)
          want.append(reinterpret_cast<const char*>(&phys[(j * 3 + i) * es]), es);
      EXPECT_EQ(t0->bytes, want) << d.name;
      absl::StatusOr<LoadedTensor> t1 = LoadTensor(*b, 1);
      ASSERT_TRUE(t1.ok());
      EXPECT_EQ(t1->bytes,
                std::string(reinterpret_cast<const char*>(scalar.data()), es));
      ++call;
    }
  }
  absl::StatusOr<std::vector<BundleRef>> refs = ListBundles(root);
  ASSERT_TRUE(refs.ok());
  ASSERT_EQ(refs->size(), static_cast<size_t>(call));
  for (int64_t i = 0; i < call; ++i) {
    EXPECT_EQ((*refs)[i].call_index, i);  // numeric, not lexical, order
    EXPECT_EQ((*refs)[i].global_rank, 2);
    EXPECT_EQ((*refs)[i].hash, "h");
    EXPECT_TRUE((*refs)[i].complete);
  }
}

class Broken : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = TempRoot();
    for (int i = 0; i < 6; ++i) v_[i] = static_cast<float>(i);
    HostTensor t{v_, TorchType::kFloat32, {2, 3}, {}};
    npy_ = root_ + "/h/rank0/call0";
    pt_ = root_ + "/h/rank0/call1";
    ASSERT_TRUE(WriteBundle(npy_, {&t, 1}, Meta(BundleFormat::kNpy, 0)).ok());
    ASSERT_TRUE(WriteBundle(pt_, {&t, 1}, Meta(BundleFormat::kPt, 1)).ok());
  }
  absl::Status Check(const std::string& dir) {
    absl::StatusOr<Bundle> b = OpenBundle(dir);
    return b.ok() ? VerifyBundle(*b) : b.status();
  }
  void EditMeta(const std::string& dir,
                const std::function<void(nlohmann::json&)>& f) {
    nlohmann::json j = nlohmann::json::parse(Slurp(dir + "/meta.json"));
    f(j);
    Spit(dir + "/meta.json", j.dump(2));
  }
  std::string root_, npy_, pt_;
  float v_[6];
};

TEST_F(Broken, IncompleteWithoutMeta) {
  ::unlink((npy_ + "/meta.json").c_str());
  absl::StatusOr<Bundle> b = OpenBundle(npy_);
  EXPECT_EQ(b.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(b.status().message(), HasSubstr("incomplete"));
  auto refs = ListBundles(root_);
  ASSERT_TRUE(refs.ok());
  ASSERT_EQ(refs->size(), 2u);
  EXPECT_FALSE((*refs)[0].complete);
  EXPECT_TRUE((*refs)[1].complete);
}

TEST_F(Broken, HiddenTempDirsAndStrayNamesIgnored) {
  ASSERT_EQ(::mkdir((root_ + "/h/rank0/.call7.tmp.abcdef").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((root_ + "/h/rank0/callx").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((root_ + "/h/rank0/call01").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((root_ + "/h/notrank").c_str(), 0755), 0);
  auto refs = ListBundles(root_);
  ASSERT_TRUE(refs.ok());
  EXPECT_EQ(refs->size(), 2u);
  EXPECT_FALSE(ListBundles(root_ + "/nope").ok());
}

// bundle ls takes the root or any level below it, a call directory
// included (one `bundle from-decomposed -o` wrote, whatever its name).
TEST_F(Broken, ListingBelowTheRoot) {
  for (const std::string& dir : {root_ + "/h", root_ + "/h/rank0", root_ + "/h/rank0/"}) {
    auto refs = ListBundles(dir);
    ASSERT_TRUE(refs.ok()) << dir;
    ASSERT_EQ(refs->size(), 2u) << dir;
    EXPECT_EQ((*refs)[1].path, npy_.substr(0, npy_.size() - 1) + "1") << dir;
    EXPECT_EQ((*refs)[1].hash, "h") << dir;
  }
  auto one = ListBundles(pt_);
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].path, pt_);
  EXPECT_EQ((*one)[0].hash, "h");
  EXPECT_EQ((*one)[0].call_index, 1);
  EXPECT_TRUE((*one)[0].complete);
  // Any name: identity from meta.json.
  HostTensor t{v_, TorchType::kFloat32, {2, 3}, {}};
  const std::string odd = root_ + "/somewhere";
  ASSERT_TRUE(WriteBundle(odd, {&t, 1}, Meta(BundleFormat::kNpy, 7)).ok());
  one = ListBundles(odd);
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].call_index, 7);
  EXPECT_EQ((*one)[0].hash, "h");
  // Nothing there: an empty list.
  ASSERT_EQ(::mkdir((root_ + "/empty").c_str(), 0755), 0);
  one = ListBundles(root_ + "/empty");
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(one->empty());
}

TEST_F(Broken, DtypeMismatch) {
  for (const std::string& dir : {npy_, pt_}) {
    EditMeta(dir, [](nlohmann::json& j) { j["inputs"][0]["dtype"] = "torch.int32"; });
    absl::Status s = Check(dir);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << dir;
    EXPECT_THAT(s.message(), HasSubstr("torch.int32"));
  }
}

TEST_F(Broken, ShapeMismatch) {
  for (const std::string& dir : {npy_, pt_}) {
    EditMeta(dir, [](nlohmann::json& j) { j["inputs"][0]["shape"] = {3, 2}; });
    absl::Status s = Check(dir);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("shape"));
  }
}

TEST_F(Broken, CountMismatch) {
  EditMeta(npy_, [](nlohmann::json& j) {
    j["inputs"].push_back({{"index", 1}, {"dtype", "torch.float32"}, {"shape", {1}}});
  });
  EXPECT_FALSE(Check(npy_).ok());  // tensor1.npy missing
  EditMeta(pt_, [](nlohmann::json& j) { j["inputs"] = nlohmann::json::array(); });
  absl::Status s = Check(pt_);
  EXPECT_THAT(s.message(), HasSubstr("tensor0.pt is not listed"));
}

TEST_F(Broken, TruncatedAndExtendedFiles) {
  std::string f = npy_ + "/tensor0.npy";
  std::string good = Slurp(f);
  Spit(f, good.substr(0, good.size() - 1));
  EXPECT_THAT(Check(npy_).message(), HasSubstr("data bytes"));
  Spit(f, good + "x");
  EXPECT_THAT(Check(npy_).message(), HasSubstr("data bytes"));
  std::string p = pt_ + "/tensor0.pt";
  std::string pg = Slurp(p);
  for (size_t cut : {size_t{0}, size_t{10}, pg.size() / 2, pg.size() - 1}) {
    Spit(p, pg.substr(0, cut));
    EXPECT_FALSE(Check(pt_).ok()) << cut;
  }
}

TEST_F(Broken, EveryCorruptByteOfPtIsCaughtOrHarmless) {
  // Flip each byte of the .pt in turn: the reader must never crash and must
  // either reject the file or return 24 bytes (a flip inside the tensor
  // data or in padding is harmless to it).
  std::string p = pt_ + "/tensor0.pt";
  std::string pg = Slurp(p);
  for (size_t i = 0; i < pg.size(); ++i) {
    std::string bad = pg;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    Spit(p, bad);
    absl::StatusOr<Bundle> b = OpenBundle(pt_);
    ASSERT_TRUE(b.ok());
    absl::StatusOr<LoadedTensor> t = LoadTensor(*b, 0);
    if (t.ok()) {
      EXPECT_EQ(t->bytes.size(), 24u);
    }
  }
}

TEST_F(Broken, Zip64PtIsRead) {
  HostTensor t{v_, TorchType::kFloat32, {2, 3}, {}};
  AtomicFileSink out;
  ASSERT_TRUE(out.Open(pt_ + "/tensor0.pt").ok());
  PtWriteOptions o;
  o.archive_name = "tensor0";
  o.zip.force_zip64 = true;
  o.zip.alignment = 1;  // no padding field: another valid layout
  ASSERT_TRUE(WritePtTensor(t, out, o).ok());
  ASSERT_TRUE(out.Commit().ok());
  absl::StatusOr<Bundle> b = OpenBundle(pt_);
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(VerifyBundle(*b).ok()) << VerifyBundle(*b);
  auto x = LoadTensor(*b, 0);
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(x->bytes, std::string(reinterpret_cast<const char*>(v_), 24));
}

TEST_F(Broken, RandomCorruptionsNeverCrash) {
  // Random multi-byte overwrites and truncations of every file of both
  // bundles: each read either fails with a status or returns exactly the
  // byte size meta.json declares.
  uint32_t seed = 12345;
  auto rnd = [&] {
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
  };
  for (const std::string& dir : {npy_, pt_}) {
    for (const std::string& file : {std::string("meta.json"),
                                    dir == npy_ ? std::string("tensor0.npy")
                                                : std::string("tensor0.pt")}) {
      const std::string path = dir + "/" + file;
      const std::string good = Slurp(path);
      for (int round = 0; round < 300; ++round) {
        std::string bad = good;
        int edits = 1 + rnd() % 4;
        for (int e = 0; e < edits; ++e) bad[rnd() % bad.size()] = static_cast<char>(rnd());
        if (rnd() % 4 == 0) bad.resize(rnd() % bad.size());
        Spit(path, bad);
        absl::StatusOr<Bundle> b = OpenBundle(dir);
        if (!b.ok()) continue;
        (void)VerifyBundle(*b);
        for (size_t i = 0; i < b->inputs.size() && i < 4; ++i) {
          absl::StatusOr<LoadedTensor> t = LoadTensor(*b, i);
          if (t.ok()) {
            EXPECT_EQ(t->bytes.size(), b->inputs[i].byte_size);
          }
        }
      }
      Spit(path, good);
    }
  }
}

// Replaces the bundle's tensor0.pt with a stored zip whose data.pkl is
// `pickle` (hostile pickles for the unpickler).
void WritePtWithPickle(const std::string& dir, const std::string& pickle) {
  std::string bytes;
  StringSink sink(&bytes);
  StoredZipWriter<StringSink> zip(sink);
  ASSERT_TRUE(zip.AddEntry("tensor0/data.pkl", pickle).ok());
  ASSERT_TRUE(zip.Finish().ok());
  Spit(dir + "/tensor0.pt", bytes);
}

TEST_F(Broken, PickleCannotPopBelowMark) {
  // None None MARK REDUCE TUPLE STOP: REDUCE would take the two items below
  // the MARK, leaving the MARK above the stack top (TUPLE then built a
  // range with begin > end).
  WritePtWithPickle(pt_, std::string("NN(Rt.", 6));
  absl::Status s = Check(pt_);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("REDUCE"));
  // MARK BINPERSID and MARK BINPUT reach below the MARK too.
  WritePtWithPickle(pt_, std::string("N(Q.", 4));
  EXPECT_THAT(Check(pt_).message(), HasSubstr("BINPERSID"));
  WritePtWithPickle(pt_, std::string("N(q\x01.", 5));
  EXPECT_THAT(Check(pt_).message(), HasSubstr("memo"));
}

TEST_F(Broken, PickleNestingIsBounded) {
  // None, then a million TUPLE1s: a chain of one-tuples a million deep, whose
  // recursive release overflowed the stack.
  std::string deep = "N" + std::string(1000000, '\x85') + ".";
  WritePtWithPickle(pt_, deep);
  absl::Status s = Check(pt_);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("nested deeper"));
  // BINPERSID nests too.
  WritePtWithPickle(pt_, "N" + std::string(1000000, 'Q') + ".");
  EXPECT_THAT(Check(pt_).message(), HasSubstr("nested deeper"));
}

TEST_F(Broken, PtStorageOffsetCannotWrapAround) {
  // A storage offset of 2^62 float32 elements is 2^64 bytes: the byte offset
  // wrapped to 0 and the tensor was read from the start of the storage.
  const TorchDtype* f32 = FindTorchDtype("torch.float32");
  ASSERT_NE(f32, nullptr);
  std::string pkl = TorchTensorPickle(*f32, {2, 3}, "0");
  const std::string zero_offset("QK\x00", 3);
  size_t at = pkl.find(zero_offset);
  ASSERT_NE(at, std::string::npos);
  std::string huge("Q\x8a\x08", 3);
  for (int i = 0; i < 8; ++i) huge.push_back(i == 7 ? '\x40' : '\x00');
  pkl.replace(at, zero_offset.size(), huge);
  std::string bytes;
  StringSink sink(&bytes);
  StoredZipWriter<StringSink> zip(sink);
  ASSERT_TRUE(zip.AddEntry("tensor0/data.pkl", pkl).ok());
  ASSERT_TRUE(zip.AddEntry("tensor0/data/0",
                           std::string(reinterpret_cast<const char*>(v_), 24))
                  .ok());
  ASSERT_TRUE(zip.Finish().ok());
  Spit(pt_ + "/tensor0.pt", bytes);
  absl::Status s = Check(pt_);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("storage offset"));
}

TEST_F(Broken, ZipCentralDirectorySizeIsBounded) {
  // A 64 MiB .pt (sparse) whose end record claims a central directory of
  // the whole file: it was read into memory whole before being rejected.
  const std::string p = pt_ + "/tensor0.pt";
  const uint64_t size = uint64_t{64} << 20;
  std::string eocd("PK\x05\x06", 4);
  eocd += std::string(6, '\0');
  eocd += std::string("\x01\x00", 2);  // one entry
  const uint32_t cd_size = static_cast<uint32_t>(size - 22);
  for (int i = 0; i < 4; ++i) eocd.push_back(static_cast<char>(cd_size >> (8 * i)));
  eocd += std::string(4, '\0');        // central directory at byte 0
  eocd += std::string(2, '\0');        // no comment
  ASSERT_EQ(eocd.size(), 22u);
  {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.seekp(static_cast<std::streamoff>(size - 22));
    out << eocd;
  }
  absl::Status s = Check(pt_);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(s.message(), HasSubstr("central directory"));
}

TEST_F(Broken, TensorFileThatIsNotARegularFileIsRefused) {
  // A FIFO in place of tensor0.npy blocked the open forever.
  const std::string f = npy_ + "/tensor0.npy";
  ::unlink(f.c_str());
  ASSERT_EQ(::mkfifo(f.c_str(), 0600), 0);
  absl::Status s = Check(npy_);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("not a regular file"));
}

TEST_F(Broken, BadMetaJson) {
  struct Case { std::function<void(nlohmann::json&)> edit; std::string msg; };
  const Case cases[] = {
      {[](nlohmann::json& j) { j["schema"] = 2; }, "schema"},
      {[](nlohmann::json& j) { j["format"] = "npz"; }, "npz"},
      {[](nlohmann::json& j) { j.erase("inputs"); }, "inputs"},
      {[](nlohmann::json& j) { j["inputs"][0]["index"] = 1; }, "index"},
      {[](nlohmann::json& j) { j["inputs"][0]["dtype"] = "torch.foo"; }, "torch.foo"},
      {[](nlohmann::json& j) { j["inputs"][0]["shape"] = {-1}; }, "dimension"},
  };
  for (const Case& c : cases) {
    SetUp();
    EditMeta(npy_, c.edit);
    absl::Status s = Check(npy_);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr(c.msg));
  }
  Spit(npy_ + "/meta.json", "{not json");
  EXPECT_FALSE(Check(npy_).ok());
}

}  // namespace
}  // namespace decomposed::capture
