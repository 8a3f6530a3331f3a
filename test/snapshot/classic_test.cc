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
#include "google/protobuf/unknown_field_set.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "wire_encode.h"

namespace decomposed {
namespace {

using ::decomposed::wire_encode::Len;
using ::decomposed::wire_encode::Varint;

using ::decomposed::test::ListDir;
using ::decomposed::test::ReadFile;

// --- building snapshots ------------------------------------------------------


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
  c.push_back(
      {"tuple_result", Snapshot(Module({{kA}}), {kA}, Tuple({kB, kC}))});
  c.push_back({"nested_tuple_result_splits_top_level_only",
               Snapshot(Module({{kA}}), {kA}, Tuple({kB, Tuple({kC})}))});
  // Two `result` records: protobuf merges them. Each is a one-element
  // tuple, so the merge is a two-element tuple (tuple_shapes and
  // tuple_literals are repeated: they concatenate).
  c.push_back(
      {"repeated_tuple_result", Snapshot(Module({{kA}}), {kA}, std::nullopt) +
                                    Len(3, Tuple({kB}).SerializeAsString()) +
                                    Len(3, Tuple({kC}).SerializeAsString())});
  // An array result split over two records: its shape in the first, its
  // data in the second.
  {
    xla::LiteralProto shape_only = kB;
    shape_only.clear_f32s();
    xla::LiteralProto data_only;
    for (float v : kB.f32s()) data_only.add_f32s(v);
    c.push_back(
        {"repeated_array_result", Snapshot(Module({{kA}}), {kA}, std::nullopt) +
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
  bool split =
      m.has_host_program_shape() &&
      m.host_program_shape().parameters_size() == 1 &&
      m.host_program_shape().parameters(0).element_type() == xla::TUPLE &&
      p.arguments_size() == 1 &&
      p.arguments(0).shape().element_type() == xla::TUPLE;
  if (split) {
    for (const auto& t : p.arguments(0).tuple_literals()) {
      e.inputs.push_back(t.SerializeAsString());
    }
  } else {
    for (const auto& a : p.arguments())
      e.inputs.push_back(a.SerializeAsString());
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
        [](int64_t i) {
          return Frame{"input", i, "body"};
        },
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
    ASSERT_TRUE(ReadLiteralEmptySnapshot(src, {0, c.bytes.size()},
                                         Frame{"snapshot"}, &header)
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

// --- the walks on the wire reader agree with protobuf ------------------------
//
// Table-driven: each row varies the bytes the walks read (HloSnapshot's and
// HloProto's records, the module's top level) around valid nested content,
// so protobuf's verdict rests on those bytes alone. Protobuf is asked; the
// walks must accept exactly when it accepts, except where a stricter rule
// of the wire layer (wire/format.h) refuses: group wire types, a 10th
// varint byte above 1, a tag over 32 bits. When both accept, the values
// must be protobuf's. ReadLiteralEmptySnapshot (and LiteralEmptySnapshot) walk
// the top level only and copy `hlo` as it is: what protobuf refuses inside
// `hlo` they pass on, and the header then fails protobuf's parse, which every
// consumer of a header runs.

std::string Raw(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

struct WireRow {
  std::string name;
  std::string bytes;
  bool stricter = false;  // protobuf accepts, the wire layer refuses
};

std::vector<WireRow> WireRows() {
  const std::string m1 = Module(std::nullopt).SerializeAsString();
  xla::HloModuleProto other = Module({{kB}});
  other.set_name("other");
  const std::string m2 = other.SerializeAsString();
  const std::string a = kA.SerializeAsString();
  const std::string c = kC.SerializeAsString();
  const std::string hlo = Len(1, Len(1, m1));
  std::vector<WireRow> r;
  r.push_back({"empty", ""});
  r.push_back({"plain", hlo + Len(2, a) + Len(2, c) + Len(3, c)});
  r.push_back({"fields out of order",
               Len(3, c) + Len(2, a) + hlo + Len(4, "cpu") + Len(2, c)});
  r.push_back({"unknown fields of every wire type",
               hlo + Raw({0x48, 0x07}) +                       // 9: varint
                   Raw({0x51, 1, 2, 3, 4, 5, 6, 7, 8}) +       // 10: fixed64
                   Len(11, "xyz") + Raw({0x65, 1, 2, 3, 4}) +  // 12: fixed32
                   Len(2, a)});
  r.push_back({"literal fields with other wire types",
               hlo + Raw({0x10, 0x05}) + Raw({0x1d, 0, 0, 0, 0}) +
                   Raw({0x11, 0, 0, 0, 0, 0, 0, 0, 0}) + Len(2, a)});
  r.push_back({"hlo as a varint", Raw({0x08, 0x01}) + Len(2, a)});
  r.push_back({"hlo twice, modules merge", hlo + Len(1, Len(1, m2))});
  r.push_back({"hlo_module twice in one HloProto",
               Len(1, Len(1, m1) + Raw({0x18, 0x01}) + Len(1, m2))});
  r.push_back({"HloProto with unknown fields",
               Len(1, Len(3, "ba") + Len(1, m1) + Raw({0x28, 0x02}))});
  r.push_back({"result twice, merged", hlo + Len(3, a) + Len(3, c)});
  // Tags: protobuf allows a tag of up to 5 bytes, even zero-padded.
  r.push_back({"arguments tag padded to 5 bytes",
               hlo + Raw({0x92, 0x80, 0x80, 0x80, 0x00}) +
                   Raw({static_cast<int>(a.size())}) + a});
  r.push_back({"arguments tag padded to 6 bytes",
               hlo + Raw({0x92, 0x80, 0x80, 0x80, 0x80, 0x00}) +
                   Raw({static_cast<int>(a.size())}) + a});
  // A 5-byte tag with bits past 32: protobuf 3.21 (ReadTagFallback) keeps
  // its low 32 bits (here field 2, an empty argument); the wire layer
  // refuses it, a documented stricter rule (wire/format.h, IsValidTag).
  r.push_back({"tag over 32 bits",
               hlo + Raw({0x92, 0x80, 0x80, 0x80, 0x10, 0x00}), true});
  r.push_back({"field number 0", hlo + Raw({0x02, 0x00})});
  r.push_back({"field number 0 inside HloProto", Len(1, Raw({0x00, 0x00}))});
  r.push_back({"truncated tag", hlo + Raw({0x92})});
  r.push_back({"wire type 6", hlo + Raw({0x0e})});
  r.push_back({"wire type 7 inside HloProto", Len(1, Raw({0x0f, 0x00}))});
  r.push_back({"a group (wire types 3 and 4)", hlo + Raw({0x7b, 0x7c}), true});
  r.push_back({"an unmatched end group", hlo + Raw({0x7c})});
  // Sizes: at most 5 bytes (protobuf reads a 32-bit varint).
  r.push_back({"arguments size padded to 5 bytes",
               hlo +
                   Raw({0x12, 0x80 | static_cast<int>(a.size()), 0x80, 0x80,
                        0x80, 0x00}) +
                   a});
  r.push_back({"arguments size padded to 6 bytes",
               hlo +
                   Raw({0x12, 0x80 | static_cast<int>(a.size()), 0x80, 0x80,
                        0x80, 0x80, 0x00}) +
                   a});
  r.push_back({"arguments size past the end", hlo + Raw({0x12, 0x7f}) + a});
  r.push_back({"arguments size of 2^31",
               hlo + Raw({0x12, 0x80, 0x80, 0x80, 0x80, 0x08})});
  r.push_back(
      {"hlo_module size past the HloProto", Len(1, Raw({0x0a, 0x05, 0x0a}))});
  // Varints: 10 bytes at most; a 10th byte above 1 is refused by us only.
  r.push_back({"unknown varint of 10 bytes",
               hlo + Raw({0x48, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                          0xff, 0x01})});
  r.push_back({"unknown varint with bits past 64",
               hlo + Raw({0x48, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                          0xff, 0x7f}),
               true});
  r.push_back({"unknown varint of 11 bytes",
               hlo + Raw({0x48, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                          0xff, 0x80, 0x00})});
  r.push_back({"truncated fixed64", hlo + Raw({0x51, 1, 2, 3})});
  return r;
}

// Unknown fields of `m` other than numbers 2 and 3 (which the header drops).
int KeptUnknownFields(const xla::HloSnapshot& m) {
  const google::protobuf::UnknownFieldSet& u =
      m.GetReflection()->GetUnknownFields(m);
  int n = 0;
  for (int i = 0; i < u.field_count(); ++i) {
    if (u.field(i).number() != 2 && u.field(i).number() != 3) ++n;
  }
  return n;
}

TEST(ClassicWireAgreement, SnapshotWalksAcceptExactlyWhatProtobufAccepts) {
  for (const WireRow& row : WireRows()) {
    SCOPED_TRACE(row.name);
    xla::HloSnapshot pb;
    const bool pb_ok = pb.ParseFromString(row.bytes);
    MemorySource src(row.bytes);
    const ByteRange all{0, row.bytes.size()};
    absl::StatusOr<ClassicSnapshot> snap =
        IndexClassicSnapshot(src, all, Frame{"snapshot"});
    std::string header;
    absl::Status h =
        ReadLiteralEmptySnapshot(src, all, Frame{"snapshot"}, &header);
    absl::StatusOr<std::string> empty = LiteralEmptySnapshot(row.bytes);
    if (row.stricter) {
      ASSERT_TRUE(pb_ok) << "protobuf must accept a stricter row";
      EXPECT_FALSE(snap.ok());
      EXPECT_FALSE(h.ok());
      EXPECT_FALSE(empty.ok());
      continue;
    }
    EXPECT_EQ(snap.ok(), pb_ok) << snap.status();
    EXPECT_EQ(h.ok(), empty.ok());
    if (pb_ok) {
      EXPECT_TRUE(h.ok()) << h;
    } else if (h.ok()) {
      xla::HloSnapshot refused;
      EXPECT_FALSE(refused.ParseFromString(header));
    }
    if (!pb_ok || !snap.ok()) {
      if (!snap.ok()) {
        EXPECT_THAT(std::string(snap.status().message()),
                    ::testing::HasSubstr("(at byte "));
      }
      continue;
    }
    // Same values: the module, every argument, the merged result.
    EXPECT_EQ(Reserialized<xla::HloModuleProto>(row.bytes, snap->module),
              pb.hlo().hlo_module().SerializeAsString());
    EXPECT_EQ(snap->arguments, static_cast<uint64_t>(pb.arguments_size()));
    std::vector<std::string> args;
    ASSERT_TRUE(ForEachClassicInput(
                    src, *snap, Frame{"snapshot"},
                    [](int64_t i) {
                      return Frame{"input", i, "body"};
                    },
                    [&](std::span<const ByteRange> lit, int64_t) {
                      args.push_back(
                          Reserialized<xla::LiteralProto>(row.bytes, lit));
                      return absl::OkStatus();
                    })
                    .ok());
    ASSERT_EQ(args.size(), static_cast<size_t>(pb.arguments_size()));
    for (int i = 0; i < pb.arguments_size(); ++i) {
      EXPECT_EQ(args[i], pb.arguments(i).SerializeAsString());
    }
    EXPECT_EQ(!snap->result.empty(), pb.has_result());
    if (pb.has_result()) {
      EXPECT_EQ(Reserialized<xla::LiteralProto>(row.bytes, snap->result),
                pb.result().SerializeAsString());
    }
    // The header: protobuf's message without its literals, unknown fields
    // other than 2 and 3 kept.
    EXPECT_EQ(header, *empty);
    xla::HloSnapshot got;
    ASSERT_TRUE(got.ParseFromString(header));
    EXPECT_EQ(got.arguments_size(), 0);
    EXPECT_FALSE(got.has_result());
    EXPECT_EQ(KeptUnknownFields(got), KeptUnknownFields(pb));
    xla::HloSnapshot want = pb;
    want.clear_arguments();
    want.clear_result();
    want.DiscardUnknownFields();
    got.DiscardUnknownFields();
    EXPECT_EQ(got.SerializeAsString(), want.SerializeAsString());
  }
}

TEST(ClassicWireAgreement, ProgramShapeWalkAcceptsExactlyWhatProtobufAccepts) {
  // The module's top level varies around a valid program shape; the walk
  // reads it only for a single argument (the single-tuple-parameter rule).
  const std::string ps =
      Module({{Tuple({kA, kB})}}).host_program_shape().SerializeAsString();
  xla::ProgramShapeProto more;
  *more.add_parameter_names() = "p";
  struct Row {
    std::string name;
    std::string module;
    bool stricter = false;
  };
  std::vector<Row> rows = {
      {"no program shape", Len(1, "m")},
      {"program shape", Len(1, "m") + Len(4, ps)},
      {"program shape twice, merged",
       Len(4, ps) + Len(1, "m") + Len(4, more.SerializeAsString())},
      {"program shape as a varint (unknown)", Raw({0x20, 0x01})},
      {"unknown fields", Len(4, ps) + Raw({0x98, 0x01, 0x01}) + Len(30, "z")},
      {"program shape size past the end", Raw({0x22, 0x7f}) + ps},
      {"tag padded to 6 bytes",
       Raw({0xa2, 0x80, 0x80, 0x80, 0x80, 0x00, static_cast<int>(ps.size())}) +
           ps},
      {"a group", Len(4, ps) + Raw({0x7b, 0x7c}), true},
      {"malformed program shape", Len(4, Raw({0x0a, 0x09, 0x10}))},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    xla::HloModuleProto pb;
    const bool pb_ok = pb.ParseFromString(row.module);
    std::string bytes = Len(1, Len(1, row.module));
    MemorySource src(bytes);
    absl::StatusOr<ClassicSnapshot> snap =
        IndexClassicSnapshot(src, {0, bytes.size()}, Frame{"snapshot"});
    ASSERT_TRUE(snap.ok()) << snap.status();  // the module is not walked
    absl::StatusOr<std::optional<xla::ProgramShapeProto>> got =
        ClassicProgramShape(src, *snap, Frame{"snapshot"});
    if (row.stricter) {
      ASSERT_TRUE(pb_ok);
      EXPECT_FALSE(got.ok());
      continue;
    }
    EXPECT_EQ(got.ok(), pb_ok) << got.status();
    if (!got.ok() || !pb_ok) continue;
    EXPECT_EQ(got->has_value(), pb.has_host_program_shape());
    if (*got) {
      EXPECT_EQ((*got)->SerializeAsString(),
                pb.host_program_shape().SerializeAsString());
    }
  }
}

TEST(ClassicWireAgreement, ASnapshotOf2GiBOrMoreIsRefusedAsProtobufRefusesIt) {
  // Only the declared range matters: the walk refuses before reading.
  std::string bytes = Len(1, "");
  MemorySource src(bytes);
  absl::StatusOr<ClassicSnapshot> snap = IndexClassicSnapshot(
      src, {0, limits::kMaxMessageBytes + 1}, Frame{"snapshot"});
  ASSERT_FALSE(snap.ok());
  EXPECT_EQ(snap.status().code(), absl::StatusCode::kResourceExhausted);
}

// --- the commands give the mapping's answer
// --------------------------------------

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
    auto from_classic =
        UnpackAll(classic, SnapshotType::kClassic, c.name + "_a");
    EXPECT_EQ(from_classic.size(), want.inputs.size() + want.outputs.size());
    // Convert to decomposed: the same lists, so the same files.
    std::string dec = dir_ + "/" + c.name + ".dhs";
    absl::Status s = ConvertClassicToDecomposed(classic, dec);
    ASSERT_TRUE(s.ok()) << s;
    auto from_decomposed =
        UnpackAll(dec, SnapshotType::kDecomposed, c.name + "_b");
    EXPECT_EQ(from_classic, from_decomposed);
    vo.snapshot_type = SnapshotType::kDecomposed;
    v = VerifyFile(dec, vo);
    ASSERT_TRUE(v.ok());
    EXPECT_TRUE(v->valid());
    EXPECT_EQ(v->inputs, want.inputs.size());
    EXPECT_EQ(*v->outputs, want.outputs.size());
    absl::StatusOr<InspectReport> in = InspectFile(dec);
    ASSERT_TRUE(in.ok()) << in.status();
    EXPECT_EQ(in->inputs.size(), want.inputs.size());
    EXPECT_EQ(in->outputs.size(), want.outputs.size());
    // Inspect lists the classic file's literals as the decomposed one's.
    InspectOptions io;
    io.snapshot_type = SnapshotType::kClassic;
    absl::StatusOr<InspectReport> ic = InspectFile(classic, io);
    ASSERT_TRUE(ic.ok()) << ic.status();
    ASSERT_EQ(ic->inputs.size(), in->inputs.size());
    ASSERT_EQ(ic->outputs.size(), in->outputs.size());
    for (size_t i = 0; i < in->inputs.size(); ++i) {
      EXPECT_EQ(ic->inputs[i].shape.ToString(), in->inputs[i].shape.ToString());
      EXPECT_EQ(ic->inputs[i].data_bytes, in->inputs[i].data_bytes);
    }
    for (size_t i = 0; i < in->outputs.size(); ++i) {
      EXPECT_EQ(ic->outputs[i].shape.ToString(),
                in->outputs[i].shape.ToString());
      EXPECT_EQ(ic->outputs[i].data_bytes, in->outputs[i].data_bytes);
    }
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
  absl::StatusOr<InspectReport> in = InspectFile(dec);
  ASSERT_TRUE(in.ok());
  ASSERT_EQ(in->outputs.size(), 2u);
  EXPECT_EQ(in->outputs[0].shape.ToString(), "F32[3]{0}");
  EXPECT_EQ(in->outputs[1].shape.ToString(), "F32[2,2]{1,0}");
}

}  // namespace
}  // namespace decomposed
