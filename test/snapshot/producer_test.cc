#include "decomposed/snapshot/producer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "decomposed/container/framing.h"
#include "decomposed/npy/npy.h"
#include "decomposed/proto/hlo.pb.h"
#include "decomposed/snapshot/module_file.h"
#include "gtest/gtest.h"
#include "test_literals.h"

namespace decomposed {
namespace {

using testing::Bytes;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/producer_test_" + name;
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

// A module with a program shape (hand-built with protobuf).
std::string Module(int params, bool tuple_result, int results,
                   bool one_tuple_param = false) {
  xla::HloModuleProto m;
  m.set_name("m");
  m.set_entry_computation_name("main");
  auto* ps = m.mutable_host_program_shape();
  if (one_tuple_param) {
    auto* p = ps->add_parameters();
    p->set_element_type(xla::TUPLE);
    for (int i = 0; i < params; ++i) {
      p->add_tuple_shapes()->set_element_type(xla::F32);
    }
  } else {
    for (int i = 0; i < params; ++i) {
      ps->add_parameters()->set_element_type(xla::F32);
    }
  }
  if (tuple_result) {
    ps->mutable_result()->set_element_type(xla::TUPLE);
    for (int i = 0; i < results; ++i) {
      ps->mutable_result()->add_tuple_shapes()->set_element_type(xla::F32);
    }
  } else {
    ps->mutable_result()->set_element_type(xla::F32);
  }
  return m.SerializeAsString();
}

struct Parsed {
  std::string snapshot;
  std::vector<xla::LiteralProto> inputs;
  std::optional<std::vector<xla::LiteralProto>> outputs;
  absl::Status status;
};

// Reads a decomposed stream with the foundation reader; bodies are decoded
// by protobuf.
Parsed ParseDecomposed(const std::string& bytes) {
  Parsed p;
  MemorySource src(bytes);
  DecomposedReader reader(src);
  absl::StatusOr<ElementInfo> h = reader.ReadHeader(&p.snapshot);
  if (!h.ok()) return p.status = h.status(), p;
  absl::StatusOr<uint64_t> n = reader.StartInputs();
  if (!n.ok()) return p.status = n.status(), p;
  ElementInfo e;
  auto read_body = [&](std::vector<xla::LiteralProto>* out) {
    std::string body;
    absl::Status s = ReadToString(src, e.length, Frame{"body"}, &body);
    out->emplace_back();
    if (!out->back().ParseFromString(body)) {
      s = absl::DataLossError("protobuf could not parse a body");
    }
    return s;
  };
  for (;;) {
    absl::StatusOr<bool> more = reader.NextInput(&e);
    if (!more.ok()) return p.status = more.status(), p;
    if (!*more) break;
    if (absl::Status s = read_body(&p.inputs); !s.ok()) return p.status = s, p;
  }
  absl::StatusOr<std::optional<uint64_t>> m = reader.StartOutputs();
  if (!m.ok()) return p.status = m.status(), p;
  if (m->has_value()) {
    p.outputs.emplace();
    for (;;) {
      absl::StatusOr<bool> more = reader.NextOutput(&e);
      if (!more.ok()) return p.status = more.status(), p;
      if (!*more) break;
      if (absl::Status s = read_body(&*p.outputs); !s.ok()) {
        return p.status = s, p;
      }
    }
  }
  p.status = reader.Finish();
  return p;
}

// ---- Golden bytes of a whole small file, worked out by hand ----

TEST(Producer, GoldenTinyFile) {
  // Module bytes: HloModuleProto { name: "m" } = 0a 01 6d.
  std::string module = Bytes({0x0a, 0x01, 0x6d});
  std::string out;
  StringSink sink(&out);
  DecomposedProducer<StringSink> w(sink);
  ASSERT_TRUE(w.WriteModule(module).ok());
  uint8_t v = 7;
  LiteralEncodeOptions o;
  o.shape.tail_padding_alignment = false;
  auto in0 =
      ArrayLiteral(ArrayView{&v, PrimitiveType::kU8, {}, std::nullopt}, o);
  std::vector<LiteralSource*> inputs = {in0.get()};
  ASSERT_TRUE(w.WriteInputs(inputs).ok());
  ASSERT_TRUE(w.Finish().ok());
  std::string want = Bytes({
      // region [0]: box(7), HloSnapshot { hlo { hlo_module { name "m" } } }
      0x03, 0x3a, 0x01, 0x07, 0x0a, 0x05, 0x0a, 0x03, 0x0a, 0x01, 0x6d,
      // region [1]: box(1), box(9), LiteralProto { shape { U8 layout {} }
      // u8s "\x07" }
      0x03, 0x3a, 0x01, 0x01, 0x03, 0x3a, 0x01, 0x09, 0x0a, 0x04, 0x10, 0x06,
      0x2a, 0x00, 0x1a, 0x01, 0x07,
      // region [2]: box(0), always written for AWS's reader
      0x03, 0x3a, 0x01, 0x00});
  EXPECT_EQ(out, want);
}

TEST(Producer, ModuleIsEmbeddedByteForByte) {
  std::string module = Module(2, true, 1);
  absl::StatusOr<std::string> snap = SnapshotFromModule(module);
  ASSERT_TRUE(snap.ok());
  EXPECT_NE(snap->find(module), std::string::npos);
  xla::HloSnapshot parsed;
  ASSERT_TRUE(parsed.ParseFromString(*snap));
  EXPECT_EQ(parsed.hlo().hlo_module().SerializeAsString(), module);
  EXPECT_EQ(parsed.arguments_size(), 0);
  EXPECT_FALSE(parsed.has_result());
  // Not a module.
  EXPECT_FALSE(SnapshotFromModule(Bytes({0xff, 0xff, 0xff})).ok());
}

TEST(Producer, LiteralEmptySnapshotDropsLiterals) {
  xla::HloSnapshot s;
  *s.mutable_hlo()->mutable_hlo_module() = xla::HloModuleProto();
  s.mutable_hlo()->mutable_hlo_module()->set_name("x");
  s.add_arguments()->mutable_shape()->set_element_type(xla::F32);
  s.mutable_result()->mutable_shape()->set_element_type(xla::F32);
  s.set_execution_platform("neuron");
  absl::StatusOr<std::string> e = LiteralEmptySnapshot(s.SerializeAsString());
  ASSERT_TRUE(e.ok());
  xla::HloSnapshot back;
  ASSERT_TRUE(back.ParseFromString(*e));
  EXPECT_EQ(back.arguments_size(), 0);
  EXPECT_FALSE(back.has_result());
  EXPECT_EQ(back.execution_platform(), "neuron");
  EXPECT_EQ(back.hlo().hlo_module().name(), "x");
  EXPECT_FALSE(LiteralEmptySnapshot(Bytes({0x0a, 0x05, 0x00})).ok());
}

// ---- Round trips for every element type, from memory and from .npy ----

TEST(Producer, EveryTypeFromMemoryAndNpy) {
  std::vector<std::unique_ptr<LiteralSource>> bodies;
  std::vector<std::string> datas;
  datas.reserve(kNumPrimitiveTypes);  // ArrayViews point into these
  std::vector<PrimitiveType> types;
  std::vector<std::vector<int64_t>> dims_list;
  int i = 0;
  for (const PrimitiveTypeInfo& info : kPrimitiveTypes) {
    if (!info.loadable || info.encoding == DataEncoding::kNone) continue;
    std::vector<int64_t> dims =
        i % 3 == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{3, 2};
    uint64_t n = dims.empty() ? 1 : 6;
    datas.push_back(testing::RandomElements(info.type, n, 100 + i));
    types.push_back(info.type);
    dims_list.push_back(dims);
    // Memory.
    bodies.push_back(ArrayLiteral(
        ArrayView{datas.back().data(), info.type, dims, std::nullopt}));
    // .npy (void types get their dtype through the sidecar for half of
    // them, through the explicit override for the other half).
    std::string path = TempPath(absl::StrCat("t", i, ".npy"));
    NpyHeader h{std::string(info.npy_descr), false, dims};
    WriteFile(path, FormatNpyHeader(h) + datas.back());
    std::optional<PrimitiveType> dtype;
    std::remove((path + ".meta").c_str());
    if (info.npy_descr[1] == 'V') {
      if (i % 2) {
        dtype = info.type;
      } else {
        WriteFile(path + ".meta", absl::StrCat("{\"ml_dtype\": \"",
                                               Sv(info.ml_dtype), "\"}"));
      }
    }
    bodies.push_back(NpyLiteral(path, dtype));
    ++i;
  }
  std::vector<LiteralSource*> ptrs;
  for (auto& b : bodies) ptrs.push_back(b.get());
  std::string out;
  StringSink sink(&out);
  DecomposedProducer<StringSink> w(sink);
  ASSERT_TRUE(w.WriteModule(Module(0, true, 0)).ok());
  absl::Status s = w.WriteInputs(ptrs);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_TRUE(w.WriteOutputs(std::vector<LiteralSource*>{ptrs[0]}).ok());
  ASSERT_TRUE(w.Finish().ok());
  Parsed p = ParseDecomposed(out);
  ASSERT_TRUE(p.status.ok()) << p.status;
  ASSERT_EQ(p.inputs.size(), 2 * types.size());
  for (size_t k = 0; k < types.size(); ++k) {
    for (int which = 0; which < 2; ++which) {
      const xla::LiteralProto& l = p.inputs[2 * k + which];
      SCOPED_TRACE(absl::StrCat(Sv(Info(types[k]).name), which ? " npy" : " mem"));
      EXPECT_EQ(l.shape().element_type(), static_cast<int>(types[k]));
      EXPECT_EQ(std::vector<int64_t>(l.shape().dimensions().begin(),
                                     l.shape().dimensions().end()),
                dims_list[k]);
      EXPECT_EQ(testing::ElementBytes(l, types[k]), datas[k]);
    }
    // Both paths give identical bodies.
    EXPECT_EQ(p.inputs[2 * k].SerializeAsString(),
              p.inputs[2 * k + 1].SerializeAsString());
  }
  ASSERT_TRUE(p.outputs.has_value());
  EXPECT_EQ(p.outputs->size(), 1u);
}

TEST(Producer, FortranOrderNpyGetsColumnMajorLayout) {
  std::string path = TempPath("fortran.npy");
  float v[6] = {0, 1, 2, 3, 4, 5};  // column-major 2x3
  WriteFile(path, FormatNpyHeader({"<f4", true, {2, 3}}) +
                      std::string(reinterpret_cast<char*>(v), 24));
  auto b = NpyLiteral(path, std::nullopt);
  std::string out;
  StringSink sink(&out);
  DecomposedProducer<StringSink> w(sink);
  ASSERT_TRUE(w.WriteModule(Module(1, true, 0)).ok());
  ASSERT_TRUE(w.WriteInputs(std::vector<LiteralSource*>{b.get()}).ok());
  ASSERT_TRUE(w.Finish().ok());
  Parsed p = ParseDecomposed(out);
  ASSERT_TRUE(p.status.ok());
  const auto& l = p.inputs[0];
  EXPECT_EQ(l.shape().layout().minor_to_major(0), 0);
  EXPECT_EQ(l.shape().layout().minor_to_major(1), 1);
  EXPECT_EQ(std::vector<float>(l.f32s().begin(), l.f32s().end()),
            std::vector<float>(v, v + 6));
}

TEST(Producer, BigEndianNpyIsConverted) {
  std::string path = TempPath("be.npy");
  WriteFile(path, FormatNpyHeader({">i4", false, {2}}) +
                      Bytes({0xff, 0xff, 0xff, 0xfe, 0x00, 0x00, 0x01, 0x00}));
  auto b = NpyLiteral(path, std::nullopt);
  ASSERT_TRUE(b->Prepare().ok());
  std::string body;
  ASSERT_TRUE(b->Write([&](std::string_view c) {
                 body.append(c);
                 return absl::OkStatus();
               }).ok());
  xla::LiteralProto l;
  ASSERT_TRUE(l.ParseFromString(body));
  EXPECT_EQ(std::vector<int32_t>(l.s32s().begin(), l.s32s().end()),
            (std::vector<int32_t>{-2, 256}));
}

TEST(Producer, ZeroInputsZeroOutputsAndAbsentRegion2) {
  for (bool outputs_block : {true, false}) {
    std::string out;
    StringSink sink(&out);
    DecomposedWriteOptions o;
    o.write_output_count = outputs_block;
    DecomposedProducer<StringSink> w(sink, o);
    ASSERT_TRUE(w.WriteModule(Module(0, true, 0)).ok());
    ASSERT_TRUE(w.WriteInputs({}).ok());
    ASSERT_TRUE(w.Finish().ok());
    Parsed p = ParseDecomposed(out);
    ASSERT_TRUE(p.status.ok());
    EXPECT_TRUE(p.inputs.empty());
    EXPECT_EQ(p.outputs.has_value(), outputs_block);
    if (outputs_block) {
      EXPECT_TRUE(p.outputs->empty());
    }
    // The stream ends in box(0) [+ box(0)].
    std::string tail = outputs_block ? Bytes({3, 0x3a, 1, 0, 3, 0x3a, 1, 0})
                                     : Bytes({3, 0x3a, 1, 0});
    EXPECT_EQ(out.substr(out.size() - tail.size()), tail);
  }
}

TEST(Producer, ZeroSizeAndScalarLiterals) {
  float s = 1.5f;
  auto scalar =
      ArrayLiteral(ArrayView{&s, PrimitiveType::kF32, {}, std::nullopt});
  auto empty =
      ArrayLiteral(ArrayView{&s, PrimitiveType::kS32, {0, 4}, std::nullopt});
  std::string out;
  StringSink sink(&out);
  DecomposedProducer<StringSink> w(sink);
  ASSERT_TRUE(w.WriteModule(Module(2, true, 0)).ok());
  ASSERT_TRUE(
      w.WriteInputs(std::vector<LiteralSource*>{scalar.get(), empty.get()})
          .ok());
  ASSERT_TRUE(w.Finish().ok());
  Parsed p = ParseDecomposed(out);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.inputs[0].f32s_size(), 1);
  EXPECT_EQ(p.inputs[0].f32s(0), 1.5f);
  EXPECT_TRUE(p.inputs[0].shape().has_layout());
  EXPECT_EQ(p.inputs[1].s32s_size(), 0);
  EXPECT_EQ(p.inputs[1].shape().dimensions(0), 0);
}

TEST(Producer, ProtoBodyAndBadBodies) {
  xla::LiteralProto l;
  l.mutable_shape()->set_element_type(xla::F32);
  l.mutable_shape()->mutable_layout();
  l.add_f32s(2.0f);
  auto good = ProtoLiteral(l, "input 0");
  absl::StatusOr<uint64_t> n = good->Prepare();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, l.ByteSizeLong());
  xla::LiteralProto nolayout;
  nolayout.mutable_shape()->set_element_type(xla::F32);
  nolayout.add_f32s(1.0f);
  auto bad = ProtoLiteral(nolayout, "input 1");
  absl::StatusOr<uint64_t> m = bad->Prepare();
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("no layout"), std::string::npos)
      << m.status();
  EXPECT_NE(m.status().message().find("input 1"), std::string::npos);
}

// ---- Classic writer ----

TEST(Producer, ClassicSnapshot) {
  float a = 1, b[2] = {2, 3};
  auto in0 = ArrayLiteral(ArrayView{&a, PrimitiveType::kF32, {}, std::nullopt});
  auto in1 = ArrayLiteral(ArrayView{b, PrimitiveType::kF32, {2}, std::nullopt});
  auto out0 =
      ArrayLiteral(ArrayView{b, PrimitiveType::kF32, {2}, std::nullopt});
  absl::StatusOr<std::string> header =
      SnapshotFromModule(Module(2, true, 1));
  ASSERT_TRUE(header.ok());
  absl::StatusOr<ClassicPlan> plan = PlanClassic(
      *header, {in0.get(), in1.get()}, {out0.get()});
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::string out;
  StringSink sink(&out);
  absl::Status s =
      WriteClassicSnapshot(sink, *header, plan->arguments, plan->result);
  ASSERT_TRUE(s.ok()) << s;
  xla::HloSnapshot snap;
  ASSERT_TRUE(snap.ParseFromString(out));
  EXPECT_EQ(snap.hlo().hlo_module().name(), "m");
  ASSERT_EQ(snap.arguments_size(), 2);
  EXPECT_EQ(snap.arguments(1).f32s(1), 3.0f);
  EXPECT_EQ(snap.result().shape().element_type(), xla::TUPLE);
  ASSERT_EQ(snap.result().tuple_literals_size(), 1);
  EXPECT_EQ(snap.result().shape().tuple_shapes(0).SerializeAsString(),
            snap.result().tuple_literals(0).shape().SerializeAsString());
  EXPECT_EQ(snap.result().tuple_literals(0).f32s(0), 2.0f);
  // Canonical field order: re-serializing changes nothing.
  EXPECT_EQ(snap.SerializeAsString(), out);
}

// Claims a huge body without holding any data.
class HugeBody : public LiteralSource {
 public:
  absl::StatusOr<uint64_t> Prepare() override { return uint64_t{3} << 30; }
  absl::Status Write(const ChunkFn&) override {
    ADD_FAILURE() << "must not be written";
    return absl::InternalError("written");
  }
  absl::StatusOr<std::string> ShapeBytes() override { return std::string(); }
  std::string name() const override { return "huge"; }
};

TEST(Producer, ClassicRefusesPast2GiB) {
  HugeBody huge;
  absl::StatusOr<std::string> header = SnapshotFromModule(Module(1, true, 0));
  std::string out;
  StringSink sink(&out);
  std::vector<LiteralSource*> args = {&huge};
  absl::Status s = WriteClassicSnapshot(sink, *header, args, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("2 GiB"), std::string::npos);
  EXPECT_NE(s.message().find("decomposed"), std::string::npos);
  EXPECT_TRUE(out.empty()) << "nothing written";
}

// ---- Files ----

TEST(Producer, PackToFileIsAtomic) {
  std::string path = TempPath("atomic.dhs");
  std::remove(path.c_str());
  PackRequest req;
  req.snapshot = *SnapshotFromModule(Module(1, true, 0));
  req.inputs.push_back(NpyLiteral(TempPath("missing.npy"), std::nullopt));
  absl::Status s = PackToFile(req, path);
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(Exists(path));
  // A good request writes the file.
  std::string npy = TempPath("atomic_in.npy");
  WriteFile(npy, FormatNpyHeader({"<f4", false, {1}}) + std::string(4, 0));
  req.inputs.clear();
  req.inputs.push_back(NpyLiteral(npy, std::nullopt));
  ASSERT_TRUE(PackToFile(req, path).ok());
  Parsed p = ParseDecomposed(ReadFile(path));
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.inputs.size(), 1u);
  // A failing request leaves the existing file untouched.
  std::string before = ReadFile(path);
  req.inputs.push_back(NpyLiteral(TempPath("missing.npy"), std::nullopt));
  EXPECT_FALSE(PackToFile(req, path).ok());
  EXPECT_EQ(ReadFile(path), before);
}

TEST(Producer, PackToFileReportsWhatItWrote) {
  std::string npy = TempPath("report_in.npy");
  WriteFile(npy, FormatNpyHeader({"<f4", false, {2, 3}}) + std::string(24, 0));
  PackRequest req;
  req.snapshot = *SnapshotFromModule(Module(1, true, 0));
  LiteralEncodeOptions o;
  o.name = "input 0 (report_in.npy)";
  req.inputs.push_back(NpyLiteral(npy, std::nullopt, o));
  std::string path = TempPath("report.dhs");
  PackReport report;
  ASSERT_TRUE(PackToFile(req, path, &report).ok());
  EXPECT_EQ(report.path, path);
  EXPECT_EQ(report.format, SnapshotType::kDecomposed);
  EXPECT_EQ(report.file_bytes, ReadFile(path).size());
  EXPECT_EQ(report.header_bytes, req.snapshot.size());
  ASSERT_EQ(report.inputs.size(), 1u);
  EXPECT_TRUE(report.outputs.empty());
  EXPECT_EQ(report.inputs[0].name, "input 0 (report_in.npy)");
  EXPECT_EQ(report.inputs[0].shape, "F32[2,3]{1,0}");
  Parsed p = ParseDecomposed(ReadFile(path));
  ASSERT_TRUE(p.status.ok());
  ASSERT_EQ(p.inputs.size(), 1u);
  EXPECT_EQ(report.inputs[0].bytes, p.inputs[0].ByteSizeLong());
}

// pack's INDEX=TYPE specs and file classification, as the CLI uses them.
TEST(Producer, IndexedDtypes) {
  absl::StatusOr<std::vector<std::optional<PrimitiveType>>> t =
      ParseIndexedDtypes({"2=bf16", "0=float32"}, 3, "input");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->size(), 3u);
  EXPECT_EQ((*t)[0], PrimitiveType::kF32);
  EXPECT_EQ((*t)[1], std::nullopt);
  EXPECT_EQ((*t)[2], PrimitiveType::kBF16);
  auto error = [](std::vector<std::string> specs, size_t count) {
    absl::StatusOr<std::vector<std::optional<PrimitiveType>>> r =
        ParseIndexedDtypes(specs, count, "input");
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(r.status().message());
  };
  EXPECT_EQ(error({"bf16"}, 1), "expected INDEX=TYPE, found 'bf16'");
  EXPECT_EQ(error({"x=bf16"}, 1), "expected INDEX=TYPE, found 'x=bf16'");
  EXPECT_EQ(error({"1=bf16"}, 1), "'1=bf16': there are only 1 input (numbered from 0)");
  EXPECT_EQ(error({"0=f99"}, 2),
            "'0=f99': unknown type (use an XLA name such as bf16, f8e4m3fn, s4, or a "
            "NumPy name such as float32)");
}

TEST(Producer, LiteralsOfFilesByName) {
  const std::string npy = TempPath("files_in.npy");
  WriteFile(npy, FormatNpyHeader({"<u2", false, {2}}) + std::string(4, 0));
  xla::LiteralProto lit;
  lit.mutable_shape()->set_element_type(xla::S32);
  lit.mutable_shape()->add_dimensions(1);
  lit.mutable_shape()->mutable_layout()->add_minor_to_major(0);
  lit.add_s32s(7);
  const std::string pb = TempPath("files_in.pb");
  WriteFile(pb, lit.SerializeAsString());
  absl::StatusOr<std::vector<std::unique_ptr<LiteralSource>>> l =
      LiteralsOfFiles({npy, pb}, {PrimitiveType::kBF16, std::nullopt}, "input");
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ(l->size(), 2u);
  EXPECT_EQ((*l)[0]->name(), "input 0 (" + npy + ")");
  EXPECT_EQ((*l)[1]->name(), "input 1 (" + pb + ")");
  PackRequest req;
  req.snapshot = *SnapshotFromModule(Module(2, true, 0));
  req.inputs = *std::move(l);
  PackReport report;
  ASSERT_TRUE(PackToFile(req, TempPath("files.dhs"), &report).ok());
  ASSERT_EQ(report.inputs.size(), 2u);
  EXPECT_EQ(report.inputs[0].shape, "BF16[2]{0}");  // the u2 bits, typed as asked
  EXPECT_EQ(report.inputs[1].shape, "S32[1]{0}");
  // A type for a file that is not .npy is an error naming it.
  absl::StatusOr<std::vector<std::unique_ptr<LiteralSource>>> bad =
      LiteralsOfFiles({pb}, {PrimitiveType::kF32}, "output");
  EXPECT_EQ(bad.status().message(),
            "output 0 (" + pb + "): a type applies to .npy files only");
  EXPECT_FALSE(LiteralsOfFiles({npy}, {std::nullopt, std::nullopt}, "input").ok());
}

TEST(Producer, SnapshotFromModuleFileReadsProtoAndText) {
  const std::string proto = Module(1, true, 1);
  const std::string pb = TempPath("module.pb");
  WriteFile(pb, proto);
  absl::StatusOr<std::string> from_proto = SnapshotFromModuleFile(pb);
  ASSERT_TRUE(from_proto.ok()) << from_proto.status();
  EXPECT_EQ(*from_proto, *SnapshotFromModule(proto));  // the bytes as they are

  const std::string text = TempPath("module.hlo");
  WriteFile(text,
            "HloModule t, entry_computation_layout={(f32[2]{0})->f32[2]{0}}\n\n"
            "ENTRY main {\n  p = f32[2]{0} parameter(0)\n"
            "  ROOT n = f32[2]{0} negate(p)\n}\n");
  absl::StatusOr<std::string> from_text = SnapshotFromModuleFile(text);
  ASSERT_TRUE(from_text.ok()) << from_text.status();
  xla::HloSnapshot snap;
  ASSERT_TRUE(snap.ParseFromString(*from_text));
  EXPECT_EQ(snap.hlo().hlo_module().name(), "t");
  EXPECT_EQ(snap.hlo().hlo_module().computations(0).instructions_size(), 2);

  // torch-xla's graph dump of one graph is a module file too.
  const std::string dump = TempPath("module.hlo.0");
  const std::string graph =
      "[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n  f (a.py:1)\n\n## BEGIN_GRAPH\n"
      "HloModule g\n\nENTRY main {\n  ROOT c = f32[] constant(1)\n}\n\n\n## END_GRAPH\n";
  WriteFile(dump, graph);
  absl::StatusOr<std::string> from_dump = SnapshotFromModuleFile(dump);
  ASSERT_TRUE(from_dump.ok()) << from_dump.status();
  ASSERT_TRUE(snap.ParseFromString(*from_dump));
  EXPECT_EQ(snap.hlo().hlo_module().name(), "g");
  WriteFile(dump, graph + graph);
  EXPECT_EQ(SnapshotFromModuleFile(dump).status().code(), absl::StatusCode::kInvalidArgument);

  WriteFile(text,
            "HloModule t\n\nENTRY main {\n  ROOT c = f32[11]{0} constant({...})\n}\n");
  absl::StatusOr<std::string> elided = SnapshotFromModuleFile(text);
  EXPECT_EQ(elided.status().message(),
            text + ": constant \"c\" of computation \"main\": expected its values, found "
                   "{...} (the text left them out; print it with --large-constants)");
}

TEST(Producer, VoidNpyWithoutDtypeFailsClearly) {
  std::string npy = TempPath("void.npy");
  std::remove((npy + ".meta").c_str());
  WriteFile(npy, FormatNpyHeader({"|V2", false, {1}}) + std::string(2, 0));
  LiteralEncodeOptions o;
  o.name = "input 0 (void.npy)";
  auto b = NpyLiteral(npy, std::nullopt, o);
  absl::StatusOr<uint64_t> n = b->Prepare();
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("input 0 (void.npy)"),
            std::string::npos)
      << n.status();
  EXPECT_NE(n.status().message().find("void.npy"), std::string::npos);
}

}  // namespace
}  // namespace decomposed

namespace decomposed {
namespace {

// The kernel-copy path (AtomicFileSink + .npy) writes the same bytes as
// the streaming path (StringSink).
TEST(ProducerKernelCopy, SameBytesAsStreaming) {
  std::vector<std::string> paths;
  int i = 0;
  for (const char* descr : {"<f4", "<f8", "|V2", "<i2", "<c8", "|u1"}) {
    std::string path = TempPath(absl::StrCat("kc", i++, ".npy"));
    std::string data = testing::RandomElements(PrimitiveType::kU8, 4096, i);
    NpyHeader h{descr, false, {}};
    int w = std::atoi(descr + 2);
    h.shape = {static_cast<int64_t>(4096 / w)};
    WriteFile(path, FormatNpyHeader(h) + data);
    paths.push_back(path);
  }
  auto bodies = [&] {
    std::vector<std::unique_ptr<LiteralSource>> b;
    for (const auto& p : paths) {
      b.push_back(NpyLiteral(p, p.find("kc2") != std::string::npos
                                    ? std::optional(PrimitiveType::kBF16)
                                    : std::nullopt));
    }
    return b;
  };
  std::string module = Bytes({0x0a, 0x01, 0x6d});
  std::string streamed;
  {
    auto b = bodies();
    std::vector<LiteralSource*> ptrs;
    for (auto& x : b) ptrs.push_back(x.get());
    StringSink sink(&streamed);
    DecomposedProducer<StringSink> w(sink);
    ASSERT_TRUE(w.WriteModule(module).ok());
    ASSERT_TRUE(w.WriteInputs(ptrs).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  PackRequest req;
  req.snapshot = *SnapshotFromModule(module);
  req.inputs = bodies();
  std::string out = TempPath("kc.dhs");
  ASSERT_TRUE(PackToFile(req, out).ok());
  EXPECT_EQ(ReadFile(out), streamed);
  ASSERT_TRUE(req.inputs[0]->AsFileSpan().has_value()) << "kernel path used";
}

// Where copy_file_range cannot work (a pipe), the user-space loop copies.
TEST(ProducerKernelCopy, FallsBackOnPipes) {
  std::string path = TempPath("range.bin");
  WriteFile(path, "0123456789");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  absl::Status s = CopyFileRangeTo(path, 3, 5, fds[1]);
  ::close(fds[1]);
  ASSERT_TRUE(s.ok()) << s;
  char buf[16];
  ssize_t n = ::read(fds[0], buf, sizeof buf);
  ::close(fds[0]);
  EXPECT_EQ(std::string(buf, n > 0 ? n : 0), "34567");
  // A range past the end of the file.
  int fds2[2];
  ASSERT_EQ(::pipe(fds2), 0);
  s = CopyFileRangeTo(path, 8, 5, fds2[1]);
  ::close(fds2[0]);
  ::close(fds2[1]);
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << s;
}

}  // namespace
}  // namespace decomposed

namespace decomposed {
namespace {

TEST(ProducerHeader, FromClassicAndDecomposedFiles) {
  xla::HloSnapshot s;
  s.mutable_hlo()->mutable_hlo_module()->set_name("hdr");
  xla::LiteralProto* a = s.add_arguments();
  a->mutable_shape()->set_element_type(xla::F32);
  a->mutable_shape()->mutable_layout();
  a->add_f32s(1);
  s.set_execution_platform("p");
  std::string classic = TempPath("hdr.pb");
  WriteFile(classic, s.SerializeAsString());
  absl::StatusOr<std::string> h = LiteralEmptySnapshotOfFile(classic);
  ASSERT_TRUE(h.ok()) << h.status();
  xla::HloSnapshot back;
  ASSERT_TRUE(back.ParseFromString(*h));
  EXPECT_EQ(back.hlo().hlo_module().name(), "hdr");
  EXPECT_EQ(back.arguments_size(), 0);
  EXPECT_EQ(back.execution_platform(), "p");
  // The same header out of a decomposed file.
  PackRequest req;
  req.snapshot = *h;
  std::string dec = TempPath("hdr.dhs");
  ASSERT_TRUE(PackToFile(req, dec).ok());
  absl::StatusOr<std::string> h2 = LiteralEmptySnapshotOfFile(dec);
  ASSERT_TRUE(h2.ok()) << h2.status();
  EXPECT_EQ(*h2, *h);
  // Not a snapshot at all.
  std::string junk = TempPath("junk.bin");
  WriteFile(junk, "\xff\xff\xff\xff");
  EXPECT_FALSE(LiteralEmptySnapshotOfFile(junk).ok());
}

}  // namespace
}  // namespace decomposed
