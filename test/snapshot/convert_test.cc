#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "decomposed/container/framing.h"
#include "decomposed/snapshot/convert.h"
#include "decomposed/snapshot/producer.h"
#include "decomposed/status.h"
#include "decomposed/proto/hlo.pb.h"
#include "gtest/gtest.h"

namespace decomposed {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/convert_test_" + name;
}
bool Exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}
void WriteFile(const std::string& path, std::string_view data) {
  std::ofstream(path, std::ios::binary).write(data.data(), data.size());
}
std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A literal as modern XLA's ToProto writes it.
xla::LiteralProto F32Literal(std::vector<int64_t> dims,
                             std::vector<float> values) {
  xla::LiteralProto l;
  auto* s = l.mutable_shape();
  s->set_element_type(xla::F32);
  for (int64_t d : dims) s->add_dimensions(d);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    s->mutable_layout()->add_minor_to_major(i);
  }
  s->mutable_layout()->set_tail_padding_alignment_in_elements(1);
  for (size_t i = 0; i < dims.size(); ++i) s->add_is_dynamic_dimension(false);
  for (float v : values) l.add_f32s(v);
  return l;
}

xla::LiteralProto TupleOf(const std::vector<xla::LiteralProto>& elems) {
  xla::LiteralProto t;
  t.mutable_shape()->set_element_type(xla::TUPLE);
  for (const auto& e : elems) {
    *t.mutable_shape()->add_tuple_shapes() = e.shape();
    *t.add_tuple_literals() = e;
  }
  return t;
}

xla::HloModuleProto Module(const std::vector<xla::ShapeProto>& params,
                           const xla::ShapeProto& result) {
  xla::HloModuleProto m;
  m.set_name("conv");
  m.set_entry_computation_name("main");
  m.set_id(42);
  auto* ps = m.mutable_host_program_shape();
  for (const auto& p : params) *ps->add_parameters() = p;
  *ps->mutable_result() = result;
  return m;
}

xla::ShapeProto TupleShape(const std::vector<xla::LiteralProto>& elems) {
  return TupleOf(elems).shape();
}

// Writes a decomposed file from protobuf literals.
void WriteDecomposed(const std::string& path, const xla::HloModuleProto& m,
                     const std::vector<xla::LiteralProto>& inputs,
                     const std::optional<std::vector<xla::LiteralProto>>&
                         outputs) {
  std::vector<std::unique_ptr<LiteralSource>> owned;
  std::vector<LiteralSource*> in, out;
  for (const auto& l : inputs) {
    owned.push_back(ProtoLiteral(l));
    in.push_back(owned.back().get());
  }
  if (outputs) {
    for (const auto& l : *outputs) {
      owned.push_back(ProtoLiteral(l));
      out.push_back(owned.back().get());
    }
  }
  AtomicFileSink sink;
  ASSERT_TRUE(sink.Open(path).ok());
  DecomposedWriteOptions o;
  o.write_output_count = outputs.has_value();
  DecomposedProducer<AtomicFileSink> w(sink, o);
  ASSERT_TRUE(w.WriteModule(m.SerializeAsString()).ok());
  ASSERT_TRUE(w.WriteInputs(in).ok());
  if (outputs) {
    ASSERT_TRUE(w.WriteOutputs(out).ok());
  }
  ASSERT_TRUE(w.Finish().ok());
  ASSERT_TRUE(sink.Commit().ok());
}

xla::HloSnapshot ReadClassic(const std::string& path) {
  xla::HloSnapshot s;
  EXPECT_TRUE(s.ParseFromString(ReadFile(path)));
  return s;
}

// Reads a decomposed file's literals with the foundation reader.
struct Blocks {
  xla::HloSnapshot header;
  std::vector<std::string> inputs;
  std::optional<std::vector<std::string>> outputs;
};
Blocks ReadDecomposed(const std::string& path) {
  Blocks b;
  std::string data = ReadFile(path);
  MemorySource src(data);
  DecomposedReader r(src);
  std::string snap;
  EXPECT_TRUE(r.ReadHeader(&snap).ok());
  EXPECT_TRUE(b.header.ParseFromString(snap));
  EXPECT_TRUE(r.StartInputs().ok());
  ElementInfo e;
  while (*r.NextInput(&e)) {
    b.inputs.push_back(data.substr(e.offset, e.length));
  }
  auto m = r.StartOutputs();
  EXPECT_TRUE(m.ok());
  if (m->has_value()) {
    b.outputs.emplace();
    while (*r.NextOutput(&e)) {
      b.outputs->push_back(data.substr(e.offset, e.length));
    }
  }
  EXPECT_TRUE(r.Finish().ok());
  return b;
}

TEST(Convert, DecomposedToClassicTupleResult) {
  auto a = F32Literal({2}, {1, 2});
  auto b = F32Literal({}, {3});
  auto o0 = F32Literal({2}, {2, 4});
  auto o1 = F32Literal({1}, {9});
  auto m = Module({a.shape(), b.shape()}, TupleShape({o0, o1}));
  std::string in = TempPath("d2c.dhs"), out = TempPath("d2c.pb");
  WriteDecomposed(in, m, {a, b}, std::vector{o0, o1});
  absl::Status s = ConvertDecomposedToClassic(in, out);
  ASSERT_TRUE(s.ok()) << s;
  xla::HloSnapshot snap = ReadClassic(out);
  EXPECT_EQ(snap.hlo().hlo_module().SerializeAsString(), m.SerializeAsString());
  ASSERT_EQ(snap.arguments_size(), 2);
  EXPECT_EQ(snap.arguments(0).SerializeAsString(), a.SerializeAsString());
  EXPECT_EQ(snap.arguments(1).SerializeAsString(), b.SerializeAsString());
  EXPECT_EQ(snap.result().SerializeAsString(),
            TupleOf({o0, o1}).SerializeAsString());
}

// What a conversion wrote, for `decomposed convert` to say: the forms, the
// literal counts and the output's size.
TEST(Convert, TheReportSaysWhatWasWritten) {
  auto a = F32Literal({2}, {1, 2});
  auto o0 = F32Literal({2}, {2, 4});
  auto m = Module({a.shape()}, TupleShape({o0}));
  std::string in = TempPath("report.dhs"), out = TempPath("report.pb");
  WriteDecomposed(in, m, {a}, std::vector{o0});
  ConvertReport r;
  absl::Status s = ConvertSnapshot(in, out, SnapshotType::kClassic,
                                   SnapshotType::kAuto, {}, &r);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(r.from, SnapshotType::kDecomposed);
  EXPECT_EQ(r.to, SnapshotType::kClassic);
  EXPECT_EQ(r.inputs, 1u);
  EXPECT_EQ(r.outputs, 1u);
  EXPECT_EQ(r.bytes, ReadClassic(out).SerializeAsString().size());
  // An output that cannot be written is named as the file at fault, not
  // the input (Python's OSError gives that name).
  const std::string bad = TempPath("no-such-dir") + "/x.pb";
  absl::Status o = ConvertSnapshot(in, bad, SnapshotType::kClassic);
  EXPECT_EQ(ErrnoOf(o), ENOENT) << o;
  EXPECT_EQ(PathOf(o), bad) << o;
  EXPECT_EQ(std::string(o.message()).find(in), std::string::npos) << o;
  ConvertReport back;
  ASSERT_TRUE(ConvertSnapshot(out, in + "2", SnapshotType::kDecomposed,
                              SnapshotType::kAuto, {}, &back).ok());
  EXPECT_EQ(back.from, SnapshotType::kClassic);
  EXPECT_EQ(back.inputs, 1u);
  EXPECT_EQ(back.outputs, 1u);
}

TEST(Convert, SingleTupleParameterGetsOneTupleArgument) {
  auto a = F32Literal({2}, {1, 2});
  auto b = F32Literal({}, {3});
  auto c = F32Literal({1}, {4});
  xla::ShapeProto param = TupleShape({a, b, c});
  auto m = Module({param}, TupleShape({}));
  std::string in = TempPath("tp.dhs"), out = TempPath("tp.pb");
  WriteDecomposed(in, m, {a, b, c}, std::vector<xla::LiteralProto>{});
  ASSERT_TRUE(ConvertDecomposedToClassic(in, out).ok());
  xla::HloSnapshot snap = ReadClassic(out);
  ASSERT_EQ(snap.arguments_size(), 1);
  EXPECT_EQ(snap.arguments(0).SerializeAsString(),
            TupleOf({a, b, c}).SerializeAsString());
  EXPECT_FALSE(snap.has_result());
  // And back: the tuple argument is split into the three inputs again.
  std::string again = TempPath("tp2.dhs");
  ASSERT_TRUE(ConvertClassicToDecomposed(out, again).ok());
  Blocks blocks = ReadDecomposed(again);
  ASSERT_EQ(blocks.inputs.size(), 3u);
  EXPECT_EQ(blocks.inputs[0], a.SerializeAsString());
  EXPECT_EQ(blocks.inputs[2], c.SerializeAsString());
}

TEST(Convert, SingleTupleInputPassesThrough) {
  auto a = F32Literal({2}, {1, 2});
  auto t = TupleOf({a});
  auto m = Module({t.shape()}, a.shape());
  std::string in = TempPath("tpass.dhs"), out = TempPath("tpass.pb");
  WriteDecomposed(in, m, {t}, std::vector{a});
  ASSERT_TRUE(ConvertDecomposedToClassic(in, out).ok());
  xla::HloSnapshot snap = ReadClassic(out);
  ASSERT_EQ(snap.arguments_size(), 1);
  EXPECT_EQ(snap.arguments(0).SerializeAsString(), t.SerializeAsString());
  // Array program result: the one output is the result itself.
  EXPECT_EQ(snap.result().SerializeAsString(), a.SerializeAsString());
}

TEST(Convert, OutputCountMustMatchProgram) {
  auto a = F32Literal({2}, {1, 2});
  auto m = Module({a.shape()}, TupleShape({a, a}));
  std::string in = TempPath("mm.dhs"), out = TempPath("mm.pb");
  std::remove(out.c_str());
  WriteDecomposed(in, m, {a}, std::vector{a});
  absl::Status s = ConvertDecomposedToClassic(in, out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("expected 2 outputs"), std::string::npos) << s;
  EXPECT_FALSE(Exists(out));
}

TEST(Convert, AbsentRegion2GivesNoResult) {
  auto a = F32Literal({2}, {1, 2});
  auto m = Module({a.shape()}, TupleShape({a}));
  std::string in = TempPath("abs.dhs"), out = TempPath("abs.pb");
  WriteDecomposed(in, m, {a}, std::nullopt);
  ASSERT_TRUE(ConvertDecomposedToClassic(in, out).ok());
  xla::HloSnapshot snap = ReadClassic(out);
  EXPECT_EQ(snap.arguments_size(), 1);
  EXPECT_FALSE(snap.has_result());
}

TEST(Convert, ClassicDecomposedClassicIsEqual) {
  auto a = F32Literal({2, 3}, {1, 2, 3, 4, 5, 6});
  auto b = F32Literal({}, {7});
  auto o0 = F32Literal({3}, {0.5f, 0.25f, 0.125f});
  auto o1 = F32Literal({0}, {});
  xla::HloSnapshot snap;
  *snap.mutable_hlo()->mutable_hlo_module() =
      Module({a.shape(), b.shape()}, TupleShape({o0, o1}));
  *snap.add_arguments() = a;
  *snap.add_arguments() = b;
  *snap.mutable_result() = TupleOf({o0, o1});
  snap.set_execution_platform("Neuron");
  std::string classic = TempPath("c.pb"), dec = TempPath("c.dhs"),
              back = TempPath("c2.pb");
  WriteFile(classic, snap.SerializeAsString());
  ASSERT_TRUE(ConvertClassicToDecomposed(classic, dec).ok());
  Blocks blocks = ReadDecomposed(dec);
  EXPECT_EQ(blocks.header.arguments_size(), 0) << "literal-empty header";
  EXPECT_FALSE(blocks.header.has_result());
  EXPECT_EQ(blocks.header.execution_platform(), "Neuron");
  ASSERT_EQ(blocks.inputs.size(), 2u);
  EXPECT_EQ(blocks.inputs[0], a.SerializeAsString());
  ASSERT_TRUE(blocks.outputs.has_value());
  ASSERT_EQ(blocks.outputs->size(), 2u);
  EXPECT_EQ((*blocks.outputs)[0], o0.SerializeAsString());
  EXPECT_EQ((*blocks.outputs)[1], o1.SerializeAsString());
  ASSERT_TRUE(ConvertDecomposedToClassic(dec, back).ok());
  EXPECT_EQ(ReadFile(back), snap.SerializeAsString());
}

TEST(Convert, ClassicArrayResultRoundTrips) {
  auto a = F32Literal({2}, {1, 2});
  xla::HloSnapshot snap;
  *snap.mutable_hlo()->mutable_hlo_module() = Module({a.shape()}, a.shape());
  *snap.add_arguments() = a;
  *snap.mutable_result() = a;
  std::string classic = TempPath("ar.pb"), dec = TempPath("ar.dhs"),
              back = TempPath("ar2.pb");
  WriteFile(classic, snap.SerializeAsString());
  ASSERT_TRUE(ConvertClassicToDecomposed(classic, dec).ok());
  Blocks blocks = ReadDecomposed(dec);
  ASSERT_EQ(blocks.outputs->size(), 1u);
  ASSERT_TRUE(ConvertDecomposedToClassic(dec, back).ok());
  EXPECT_EQ(ReadFile(back), snap.SerializeAsString());
}

TEST(Convert, NoArgumentsNoResult) {
  xla::HloSnapshot snap;
  *snap.mutable_hlo()->mutable_hlo_module() = Module({}, TupleShape({}));
  std::string classic = TempPath("e.pb"), dec = TempPath("e.dhs"),
              back = TempPath("e2.pb");
  WriteFile(classic, snap.SerializeAsString());
  ASSERT_TRUE(ConvertClassicToDecomposed(classic, dec).ok());
  Blocks blocks = ReadDecomposed(dec);
  EXPECT_TRUE(blocks.inputs.empty());
  ASSERT_TRUE(blocks.outputs.has_value()) << "count 0 written for AWS";
  EXPECT_TRUE(blocks.outputs->empty());
  ASSERT_TRUE(ConvertDecomposedToClassic(dec, back).ok());
  EXPECT_EQ(ReadFile(back), snap.SerializeAsString());
}

TEST(Convert, CorruptInputsFailWithFrameAndOffset) {
  auto a = F32Literal({2}, {1, 2});
  auto m = Module({a.shape()}, TupleShape({}));
  std::string in = TempPath("bad.dhs"), out = TempPath("bad.pb");
  WriteDecomposed(in, m, {a}, std::vector<xla::LiteralProto>{});
  std::string data = ReadFile(in);
  // Truncate inside input 0's body.
  WriteFile(in, data.substr(0, data.size() - 10));
  std::remove(out.c_str());
  absl::Status s = ConvertDecomposedToClassic(in, out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("input 0 body"), std::string::npos) << s;
  EXPECT_NE(s.message().find("at byte"), std::string::npos) << s;
  EXPECT_FALSE(Exists(out));
  // A classic file that is not a protobuf message.
  WriteFile(in, std::string("\x12\x7f\x00", 3));
  s = ConvertClassicToDecomposed(in, out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("at byte 0"), std::string::npos) << s;
  EXPECT_FALSE(Exists(out));
}

}  // namespace
}  // namespace decomposed
