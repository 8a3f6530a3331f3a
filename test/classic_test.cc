// The classic mapping (classic.h), with protobuf as the oracle: for each
// classic HloSnapshot below, the module, inputs and outputs the mapping
// hands out (as byte ranges) must parse to exactly what protobuf's own
// parse of the file holds, with the file-level rules (merging repeated
// singular fields, tuple splitting, the single-tuple-parameter rule, wire
// types protobuf keeps as unknown fields) applied to protobuf's objects.
// Then the commands: unpack, verify and convert must all give the
// mapping's answer, for the classic file and for its decomposed conversion.
#include "decomposed/snapshot/classic.h"

#include <sys/stat.h>

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "decomposed/snapshot/convert.h"
#include "decomposed/snapshot/inspect.h"
#include "decomposed/snapshot/unpack.h"
#include "decomposed/snapshot/verify.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace decomposed {
namespace {

using ::decomposed::test::ListDir;
using ::decomposed::test::ReadFile;

// --- building snapshots ------------------------------------------------------

std::string Varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
  return s;
}
std::string Len(uint32_t field, const std::string& payload) {
  return Varint((field << 3) | 2) + Varint(payload.size()) + payload;
}

// F32 array literal as modern XLA's ToProto writes it.
xla::LiteralProto F32(std::vector<int64_t> dims, std::vector<float> values) {
  xla::LiteralProto l;
  auto* s = l.mutable_shape();
  s->set_element_type(xla::F32);
  for (int64_t d : dims) s->add_dimensions(d);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    s->mutable_layout()->add_minor_to_major(i);
  }
  for (size_t i = 0; i < dims.size(); ++i) s->add_is_dynamic_dimension(false);
  for (float v : values) l.add_f32s(v);
  return l;
}

xla::LiteralProto Tuple(const std::vector<xla::LiteralProto>& elems) {
  xla::LiteralProto t;
  t.mutable_shape()->set_element_type(xla::TUPLE);
  for (const auto& e : elems) {
    *t.mutable_shape()->add_tuple_shapes() = e.shape();
    *t.add_tuple_literals() = e;
  }
  return t;
}

// A module whose program has the given parameter shapes (no program shape
// at all with nullopt).
xla::HloModuleProto Module(
    std::optional<std::vector<xla::LiteralProto>> params) {
  xla::HloModuleProto m;
  m.set_name("classic");
  m.set_entry_computation_name("main");
  if (params) {
    auto* ps = m.mutable_host_program_shape();
    for (const auto& p : *params) *ps->add_parameters() = p.shape();
  }
  return m;
}

std::string Snapshot(const xla::HloModuleProto& m,
                     const std::vector<xla::LiteralProto>& args,
                     const std::optional<xla::LiteralProto>& result) {
  xla::HloSnapshot s;
  *s.mutable_hlo()->mutable_hlo_module() = m;
  for (const auto& a : args) *s.add_arguments() = a;
  if (result) *s.mutable_result() = *result;
  s.set_execution_platform("neuron");
  return s.SerializeAsString();
}

const xla::LiteralProto kA = F32({2}, {1, 2});
const xla::LiteralProto kB = F32({3}, {3, 4, 5});
const xla::LiteralProto kC = F32({2, 2}, {6, 7, 8, 9});

struct Case {
  std::string name;
  std::string bytes;
};

std::vector<Case> Cases() {
  std::vector<Case> c;
  c.push_back({"empty", Snapshot(Module(std::nullopt), {}, std::nullopt)});
  c.push_back({"arrays", Snapshot(Module({{kA, kB}}), {kA, kB}, kC)});
  c.push_back({"tuple_result",
               Snapshot(Module({{kA}}), {kA}, Tuple({kB, kC}))});
  c.push_back({"nested_tuple_result_splits_top_level_only",
               Snapshot(Module({{kA}}), {kA}, Tuple({kB, Tuple({kC})}))});
  // Two `result` records: protobuf merges them. Each is a one-element
  // tuple, so the merge is a two-element tuple (tuple_shapes and
  // tuple_literals are repeated: they concatenate).
  c.push_back({"repeated_tuple_result",
               Snapshot(Module({{kA}}), {kA}, std::nullopt) +
                   Len(3, Tuple({kB}).SerializeAsString()) +
                   Len(3, Tuple({kC}).SerializeAsString())});
  // An array result split over two records: its shape in the first, its
  // data in the second.
  {
    xla::LiteralProto shape_only = kB;
    shape_only.clear_f32s();
    xla::LiteralProto data_only;
    for (float v : kB.f32s()) data_only.add_f32s(v);
    c.push_back({"repeated_array_result",
                 Snapshot(Module({{kA}}), {kA}, std::nullopt) +
                     Len(3, shape_only.SerializeAsString()) +
                     Len(3, data_only.SerializeAsString())});
  }
  // The single-tuple-parameter rule: the one tuple argument is split.
  c.push_back({"single_tuple_parameter",
               Snapshot(Module({{Tuple({kA, kB})}}), {Tuple({kA, kB})}, kC)});
  // ... but not an array argument, nor two arguments, nor a tuple argument
  // of a program with two parameters.
  c.push_back({"single_tuple_parameter_array_argument",
               Snapshot(Module({{Tuple({kA})}}), {kA}, std::nullopt)});
  c.push_back({"single_tuple_parameter_two_arguments",
               Snapshot(Module({{Tuple({kA})}}), {kA, kB}, std::nullopt)});
  c.push_back({"two_parameters_tuple_argument",
               Snapshot(Module({{kA, kB}}), {Tuple({kA, kB})}, std::nullopt)});
  c.push_back({"no_program_shape_tuple_argument",
               Snapshot(Module(std::nullopt), {Tuple({kA})}, std::nullopt)});
  // The program shape merged from two module occurrences (two `hlo`
  // records): the second holds the one tuple parameter.
  {
    xla::HloSnapshot first;
    *first.mutable_hlo()->mutable_hlo_module() = Module(std::nullopt);
    xla::HloSnapshot second;
    *second.mutable_hlo()->mutable_hlo_module() = Module({{Tuple({kA, kC})}});
    *second.add_arguments() = Tuple({kA, kC});
    c.push_back({"merged_program_shape",
                 first.SerializeAsString() + second.SerializeAsString()});
  }
  // `arguments` and `result` with a varint wire type: unknown fields to
  // protobuf, ignored.
  c.push_back({"literal_fields_with_other_wire_types",
               Snapshot(Module({{kA}}), {kA}, std::nullopt) +
                   Varint((2 << 3) | 0) + Varint(7) + Varint((3 << 3) | 5) +
                   std::string(4, '\0')});
  return c;
}

// What the mapping should give, computed on protobuf's parse.
struct Expected {
  std::string module;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

Expected FromProtobuf(const std::string& bytes) {
  xla::HloSnapshot p;
  EXPECT_TRUE(p.ParseFromString(bytes));
  Expected e;
  e.module = p.hlo().hlo_module().SerializeAsString();
  const xla::HloModuleProto& m = p.hlo().hlo_module();
  bool split = m.has_host_program_shape() &&
               m.host_program_shape().parameters_size() == 1 &&
               m.host_program_shape().parameters(0).element_type() ==
                   xla::TUPLE &&
               p.arguments_size() == 1 &&
               p.arguments(0).shape().element_type() == xla::TUPLE;
  if (split) {
    for (const auto& t : p.arguments(0).tuple_literals()) {
      e.inputs.push_back(t.SerializeAsString());
    }
  } else {
    for (const auto& a : p.arguments()) e.inputs.push_back(a.SerializeAsString());
  }
  if (p.has_result()) {
    if (p.result().shape().element_type() == xla::TUPLE) {
      for (const auto& t : p.result().tuple_literals()) {
        e.outputs.push_back(t.SerializeAsString());
      }
    } else {
      e.outputs.push_back(p.result().SerializeAsString());
    }
  }
  return e;
}

// Parses the concatenation of `ranges` of `data` with protobuf and
// re-serializes it, so that equal messages compare equal.
template <class Message>
std::string Reserialized(const std::string& data,
                         std::span<const ByteRange> ranges) {
  std::string cat;
  for (const ByteRange& r : ranges) cat += data.substr(r.offset, r.length);
  Message m;
  EXPECT_TRUE(m.ParseFromString(cat));
  return m.SerializeAsString();
}

TEST(ClassicMapping, AgreesWithProtobufOnEveryCase) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    Expected want = FromProtobuf(c.bytes);
    MemorySource src(c.bytes);
    absl::StatusOr<ClassicSnapshot> snap =
        IndexClassicSnapshot(src, {0, c.bytes.size()}, Frame{"snapshot"});
    ASSERT_TRUE(snap.ok()) << snap.status();
    EXPECT_EQ(Reserialized<xla::HloModuleProto>(c.bytes, snap->module),
              want.module);
    std::vector<std::string> inputs;
    absl::Status s = ForEachClassicInput(
        src, *snap, Frame{"snapshot"},
        [](int64_t i) { return Frame{"input", i, "body"}; },
        [&](std::span<const ByteRange> lit, int64_t i) {
          EXPECT_EQ(i, static_cast<int64_t>(inputs.size()));
          inputs.push_back(Reserialized<xla::LiteralProto>(c.bytes, lit));
          return absl::OkStatus();
        });
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(inputs, want.inputs);
    absl::StatusOr<std::vector<LiteralRanges>> outs =
        ClassicOutputs(src, *snap, Frame{"result"});
    ASSERT_TRUE(outs.ok()) << outs.status();
    std::vector<std::string> outputs;
    for (const LiteralRanges& o : *outs) {
      outputs.push_back(Reserialized<xla::LiteralProto>(c.bytes, o));
    }
    EXPECT_EQ(outputs, want.outputs);
    // The header: everything but the literals, as protobuf sees it.
    std::string header;
    ASSERT_TRUE(ClassicHeader(src, {0, c.bytes.size()}, Frame{"snapshot"},
                              &header)
                    .ok());
    xla::HloSnapshot h, full;
    ASSERT_TRUE(h.ParseFromString(header));
    ASSERT_TRUE(full.ParseFromString(c.bytes));
    full.clear_arguments();
    full.clear_result();
    full.DiscardUnknownFields();
    h.DiscardUnknownFields();
    EXPECT_EQ(h.SerializeAsString(), full.SerializeAsString());
  }
}

TEST(ClassicMapping, AcceptsEveryPrefixProtobufAccepts) {
  // The walk reads the top-level records and the hlo records, never literal
  // data: every prefix protobuf parses, the walk accepts; a prefix that cuts
  // a top-level record is refused by both.
  std::string good = Snapshot(Module({{kA}}), {kA}, kC);
  size_t refused = 0;
  for (size_t t = 0; t <= good.size(); ++t) {
    std::string cut = good.substr(0, t);
    xla::HloSnapshot p;
    bool pb = p.ParseFromString(cut);
    MemorySource src(cut);
    absl::StatusOr<ClassicSnapshot> snap =
        IndexClassicSnapshot(src, {0, cut.size()}, Frame{"snapshot"});
    if (pb) {
      EXPECT_TRUE(snap.ok()) << "cut at " << t << ": " << snap.status();
    } else if (!snap.ok()) {
      ++refused;
      EXPECT_THAT(std::string(snap.status().message()),
                  ::testing::HasSubstr("(at byte "));
    }
  }
  EXPECT_GT(refused, good.size() / 2);
  // A top-level record running past the end.
  std::string bad = good + Len(2, "xyz").substr(0, 3);
  MemorySource src(bad);
  EXPECT_FALSE(
      IndexClassicSnapshot(src, {0, bad.size()}, Frame{"snapshot"}).ok());
  xla::HloSnapshot p;
  EXPECT_FALSE(p.ParseFromString(bad));
}

// --- the commands give the mapping's answer --------------------------------------

class ClassicCommands : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/classic_test_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ::system(("rm -rf '" + dir_ + "'").c_str());
    ::mkdir(dir_.c_str(), 0755);
  }
  void TearDown() override { ::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string Write(const std::string& name, const std::string& data) {
    std::string p = dir_ + "/" + name;
    std::ofstream(p, std::ios::binary) << data;
    return p;
  }
  // Unpacks `path` into <dir>/<out>/ and returns {file name: contents}.
  std::vector<std::pair<std::string, std::string>> UnpackAll(
      const std::string& path, SnapshotType type, const std::string& out) {
    UnpackOptions o;
    o.snapshot_type = type;
    o.dump_snapshot_outputs = true;
    o.output_prefix = dir_ + "/" + out + "/";
    absl::Status s = Unpack(path, o);
    EXPECT_TRUE(s.ok()) << s;
    std::vector<std::pair<std::string, std::string>> files;
    for (const std::string& f : ListDir(o.output_prefix)) {
      if (f == "model.hlo") continue;  // compared separately
      files.push_back({f, ReadFile(o.output_prefix + f)});
    }
    return files;
  }
  std::string dir_;
};

TEST_F(ClassicCommands, UnpackVerifyConvertAndInspectAgree) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    Expected want = FromProtobuf(c.bytes);
    if (want.outputs.empty()) continue;  // unpack --dump needs a result
    bool nested = c.name.find("nested") != std::string::npos;
    std::string classic = Write(c.name + ".pb", c.bytes);
    // Verify: the mapping's counts, and no problem unless an output is a
    // tuple (one .npy holds one array).
    VerifyOptions vo;
    vo.snapshot_type = SnapshotType::kClassic;
    absl::StatusOr<VerifyReport> v = VerifyFile(classic, vo);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->inputs, want.inputs.size());
    ASSERT_TRUE(v->outputs.has_value());
    EXPECT_EQ(*v->outputs, want.outputs.size());
    EXPECT_EQ(v->valid(), !nested);
    if (nested) continue;
    // Unpack: one file per input and output of the mapping.
    auto from_classic = UnpackAll(classic, SnapshotType::kClassic, c.name + "_a");
    EXPECT_EQ(from_classic.size(), want.inputs.size() + want.outputs.size());
    // Convert to decomposed: the same lists, so the same files.
    std::string dec = dir_ + "/" + c.name + ".dhs";
    absl::Status s = ConvertClassicToDecomposed(classic, dec);
    ASSERT_TRUE(s.ok()) << s;
    auto from_decomposed = UnpackAll(dec, SnapshotType::kDecomposed, c.name + "_b");
    EXPECT_EQ(from_classic, from_decomposed);
    vo.snapshot_type = SnapshotType::kDecomposed;
    v = VerifyFile(dec, vo);
    ASSERT_TRUE(v.ok());
    EXPECT_TRUE(v->valid());
    EXPECT_EQ(v->inputs, want.inputs.size());
    EXPECT_EQ(*v->outputs, want.outputs.size());
    absl::StatusOr<InspectReport> in = InspectDecomposedFile(dec);
    ASSERT_TRUE(in.ok()) << in.status();
    EXPECT_EQ(in->inputs.size(), want.inputs.size());
    EXPECT_EQ(in->outputs.size(), want.outputs.size());
    // And back: the classic file protobuf reads holds the same literals,
    // merged fields merged.
    std::string back = dir_ + "/" + c.name + ".back.pb";
    s = ConvertDecomposedToClassic(dec, back);
    ASSERT_TRUE(s.ok()) << s;
    Expected again = FromProtobuf(ReadFile(back));
    EXPECT_EQ(again.inputs, want.inputs);
    EXPECT_EQ(again.outputs, want.outputs);
    EXPECT_EQ(again.module, want.module);
  }
}

TEST_F(ClassicCommands, ARepeatedResultMergesInEveryCommand) {
  // The rule of classic.h: protobuf merges, so every command merges.
  std::string bytes = Snapshot(Module({{kA}}), {kA}, std::nullopt) +
                      Len(3, Tuple({kB}).SerializeAsString()) +
                      Len(3, Tuple({kC}).SerializeAsString());
  std::string classic = Write("r.pb", bytes);
  auto files = UnpackAll(classic, SnapshotType::kClassic, "u");
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].first, "snapshot_output0.npy");
  EXPECT_EQ(files[1].first, "snapshot_output1.npy");
  std::string dec = dir_ + "/r.dhs";
  ASSERT_TRUE(ConvertClassicToDecomposed(classic, dec).ok());
  VerifyOptions vo;
  absl::StatusOr<VerifyReport> v = VerifyFile(classic, vo);
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->valid());
  EXPECT_EQ(*v->outputs, 2u);
  absl::StatusOr<InspectReport> in = InspectDecomposedFile(dec);
  ASSERT_TRUE(in.ok());
  ASSERT_EQ(in->outputs.size(), 2u);
  EXPECT_EQ(in->outputs[0].shape.ToString(), "F32[3]{0}");
  EXPECT_EQ(in->outputs[1].shape.ToString(), "F32[2,2]{1,0}");
}

}  // namespace
}  // namespace decomposed
