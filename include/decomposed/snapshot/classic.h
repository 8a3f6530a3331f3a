// The classic mapping: one classic HloSnapshot <-> its module, its list of
// input literals and its list of output literals (docs/format.md
// §11.2 to §11.5). SnapshotReader (reader.h), through which every command
// reads a snapshot, maps classic files with this module, so they give one
// answer for one file.
//
// HloSnapshot { hlo = 1 (HloProto { hlo_module = 1 }), arguments = 2
// (repeated LiteralProto), result = 3 (LiteralProto), execution_platform =
// 4 }.
//
// Classic -> lists (IndexClassicSnapshot, then ForEachClassicInput and
// ClassicOutputs):
//   module   hlo.hlo_module.
//   inputs   one per `arguments` record, in order. Exception, the inverse of
//            the single-tuple-parameter rule below: when the program
//            (hlo_module.host_program_shape) has exactly one parameter, of
//            TUPLE type, and the snapshot exactly one argument, which is a
//            TUPLE literal, the inputs are that argument's top-level
//            tuple_literals. (snapshot-unpack would try to dump that tuple
//            argument as one array and fail; this way a classic file and
//            its decomposed conversion unpack to the same files.)
//   outputs  none without a `result`; a TUPLE result gives one output per
//            top-level tuple_literals element, as snapshot-unpack dumps it;
//            any other result is the one output.
// Lists -> classic (PlanClassic), as AWS's Python reader rebuilds a
// snapshot: inputs become `arguments`, except that a program whose only
// parameter is a TUPLE gets one tuple argument holding all inputs (unless
// the single input already is that tuple);
// outputs become `result`: a TUPLE literal of all outputs when
// host_program_shape.result is a tuple or missing (its tuple shape built
// from the outputs' own shapes; the element count must match the
// program's), or the one output itself when the program result is an array.
// No outputs: no result.
//
// Repeated singular fields MERGE. Protobuf parses a singular message field
// given more than once by merging the occurrences, and XLA (snapshot-unpack
// included) parses HloSnapshot with protobuf; so two `result` records mean
// one result, their merge. Concatenating serialized messages is exactly
// protobuf's merge, so a merged field is handed out as the list of its
// occurrences' byte ranges (LiteralRanges), to be read as one message: a
// merged TUPLE result's tuple_literals are those of every occurrence, in
// order. The same holds for `hlo`, `hlo_module` and `host_program_shape`.
// (Before this module, convert refused a repeated `result` while unpack
// merged it; now every command merges.)
//
// Records of fields 2 and 3 whose wire type is not length-delimited are
// unknown fields to protobuf, which keeps and ignores them: the mapping
// ignores them too (they are neither literals nor part of the header).
//
// Nothing here reads literal data: the walks (wire::FieldReader, with
// protobuf's rules and limits) read tags and lengths and skip payloads
// (seekable sources do not read them). A classic file is one protobuf
// message, so it must be under protobuf's 2 GiB limit: the walks refuse a
// larger one (kResourceExhausted), as protobuf does.
//
// Commands read snapshots through SnapshotReader (reader.h), which walks a
// classic file with these functions.
//
// Example (the outputs of a classic file):
//   decomposed::MmapSource src(path);
//   absl::StatusOr<decomposed::ClassicSnapshot> snap =
//       decomposed::IndexClassicSnapshot(src, {0, *src.size()},
//                                        decomposed::Frame{"HloSnapshot"});
//   absl::StatusOr<std::vector<decomposed::LiteralRanges>> outs =
//       decomposed::ClassicOutputs(src, *snap, decomposed::Frame{"result"});
#ifndef DECOMPOSED_SNAPSHOT_CLASSIC_H_
#define DECOMPOSED_SNAPSHOT_CLASSIC_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/bounded.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/limits.h"
#include "decomposed/proto/hlo.pb.h"
#include "decomposed/status.h"
#include "decomposed/wire/reader.h"
#include "decomposed/wire/writer.h"
#include "decomposed/xla/literal_decoder.h"
#include "decomposed/xla/literal_source.h"
#include "decomposed/xla/literal_encoder.h"
#include "decomposed/xla/literal_plan.h"

namespace decomposed {

// A literal as byte ranges of a source whose concatenation is its
// serialized LiteralProto: one range, or the occurrences of a merged field.
using LiteralRanges = std::vector<ByteRange>;

// Where the pieces of one classic HloSnapshot message are.
struct ClassicSnapshot {
  ByteRange message;              // the whole HloSnapshot
  std::vector<ByteRange> module;  // hlo.hlo_module payloads, merged
  uint64_t arguments = 0;         // `arguments` records
  ByteRange first_argument;       // the first one's payload
  std::vector<ByteRange> result;  // `result` payloads, merged; empty: none
};

namespace internal {

inline absl::Status TooManyOccurrences(const Frame& frame, uint64_t offset) {
  return FrameError(absl::StatusCode::kResourceExhausted, frame, offset,
                    absl::StrCat("at most ", limits::kMaxMergedOccurrences,
                                 " occurrences of the field"),
                    "more");
}

// Appends the payload of length-delimited `f` to a merged field's list.
inline absl::Status AddOccurrence(const wire::Field& f, const Frame& frame,
                                  std::vector<ByteRange>* list) {
  if (list->size() >= limits::kMaxMergedOccurrences) {
    return TooManyOccurrences(frame, f.tag_offset);
  }
  list->push_back({f.offset, f.length});
  return absl::OkStatus();
}

// Positions `src` at `offset` for a reader of the message there.
template <RewindableSource S>
absl::Status SeekTo(S& src, uint64_t offset, const Frame& frame) {
  if (src.Seek(offset)) return absl::OkStatus();
  if (!src.status().ok()) return Prefix(src.status(), frame);
  return FrameError(absl::StatusCode::kOutOfRange, frame, offset,
                    "a source holding the message", "one that ends first");
}

// A reader of the HloSnapshot in `message`, which must be under protobuf's
// 2 GiB limit (protobuf parses no larger message), from its first record
// or from the record at `from` (a record boundary inside it).
template <RewindableSource S>
absl::StatusOr<wire::FieldReader<S>> HloSnapshotFields(
    S& src, ByteRange message, const Frame& frame,
    std::optional<uint64_t> from = std::nullopt) {
  if (message.length > limits::kMaxMessageBytes) {
    return FrameError(absl::StatusCode::kResourceExhausted, frame,
                      message.offset,
                      "an HloSnapshot under protobuf's 2 GiB message limit "
                      "(a decomposed file streams larger literals)",
                      absl::StrCat(message.length, " bytes"));
  }
  if (absl::Status s = SeekTo(src, from.value_or(message.offset), frame);
      !s.ok()) {
    return s;
  }
  wire::FieldReader<S> r(src, message.offset + message.length, frame,
                         "HloSnapshot");
  if (!r.ok()) return r.status();
  return r;
}

// True when `ps` has exactly one parameter and it is a TUPLE.
bool SingleTupleParameter(const xla::ProgramShapeProto& ps);

// Parses `bytes` (the merged occurrences) as a ProgramShapeProto
// (kInvalidArgument when protobuf rejects it).
absl::StatusOr<xla::ProgramShapeProto> ParseProgramShape(std::string_view bytes,
                                                         const Frame& frame,
                                                         uint64_t offset);

}  // namespace internal

// The program parameter an input binds to (unpack --manifest, inspect
// --json): input i is parameter i (host_program_shape.parameter_names[i]),
// except for a program whose only parameter is a TUPLE, whose inputs are
// that tuple's elements (the classic mapping above): input i is then
// element i of parameter 0, and tuple_index is i.
struct InputParameter {
  std::string name;
  int64_t tuple_index = -1;  // -1: the input is the whole parameter
};

// nullopt when the program has no such parameter, or names none (an empty
// parameter_names list).
std::optional<InputParameter> InputParameterOf(
    std::span<const std::string> parameter_names, bool single_tuple_parameter,
    int64_t input_index);

// Walks the HloSnapshot in `message` of `src` with the wire reader
// (wire/reader.h): notes where hlo.hlo_module and `result` are (every
// occurrence), and counts `arguments`, without reading literal data.
// `frame` names the message in errors ("HloSnapshot", "header").
// Errors: those of wire::FieldReader (malformed records, a record running
// past the message, a source shorter than the message), a message of 2 GiB
// or more (kResourceExhausted: protobuf parses no such message), more than
// limits::kMaxMergedOccurrences occurrences of a merged field (kResourceExhausted).
template <RewindableSource S>
absl::StatusOr<ClassicSnapshot> IndexClassicSnapshot(S& src, ByteRange message,
                                                     const Frame& frame) {
  absl::StatusOr<wire::FieldReader<S>> r =
      internal::HloSnapshotFields(src, message, frame);
  if (!r.ok()) return r.status();
  ClassicSnapshot snap;
  snap.message = message;
  wire::Field f;
  while (r->Next(f)) {
    if (f.wire_type != wire::kLen) continue;  // unknown to protobuf
    absl::Status s;
    if (f.number == 1) {  // hlo: HloProto
      wire::FieldReader<S> hlo = r->Submessage(f, "HloProto");
      wire::Field h;
      while (s.ok() && hlo.Next(h)) {
        if (h.Is(1, wire::kLen)) {
          s = internal::AddOccurrence(h, frame, &snap.module);
        }
      }
      if (s.ok()) s = hlo.status();
    } else if (f.number == 2) {
      if (snap.arguments++ == 0) snap.first_argument = {f.offset, f.length};
    } else if (f.number == 3) {
      s = internal::AddOccurrence(f, frame, &snap.result);
    }
    if (!s.ok()) return s;
  }
  if (!r->ok()) return r->status();
  return snap;
}

// The program shape of the snapshot's module (host_program_shape, every
// occurrence in every module occurrence, merged), or nullopt when the
// module has none. Reads only the module's top-level tags and the program
// shape. Errors: malformed records; a program shape protobuf rejects.
template <RewindableSource S>
absl::StatusOr<std::optional<xla::ProgramShapeProto>> ClassicProgramShape(
    S& src, const ClassicSnapshot& snap, const Frame& frame) {
  const Frame module_frame{frame.name, frame.index, "hlo_module"};
  std::string bytes;
  bool found = false;
  uint64_t first = 0;
  for (const ByteRange& m : snap.module) {
    if (absl::Status s = internal::SeekTo(src, m.offset, module_frame);
        !s.ok()) {
      return s;
    }
    wire::FieldReader<S> r(src, m.offset + m.length, module_frame,
                           "HloModuleProto");
    wire::Field f;
    while (r.Next(f)) {
      if (!f.Is(4, wire::kLen)) continue;
      if (!found) first = f.offset;
      found = true;
      std::string part;
      // The module is under 2 GiB (the snapshot is), so is its program
      // shape: ReadPayload grows `part` only as bytes arrive.
      if (!r.ReadPayload(f, &part)) break;
      bytes += part;
    }
    if (!r.ok()) return r.status();
  }
  if (!found) return std::optional<xla::ProgramShapeProto>();
  absl::StatusOr<xla::ProgramShapeProto> ps = internal::ParseProgramShape(
      bytes, Frame{frame.name, frame.index, "host_program_shape"}, first);
  if (!ps.ok()) return ps.status();
  return std::optional<xla::ProgramShapeProto>(*std::move(ps));
}

// Calls fn(std::span<const ByteRange> literal, int64_t index) for each input
// of the snapshot, in order (see the file comment: one per `arguments`
// record, or the elements of a single tuple argument of a
// single-tuple-parameter program). `fn` may read `src` within the literal's
// ranges. `input_frame(index)` names input `index` in errors. Stops at the
// first non-OK status fn returns, and returns it.
template <RewindableSource S, class FrameFn, class Fn>
absl::Status ForEachClassicInput(S& src, const ClassicSnapshot& snap,
                                 const Frame& frame, FrameFn&& input_frame,
                                 Fn&& fn) {
  if (snap.arguments == 1) {
    absl::StatusOr<std::optional<xla::ProgramShapeProto>> ps =
        ClassicProgramShape(src, snap, frame);
    if (!ps.ok()) return ps.status();
    if (*ps && internal::SingleTupleParameter(**ps)) {
      absl::StatusOr<LiteralPlan> plan =
          PlanLiteral(src, std::span<const ByteRange>(&snap.first_argument, 1),
                      input_frame(int64_t{0}));
      if (!plan.ok()) return plan.status();
      if (plan->has_shape && plan->shape.is_tuple()) {
        for (size_t j = 0; j < plan->tuple_literals.size(); ++j) {
          if (absl::Status s =
                  fn(std::span<const ByteRange>(&plan->tuple_literals[j], 1),
                     static_cast<int64_t>(j));
              !s.ok()) {
            return s;
          }
        }
        return absl::OkStatus();
      }
    }
  }
  absl::StatusOr<wire::FieldReader<S>> r =
      internal::HloSnapshotFields(src, snap.message, frame);
  if (!r.ok()) return r.status();
  wire::Field f;
  int64_t i = 0;
  while (r->Next(f)) {
    if (!f.Is(2, wire::kLen)) continue;
    const ByteRange literal{f.offset, f.length};
    if (absl::Status s = fn(std::span<const ByteRange>(&literal, 1), i++);
        !s.ok()) {
      return s;
    }
  }
  return r->status();
}

// The outputs of the snapshot (see the file comment): none without a
// result, the top-level elements of a TUPLE result, else the result. Reads
// the result's records (not its data). `result_frame` names the result in
// errors. Errors: those of PlanLiteral.
template <RewindableSource S>
absl::StatusOr<std::vector<LiteralRanges>> ClassicOutputs(
    S& src, const ClassicSnapshot& snap, const Frame& result_frame) {
  std::vector<LiteralRanges> out;
  if (snap.result.empty()) return out;
  absl::StatusOr<LiteralPlan> plan =
      PlanLiteral(src, snap.result, result_frame);
  if (!plan.ok()) return plan.status();
  if (plan->has_shape && plan->shape.is_tuple()) {
    out.reserve(plan->tuple_literals.size());
    for (const ByteRange& t : plan->tuple_literals) out.push_back({t});
    return out;
  }
  out.push_back(snap.result);
  return out;
}

// Appends to `*out` every top-level record of the HloSnapshot in `message`
// except those of fields 2 and 3: the literal-empty snapshot (what the
// header, region [0], of a decomposed file holds). Errors: those of
// IndexClassicSnapshot's walk.
template <RewindableSource S>
absl::Status ReadLiteralEmptySnapshot(S& src, ByteRange message,
                                      const Frame& frame, std::string* out) {
  absl::StatusOr<wire::FieldReader<S>> r =
      internal::HloSnapshotFields(src, message, frame);
  if (!r.ok()) return r.status();
  std::vector<ByteRange> keep;  // runs of adjacent kept records
  wire::Field f;
  while (r->Next(f)) {
    if (f.number == 2 || f.number == 3) continue;
    if (!keep.empty() &&
        keep.back().offset + keep.back().length == f.tag_offset) {
      keep.back().length += f.end() - f.tag_offset;
    } else {
      keep.push_back({f.tag_offset, f.end() - f.tag_offset});
    }
  }
  if (!r->ok()) return r->status();
  // The kept bytes are part of a message under 2 GiB.
  for (const ByteRange& k : keep) {
    if (absl::Status s = internal::SeekTo(src, k.offset, frame); !s.ok()) {
      return s;
    }
    std::string part;
    if (absl::Status s = ReadToString(src, k.length, frame, &part); !s.ok()) {
      return s;
    }
    out->append(part);
  }
  return absl::OkStatus();
}

// The warning for a decomposed file's header (region [0], whose bytes
// start at `offset`) that carries `arguments` records and/or a `result`
// (docs/format.md §7.2): OK when it carries neither, else
// kFailedPrecondition "header: carries 2 arguments and a
// result (at byte 4); a decomposed file's literals are its blocks', so
// unpack ignores them as snapshot-unpack does (AWS's reader keeps them)".
// A warning, not an error: `verify --strict` and UnpackOptions callers
// decide.
absl::Status HeaderLiteralsWarning(uint64_t arguments, bool result,
                                   uint64_t offset);

// Removes `arguments` (2) and `result` (3) from serialized HloSnapshot
// bytes, keeping every other field record verbatim and in order
// (ReadLiteralEmptySnapshot over memory). Errors on malformed wire bytes,
// with the byte offset.
absl::StatusOr<std::string> LiteralEmptySnapshot(std::string_view snapshot);

// Wraps serialized HloModuleProto bytes, verbatim, into a literal-empty
// HloSnapshot: `0a <len> 0a <len> <module>` (hlo.hlo_module). The module is
// parsed once to check it is an HloModuleProto (kInvalidArgument if not)
// but not re-serialized, so a consumer extracts exactly the bytes given.
absl::StatusOr<std::string> SnapshotFromModule(std::string_view module_bytes);

// The literal-empty snapshot (a header) of an existing file, classic or
// decomposed (told apart by DetectSnapshotType, snapshot_type.h): a classic
// file is mapped and its `arguments`/`result` records skipped without
// reading them (so it may be larger than 2 GiB); a decomposed file gives its
// region [0] (with any baked-in literals dropped). The result must parse as
// an HloSnapshot (kInvalidArgument otherwise).
absl::StatusOr<std::string> LiteralEmptySnapshotOfFile(const std::string& path);

// Lists -> classic: how the literals of a decomposed file map onto a classic
// snapshot for a given program (see the file comment). Owns any tuple
// bodies it creates.
struct ClassicPlan {
  std::vector<LiteralSource*> arguments;
  LiteralSource* result = nullptr;
  std::vector<std::unique_ptr<LiteralSource>> owned;
};
// `snapshot` is HloSnapshot bytes whose module's host_program_shape decides
// the mapping (parsed with protobuf). Errors: kInvalidArgument when they do
// not parse, or the outputs do not match the program's result.
absl::StatusOr<ClassicPlan> PlanClassic(std::string_view snapshot,
                                        std::vector<LiteralSource*> inputs,
                                        std::vector<LiteralSource*> outputs);

// A TUPLE literal of `elements` (borrowed): shape {TUPLE, tuple_shapes =
// each element's shape}, then one tuple_literals record per element.
std::unique_ptr<LiteralSource> TupleLiteral(
    std::vector<LiteralSource*> elements, std::string name = "tuple");

}  // namespace decomposed

#endif  // DECOMPOSED_SNAPSHOT_CLASSIC_H_
