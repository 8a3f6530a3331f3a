// SnapshotReader and SnapshotFile (snapshot/reader.h): one reader for both
// forms, opened once; the literals as pull-style references; the output
// policies; the module accessors; errors as data (payloads), sticky; the
// messages of a file that is neither form; and the commands built on it
// (inspect's "module: none", unpack's "kept N complete files").
#include "decomposed/snapshot/reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/spool_source.h"
#include "decomposed/proto/hlo.pb.h"
#include "decomposed/snapshot/inspect.h"
#include "decomposed/snapshot/unpack.h"
#include "decomposed/snapshot/verify.h"
#include "decomposed/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace decomposed {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

xla::LiteralProto F32(std::vector<int64_t> dims, std::vector<float> values) {
  xla::LiteralProto l;
  xla::ShapeProto* s = l.mutable_shape();
  s->set_element_type(xla::F32);
  for (int64_t d : dims) s->add_dimensions(d);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    s->mutable_layout()->add_minor_to_major(i);
  }
  for (float v : values) l.add_f32s(v);
  return l;
}

xla::HloModuleProto Module() {
  xla::HloModuleProto m;
  m.set_name("jit_f");
  m.set_entry_computation_name("main.3");
  xla::ProgramShapeProto* ps = m.mutable_host_program_shape();
  *ps->add_parameters() = F32({2}, {}).shape();
  *ps->add_parameters() = F32({3}, {}).shape();
  ps->add_parameter_names("x");
  ps->add_parameter_names("y");
  *ps->mutable_result() = F32({2}, {}).shape();
  return m;
}

std::string HeaderBytes() {
  xla::HloSnapshot snap;
  *snap.mutable_hlo()->mutable_hlo_module() = Module();
  return snap.SerializeAsString();
}

// A decomposed file: the module's header, inputs, and (unless `outputs` is
// null) region [2].
std::string Decomposed(const std::vector<xla::LiteralProto>& inputs,
                       const std::vector<xla::LiteralProto>* outputs) {
  std::string out;
  StringSink sink(&out);
  DecomposedWriteOptions o;
  o.write_output_count = outputs != nullptr;
  DecomposedWriter w(sink, o);
  EXPECT_TRUE(w.WriteHeader(HeaderBytes()).ok());
  EXPECT_TRUE(w.BeginInputs(inputs.size()).ok());
  for (const auto& l : inputs) {
    EXPECT_TRUE(w.WriteElement(l.SerializeAsString()).ok());
  }
  if (outputs) {
    EXPECT_TRUE(w.BeginOutputs(outputs->size()).ok());
    for (const auto& l : *outputs) {
      EXPECT_TRUE(w.WriteElement(l.SerializeAsString()).ok());
    }
  }
  EXPECT_TRUE(w.Finish().ok());
  return out;
}

std::string Classic(const std::vector<xla::LiteralProto>& args,
                    const xla::LiteralProto* result, bool module = true) {
  xla::HloSnapshot snap;
  if (module) *snap.mutable_hlo()->mutable_hlo_module() = Module();
  for (const auto& a : args) *snap.add_arguments() = a;
  if (result) *snap.mutable_result() = *result;
  return snap.SerializeAsString();
}

// Every literal of a walk, as "input 0 @off+len".
struct Walk {
  absl::Status status;
  std::vector<SnapshotLiteral> literals;
  std::vector<std::string> bodies;  // each literal's bytes, through body()
};

template <RewindableSource S>
Walk WalkAll(SnapshotReader<S>& reader) {
  Walk w;
  absl::StatusOr<const SnapshotHeader*> h = reader.ReadHeader();
  if (!h.ok()) {
    w.status = h.status();
    return w;
  }
  SnapshotLiteral lit;
  for (;;) {
    absl::StatusOr<bool> more = reader.Next(&lit);
    if (!more.ok()) {
      w.status = more.status();
      return w;
    }
    if (!*more) break;
    std::string body;
    if (lit.ranges.size() == 1) {
      EXPECT_TRUE(
          ReadToString(reader.body(), lit.ranges[0].length, lit.frame(), &body)
              .ok());
    }
    w.bodies.push_back(body);
    w.literals.push_back(lit);
  }
  w.status = reader.Finish();
  return w;
}

TEST(SnapshotReader, DecomposedLiteralsInOrderWithTheirBytes) {
  const auto a = F32({2}, {1, 2}), b = F32({3}, {3, 4, 5}), o = F32({2}, {9, 9});
  const std::vector<xla::LiteralProto> outs = {o};
  const std::string bytes = Decomposed({a, b}, &outs);
  MemorySource src(bytes);
  SnapshotReader<MemorySource> reader(src);  // detects the form itself
  EXPECT_EQ(reader.type(), SnapshotType::kDecomposed);
  EXPECT_TRUE(reader.detected());
  Walk w = WalkAll(reader);
  ASSERT_TRUE(w.status.ok()) << w.status;
  ASSERT_EQ(w.literals.size(), 3u);
  EXPECT_EQ(w.literals[0].frame().str(), "input 0 body");
  EXPECT_EQ(w.literals[1].frame().str(), "input 1 body");
  EXPECT_EQ(w.literals[2].frame().str(), "output 0 body");
  EXPECT_EQ(w.bodies[0], a.SerializeAsString());
  EXPECT_EQ(w.bodies[1], b.SerializeAsString());
  EXPECT_EQ(w.bodies[2], o.SerializeAsString());
  // The references say where the bytes are: the body right after its box.
  for (const SnapshotLiteral& l : w.literals) {
    EXPECT_EQ(l.element.offset, l.ranges[0].offset);
    EXPECT_EQ(l.element.box_offset + l.element.box_length, l.element.offset);
    EXPECT_EQ(bytes.substr(l.ranges[0].offset, l.ranges[0].length),
              w.bodies[&l - w.literals.data()]);
  }
  EXPECT_EQ(reader.input_count(), 2u);
  EXPECT_EQ(reader.outputs_present(), true);
  EXPECT_EQ(reader.output_count(), 1u);
}

TEST(SnapshotReader, ClassicLiteralsThroughTheClassicMapping) {
  const auto a = F32({2}, {1, 2}), b = F32({3}, {3, 4, 5}), r = F32({2}, {7, 8});
  const std::string bytes = Classic({a, b}, &r);
  MemorySource src(bytes);
  SnapshotReader<MemorySource> reader(src);
  EXPECT_EQ(reader.type(), SnapshotType::kClassic);
  EXPECT_EQ(reader.evidence().evidence,
            absl::StrCat("HloSnapshot field 1 (hlo) of ",
                         Module().ByteSizeLong() + 2, " bytes at byte 0"));
  Walk w = WalkAll(reader);
  ASSERT_TRUE(w.status.ok()) << w.status;
  ASSERT_EQ(w.literals.size(), 3u);
  EXPECT_EQ(w.bodies[0], a.SerializeAsString());
  EXPECT_EQ(w.bodies[1], b.SerializeAsString());
  EXPECT_EQ(w.bodies[2], r.SerializeAsString());
  EXPECT_EQ(w.literals[2].role, LiteralRole::kOutput);
  EXPECT_EQ(w.literals[0].element.box_length, 0u);  // no boxes
  EXPECT_EQ(reader.header_info().place.length, bytes.size());
  EXPECT_EQ(reader.outputs_present(), true);
}

TEST(SnapshotReader, ClassicMergedResultAndTupleResult) {
  // Two `result` records: protobuf merges them, so the one output is both
  // ranges. A TUPLE result is split into its top-level elements.
  const auto r = F32({2}, {1, 2});
  std::string bytes = Classic({}, &r);
  xla::HloSnapshot extra;
  *extra.mutable_result() = F32({2}, {});
  bytes += extra.SerializeAsString();
  MemorySource src(bytes);
  SnapshotReader<MemorySource> reader(src, {.type = SnapshotType::kClassic});
  Walk w = WalkAll(reader);
  ASSERT_TRUE(w.status.ok()) << w.status;
  ASSERT_EQ(w.literals.size(), 1u);
  EXPECT_EQ(w.literals[0].ranges.size(), 2u);
  EXPECT_EQ(w.literals[0].element.length,
            w.literals[0].ranges[0].length + w.literals[0].ranges[1].length);

  xla::LiteralProto tuple;
  tuple.mutable_shape()->set_element_type(xla::TUPLE);
  for (const auto& e : {F32({1}, {1}), F32({2}, {2, 3})}) {
    *tuple.mutable_shape()->add_tuple_shapes() = e.shape();
    *tuple.add_tuple_literals() = e;
  }
  const std::string t = Classic({}, &tuple);
  MemorySource tsrc(t);
  SnapshotReader<MemorySource> treader(tsrc);
  w = WalkAll(treader);
  ASSERT_TRUE(w.status.ok()) << w.status;
  ASSERT_EQ(w.literals.size(), 2u);
  EXPECT_EQ(w.bodies[1], F32({2}, {2, 3}).SerializeAsString());
  EXPECT_EQ(treader.output_count(), 2u);
}

TEST(SnapshotReader, OutputPolicies) {
  const auto a = F32({2}, {1, 2});
  // No region [2]: absent for kIfPresent, an error for kRequired.
  const std::string none = Decomposed({a}, nullptr);
  {
    MemorySource src(none);
    SnapshotReader<MemorySource> r(src);
    Walk w = WalkAll(r);
    ASSERT_TRUE(w.status.ok()) << w.status;
    EXPECT_EQ(r.outputs_present(), false);
  }
  {
    MemorySource src(none);
    SnapshotReader<MemorySource> r(
        src, {.outputs = OutputsPolicy::kRequired, .required_why = "asked"});
    Walk w = WalkAll(r);
    EXPECT_EQ(w.status.code(), absl::StatusCode::kOutOfRange);
    EXPECT_THAT(std::string(w.status.message()),
                StartsWith("output count box: expected region [2] (asked)"));
    EXPECT_EQ(FrameOf(w.status), "output count box");
    EXPECT_EQ(OffsetOf(w.status), none.size());
  }
  // kSkip reads nothing after region [1]: trailing garbage goes unseen,
  // while kIfPresent reads it as a (bad) region [2].
  const std::string junk = none + "\xff\xff";
  {
    MemorySource src(junk);
    SnapshotReader<MemorySource> r(src, {.outputs = OutputsPolicy::kSkip});
    Walk w = WalkAll(r);
    EXPECT_TRUE(w.status.ok()) << w.status;
    EXPECT_EQ(w.literals.size(), 1u);
    EXPECT_FALSE(r.outputs_present().has_value());
  }
  {
    MemorySource src(junk);
    SnapshotReader<MemorySource> r(src, {.type = SnapshotType::kDecomposed});
    EXPECT_EQ(FrameOf(WalkAll(r).status), "output count box");
  }
  // A classic file without a result.
  const std::string classic = Classic({a}, nullptr);
  MemorySource csrc(classic);
  SnapshotReader<MemorySource> cr(csrc, {.outputs = OutputsPolicy::kRequired});
  Walk w = WalkAll(cr);
  EXPECT_EQ(w.literals.size(), 1u);
  EXPECT_EQ(FrameOf(w.status), "output 0 body");
  EXPECT_THAT(std::string(w.status.message()),
              HasSubstr("a result literal (HloSnapshot field 3) to dump"));
}

TEST(SnapshotReader, ModuleAccessors) {
  for (bool classic : {false, true}) {
    SCOPED_TRACE(classic ? "classic" : "decomposed");
    const std::string bytes =
        classic ? Classic({F32({2}, {1, 2})}, nullptr)
                : Decomposed({F32({2}, {1, 2})}, nullptr);
    MemorySource src(bytes);
    SnapshotReader<MemorySource> r(src);
    ASSERT_TRUE(r.ReadHeader().ok());
    ASSERT_EQ(r.module_ranges().size(), 1u);
    absl::StatusOr<LimitedSource<MemorySource>*> view = r.ModuleView();
    ASSERT_TRUE(view.ok() && *view != nullptr);
    std::string module;
    ASSERT_TRUE(ReadToString(**view, r.module_ranges()[0].length,
                             Frame{"hlo_module"}, &module)
                    .ok());
    EXPECT_EQ(module, Module().SerializeAsString());  // the bytes, verbatim
    absl::StatusOr<const xla::HloModuleProto*> m = r.Module();
    ASSERT_TRUE(m.ok() && *m != nullptr);
    EXPECT_EQ(*r.Module(), *m);  // parsed once
    absl::StatusOr<std::optional<ModuleFacts>> f = r.Facts();
    ASSERT_TRUE(f.ok() && f->has_value());
    EXPECT_EQ((*f)->name, "jit_f");
    EXPECT_EQ((*f)->entry_computation_name, "main.3");
    EXPECT_EQ((*f)->parameter_names(), (std::vector<std::string>{"x", "y"}));
    EXPECT_EQ((*f)->program_shape_text(), "(F32[2]{0}, F32[3]{0}) -> F32[2]{0}");
    EXPECT_FALSE((*f)->single_tuple_parameter());
    absl::StatusOr<std::optional<xla::ProgramShapeProto>> ps = r.ProgramShape();
    ASSERT_TRUE(ps.ok() && ps->has_value());
    EXPECT_EQ((*ps)->parameter_names_size(), 2);
    // The walk still goes on after the accessors moved the source.
    SnapshotLiteral lit;
    absl::StatusOr<bool> more = r.Next(&lit);
    ASSERT_TRUE(more.ok() && *more) << more.status();
    EXPECT_EQ(lit.frame().str(), "input 0 body");
    EXPECT_TRUE(r.Facts().ok());  // a seekable source: at any time
    EXPECT_TRUE(r.Finish().ok());
  }
  // No module: an arguments-only classic snapshot.
  const std::string bare = Classic({F32({2}, {1, 2})}, nullptr, false);
  MemorySource src(bare);
  SnapshotReader<MemorySource> r(src, {.type = SnapshotType::kClassic});
  ASSERT_TRUE(r.ReadHeader().ok());
  EXPECT_TRUE(r.module_ranges().empty());
  EXPECT_EQ(*r.ModuleView(), nullptr);
  EXPECT_EQ(*r.Module(), nullptr);
  EXPECT_FALSE(r.Facts()->has_value());
}

TEST(SnapshotReader, AMalformedHeaderKeepsTheLiteralsReadable) {
  // Region [0] framed correctly, its bytes not HloSnapshot records: no
  // module, but the literals are still there to check (verify, inspect).
  std::string out;
  StringSink sink(&out);
  DecomposedWriter w(sink);
  ASSERT_TRUE(w.WriteHeader(std::string("\x0b\x01", 2)).ok());  // wire type 3
  ASSERT_TRUE(w.BeginInputs(1).ok());
  ASSERT_TRUE(w.WriteElement(F32({1}, {1}).SerializeAsString()).ok());
  ASSERT_TRUE(w.Finish().ok());
  MemorySource src(out);
  SnapshotReader<MemorySource> r(src, {.type = SnapshotType::kDecomposed});
  absl::StatusOr<const SnapshotHeader*> h = r.ReadHeader();
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_FALSE((*h)->contents.ok());
  EXPECT_EQ(FrameOf((*h)->contents), "header");
  EXPECT_EQ(r.Module().status(), (*h)->contents);
  SnapshotLiteral lit;
  EXPECT_TRUE(*r.Next(&lit));
  EXPECT_EQ(lit.frame().str(), "input 0 body");
}

TEST(SnapshotReader, ErrorsAreDataAndSticky) {
  const std::string whole = Decomposed({F32({2}, {1, 2}), F32({2}, {3, 4})},
                                       nullptr);
  const std::string cut = whole.substr(0, whole.size() - 3);
  MemorySource src(cut);
  SnapshotReader<MemorySource> r(src, {.type = SnapshotType::kDecomposed});
  Walk w = WalkAll(r);
  EXPECT_EQ(w.literals.size(), 1u);  // the first one, complete
  EXPECT_EQ(w.status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(FrameOf(w.status), "input 1 body");
  ASSERT_TRUE(OffsetOf(w.status).has_value());
  EXPECT_THAT(std::string(w.status.message()),
              HasSubstr(absl::StrCat("(at byte ", *OffsetOf(w.status), ")")));
  // Later calls give the same error.
  SnapshotLiteral lit;
  EXPECT_EQ(r.Next(&lit).status(), w.status);
  EXPECT_EQ(r.Finish(), w.status);
  // Out of order.
  MemorySource again(whole);
  SnapshotReader<MemorySource> early(again);
  EXPECT_EQ(early.Next(&lit).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(SnapshotReader, AnEmptySourceIsAnError) {
  MemorySource src(std::string_view{});
  SnapshotReader<MemorySource> r(src);
  absl::StatusOr<const SnapshotHeader*> h = r.ReadHeader();
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FrameOf(h.status()), "file");
  EXPECT_THAT(std::string(h.status().message()), HasSubstr("an empty file"));
}

TEST(SnapshotReader, NeitherFormSaysSoFirstUnderAuto) {
  // A README, and a first byte >= 0x80 that snapshot-unpack sign-extends.
  const std::string readme = "# decomposed\n\nA README, not a snapshot.\n";
  std::string high = "\x80";
  for (int i = 0; i < 20; ++i) high += std::string("\x3a\x01\x00", 3);
  for (const std::string& bytes : {readme, high}) {
    MemorySource src(bytes);
    SnapshotReader<MemorySource> r(src);
    EXPECT_EQ(r.type(), SnapshotType::kClassic);
    EXPECT_TRUE(r.evidence().evidence.empty());
    absl::Status s = r.ReadHeader().status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.message()),
                StartsWith("file: not a decomposed or classic snapshot; read "
                           "as decomposed, header length box: "));
    EXPECT_THAT(std::string(s.message()), HasSubstr("; read as classic, "
                                                    "HloSnapshot: "));
    EXPECT_EQ(FrameOf(s), "file");
    // Where the classic reading failed, as the message ends with it.
    ASSERT_TRUE(OffsetOf(s).has_value());
    EXPECT_THAT(std::string(s.message()),
                HasSubstr(absl::StrCat("(at byte ", *OffsetOf(s), ")")));
  }
  MemorySource src(high);
  SnapshotReader<MemorySource> r(src);
  EXPECT_THAT(std::string(r.ReadHeader().status().message()),
              HasSubstr("sign-extends it to a negative length; "
                        "--lenient-length-byte reads it as unsigned"));
  // Named, the form's own error stands alone.
  MemorySource named(high);
  SnapshotReader<MemorySource> c(named, {.type = SnapshotType::kClassic});
  EXPECT_THAT(std::string(c.ReadHeader().status().message()),
              StartsWith("HloSnapshot: "));
}

TEST(SnapshotReader, AStreamsHeaderIsGoneOnceTheLiteralsAreRead) {
  const std::string bytes = Decomposed({F32({2}, {1, 2})}, nullptr);
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ASSERT_EQ(::write(p[1], bytes.data(), bytes.size()),
            static_cast<ssize_t>(bytes.size()));
  ::close(p[1]);
  SpoolSource<OwnedFd> src{OwnedFd(p[0])};
  SnapshotReader<SpoolSource<OwnedFd>> r(src);
  ASSERT_EQ(r.type(), SnapshotType::kDecomposed);
  ASSERT_TRUE(r.ReadHeader().ok());
  ASSERT_TRUE(r.Facts().ok());  // before the first Next: fine
  SnapshotLiteral lit;
  ASSERT_TRUE(*r.Next(&lit));
  EXPECT_EQ(r.ProgramShape().status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(r.Facts().ok());  // cached
  EXPECT_TRUE(r.Finish().ok());
}

// An endless character device whose first byte starts no protobuf record
// (field 0) is refused at once, with the error a file of its bytes gets,
// not copied to a temp file first: only what detection read is kept.
TEST(SnapshotFile, AnEndlessStreamOfZerosFailsAtOnce) {
  absl::StatusOr<std::unique_ptr<SnapshotFile>> f = SnapshotFile::Open("/dev/zero");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE((*f)->from_stream());
  EXPECT_EQ((*f)->type(), SnapshotType::kClassic);
  ASSERT_TRUE((*f)->size().has_value());
  EXPECT_LE(*(*f)->size(), uint64_t{1} << 20);
  absl::Status s = (*f)->Read({}, [](auto& reader) { return WalkAll(reader).status; });
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("found field number 0 (at byte 0)"));
}

TEST(SnapshotFile, OpensOnceAndAnnotates) {
  test::TempDir dir;
  const std::string path =
      dir.Write("x.dhs", Decomposed({F32({2}, {1, 2})}, nullptr));
  for (SnapshotAccess access : {SnapshotAccess::kBuffered,
                                SnapshotAccess::kMapped}) {
    absl::StatusOr<std::unique_ptr<SnapshotFile>> f =
        SnapshotFile::Open(path, {.access = access});
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_EQ((*f)->type(), SnapshotType::kDecomposed);
    EXPECT_FALSE((*f)->from_stream());
    EXPECT_EQ((*f)->buffered() != nullptr,
              access == SnapshotAccess::kBuffered);
    EXPECT_EQ((*f)->mapped() != nullptr, access == SnapshotAccess::kMapped);
    size_t n = 0;
    absl::Status s = (*f)->Read({}, [&](auto& reader) {
      Walk w = WalkAll(reader);
      n = w.literals.size();
      return w.status;
    });
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_EQ(n, 1u);
    // A source of its own, over a dup: reads independently.
    absl::StatusOr<std::unique_ptr<FdSource>> twin = (*f)->NewFdSource();
    ASSERT_TRUE(twin.ok()) << twin.status();
    EXPECT_EQ((*twin)->size(), (*f)->size());
  }
  // A named form the bytes contradict: the file and the hint.
  absl::StatusOr<std::unique_ptr<SnapshotFile>> f =
      SnapshotFile::Open(path, {.type = SnapshotType::kClassic});
  ASSERT_TRUE(f.ok()) << f.status();
  absl::Status s = (*f)->Read({}, [](auto& reader) { return WalkAll(reader).status; });
  s = (*f)->Annotate(s);
  EXPECT_THAT(std::string(s.message()), HasSubstr(" of " + path + ")"));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("; this looks like a decomposed snapshot"));
  EXPECT_EQ(PathOf(s), path);
  // Missing: the OS's reason, as data too.
  f = SnapshotFile::Open(dir.File("missing"));
  EXPECT_EQ(ErrnoOf(f.status()), ENOENT);
  EXPECT_THAT(std::string(f.status().message()),
              HasSubstr("No such file or directory"));
}

TEST(SnapshotCommands, InspectSaysThereIsNoModule) {
  test::TempDir dir;
  const std::string path =
      dir.Write("args.pb", Classic({F32({2}, {1, 2})}, nullptr, false));
  absl::StatusOr<InspectReport> r = InspectFile(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->module.has_value());
  EXPECT_TRUE(r->module_error.empty());
  const std::string text = InspectReportText(*r);
  EXPECT_THAT(text,
              HasSubstr("module: none (the HloSnapshot has no hlo.hlo_module)"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("(entry )")));
  EXPECT_EQ(r->inputs.size(), 1u);
}

TEST(SnapshotCommands, UnpackSaysHowManyFilesItKept) {
  test::TempDir dir;
  const std::string whole =
      Decomposed({F32({2}, {1, 2}), F32({2}, {3, 4})}, nullptr);
  const std::string path = dir.Write("cut.dhs", whole.substr(0, whole.size() - 3));
  UnpackOptions o;
  o.output_prefix = dir.path() + "/out/";
  std::vector<UnpackedFile> files;
  absl::Status s = Unpack(path, o, &files);
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(files.size(), 2u);  // model.hlo, value_input0.npy
  EXPECT_THAT(std::string(s.message()),
              ::testing::EndsWith(" of " + path +
                                  "); kept 2 complete files before the error"));
  EXPECT_EQ(FrameOf(s), "input 1 body");
  // Nothing kept: no note.
  s = Unpack(dir.Write("bad.dhs", std::string(1, '\0')), o);
  EXPECT_THAT(std::string(s.message()), ::testing::Not(HasSubstr("kept")));
}

TEST(SnapshotCommands, EveryCommandNamesTheSameClassicFrame) {
  // The example: one bad classic file, one frame and message.
  test::TempDir dir;
  const auto a = F32({2}, {1, 2});
  std::string bytes = Classic({a}, &a, false);
  const std::string path = dir.Write("bad.pb", bytes.substr(0, bytes.size() - 4));
  UnpackOptions uo;
  uo.output_prefix = dir.path() + "/u/";
  absl::Status unpack = Unpack(path, uo);
  absl::StatusOr<VerifyReport> verify = VerifyFile(path);
  ASSERT_TRUE(verify.ok());
  absl::Status inspect = InspectFile(path).status();
  EXPECT_EQ(FrameOf(unpack), "HloSnapshot");
  EXPECT_EQ(FrameOf(inspect), "HloSnapshot");
  ASSERT_EQ(verify->problems.size(), 1u);
  EXPECT_EQ(verify->problems[0].frame, "HloSnapshot");
  EXPECT_EQ(OffsetOf(unpack), verify->problems[0].offset);
  EXPECT_EQ(unpack.message(), inspect.message());
}

}  // namespace
}  // namespace decomposed
