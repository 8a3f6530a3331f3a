// The snapshot reader: one reader for both forms of a snapshot file
// (docs/format.md §7 and §11), as riegeli's RecordReader is for its
// format: the form is the reader's business, not each command's.
//
//   SnapshotFile    opens a path or "-" once (the one open(2) of the input),
//                   tells a regular file from a stream, refuses an empty
//                   file, detects the form on the source it will read
//                   (docs/format.md §7.8), and owns that source: an
//                   FdSource, an MmapSource, or for a stream read in one pass
//                   a SpoolSource (a classic stream, or any stream when asked,
//                   is first copied whole to an unlinked temp file).
//   SnapshotReader  walks one snapshot on any RewindableSource: the form and
//                   the evidence for it, the header (where the HloSnapshot
//                   message and its module are), the module bytes (a bounded
//                   view, or parsed once on demand) and its facts, then the
//                   literals in order as pull-style references (role, index,
//                   byte ranges, a bounded view of the bytes), then a final
//                   check. Built by SnapshotFile::Read, or directly on a
//                   source (which it then also detects the form of).
//
// What a walk reads, by form:
//   decomposed  through DecomposedReader (container/framing.h), the one
//               place the file grammar is written: region [0] (the
//               header), the input block, and, as SnapshotReadOptions::
//               outputs says, the output block and the end of the file.
//   classic     through the classic mapping (classic.h): the HloSnapshot
//               records are indexed at ReadHeader (malformed records fail
//               there), the inputs are its `arguments` (or the elements of
//               a single tuple argument of a single-tuple-parameter
//               program), the outputs the top-level elements of a TUPLE
//               `result`, else the result. No literal data is read.
//
// Errors are absl::Status (status.h), naming the frame, the byte offset,
// what was expected and what was found, with the frame and offset also as
// payloads. Frames are the same for every command: "header length box",
// "input 3 body", "trailing data"; a classic file's message is
// "HloSnapshot". A failure of a walk is sticky: later calls return it.
// SnapshotFile::Annotate adds the input's name and, when the command named
// the form and the bytes look like the other one, the hint of
// WithSnapshotTypeHint (snapshot_type.h). Under kAuto, a file that looks
// like neither form and fails as classic says so first: "file: not a
// decomposed or classic snapshot; read as decomposed, <why>; read as
// classic, <why>" (frame "file", offset 0).
//
// Streams: a SpoolSource keeps what was read since the last literal, so
// the header's accessors (header(), module and program shape) must be used
// before the first Next(), which releases what precedes each literal; on
// any other source they may be used at any time. Results are cached.
//
// Example (list the literals of any snapshot):
//   absl::StatusOr<std::unique_ptr<decomposed::SnapshotFile>> f =
//       decomposed::SnapshotFile::Open(path);
//   if (!f.ok()) return f.status();
//   absl::Status s = (*f)->Read({}, [](auto& reader) -> absl::Status {
//     absl::StatusOr<const decomposed::SnapshotHeader*> h = reader.ReadHeader();
//     if (!h.ok()) return h.status();
//     decomposed::SnapshotLiteral lit;
//     for (;;) {
//       absl::StatusOr<bool> more = reader.Next(&lit);
//       if (!more.ok()) return more.status();
//       if (!*more) break;
//       // lit.frame().str() == "input 0 body"; reader.body() views its bytes
//     }
//     return reader.Finish();
//   });
//   return (*f)->Annotate(s);   // "... (at byte 4113 of x.dhs)"
#ifndef DECOMPOSED_SNAPSHOT_READER_H_
#define DECOMPOSED_SNAPSHOT_READER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/container/box.h"
#include "decomposed/container/framing.h"
#include "decomposed/io/bounded.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/fd.h"
#include "decomposed/io/limited_source.h"
#include "decomposed/io/spool_source.h"
#include "decomposed/limits.h"
#include "decomposed/proto/hlo.pb.h"
#include "decomposed/snapshot/classic.h"
#include "decomposed/snapshot/snapshot_type.h"
#include "decomposed/status.h"
#include "decomposed/wire/reader.h"
#include "decomposed/xla/literal_plan.h"

namespace decomposed {

// --- What a walk gives --------------------------------------------------------

// A literal's place in the snapshot: an input (region [1], `arguments`) or
// an output (region [2], the `result`'s elements).
enum class LiteralRole : uint8_t { kInput, kOutput };

// "input", "output": the role's word in frames ("input 3 body").
std::string_view LiteralRoleName(LiteralRole role);

// One literal, as Next() hands it out.
struct SnapshotLiteral {
  LiteralRole role = LiteralRole::kInput;
  int64_t index = 0;  // within its role, from 0
  // The bytes of its serialized LiteralProto: one range, or (a classic
  // file's repeated `result`, which protobuf merges) the occurrences whose
  // concatenation is the literal.
  LiteralRanges ranges;
  // Decomposed: its length box and body. Classic: no box (box_offset =
  // offset, box_length 0), the first range's offset and the sum of the
  // lengths, as inspect lists it.
  ElementInfo element;

  Frame frame() const { return Frame{LiteralRoleName(role), index, "body"}; }
};

// Where the HloSnapshot message is, and what ReadHeader found in it.
struct SnapshotHeader {
  // Decomposed: region [0], its length box and bytes. Classic: the whole
  // message, the file (no box).
  ElementInfo place;
  // The hlo.hlo_module payloads: none (a snapshot without a module, as XLA
  // writes arguments-only ones), one, or several that protobuf merges.
  std::vector<ByteRange> module;
  // The message's own `arguments` records and whether it has a `result`
  // (a classic file's literals; in a decomposed header, literals the
  // readers ignore, docs/format.md §7.2).
  uint64_t arguments = 0;
  bool result = false;
  // Decomposed: HeaderLiteralsWarning (classic.h) for a header carrying
  // literals, OK otherwise. Classic: OK.
  absl::Status warning;
  // Decomposed: OK when region [0]'s bytes are well-formed HloSnapshot
  // records, else why not ("header: expected ..."). Its framing is intact,
  // so the literals can still be read (verify and inspect go on), but
  // there is no module: the module accessors return this error, and a
  // consumer that needs the module (unpack) stops. Classic: OK (malformed
  // records fail ReadHeader, as nothing after them can be located).
  absl::Status contents;
};

// What inspect shows of a module: name, entry, program shape.
struct ModuleFacts {
  std::string name;                    // HloModuleProto.name
  std::string entry_computation_name;  // HloModuleProto.entry_computation_name
  // host_program_shape, when the module has one.
  std::optional<xla::ProgramShapeProto> program_shape;

  // host_program_shape.parameter_names (empty without a program shape).
  std::vector<std::string> parameter_names() const;
  // Each parameter's shape in XLA's notation, "F32[2,3]{1,0}"
  // ("<malformed>" for one the shape decoder refuses).
  std::vector<std::string> parameter_shapes() const;
  // The result's shape ("" without a program shape or result).
  std::string result_shape() const;
  // "(F32[2,3]{1,0}, S32[4]{0}) -> F32[2,3]{1,0}", "" without one.
  std::string program_shape_text() const;
  // The program's only parameter is a TUPLE: the inputs are its elements
  // (InputParameterOf, classic.h).
  bool single_tuple_parameter() const;
};

// The facts of a parsed module.
ModuleFacts FactsOf(const xla::HloModuleProto& module);

// Which outputs a walk reads.
enum class OutputsPolicy : uint8_t {
  // Region [2] when any byte follows region [1] (then the end of the file
  // is checked), a classic file's `result` when it has one (inspect,
  // verify, convert, compare, stats, the Python package).
  kIfPresent,
  // The same, and their absence is an error (unpack
  // --dump-snapshot-outputs): decomposed "output count box: expected
  // region [2] (<required_why>), found the end of the file: this file holds
  // no outputs"; classic "output 0 body: expected a result literal
  // (HloSnapshot field 3) to dump, found none".
  kRequired,
  // None: the walk ends after the inputs and nothing after region [1] is
  // read or checked (unpack without --dump-snapshot-outputs, as
  // snapshot-unpack does).
  kSkip,
};

struct SnapshotReadOptions {
  // kAuto: detect (docs/format.md §7.8); kDecomposed or kClassic: read as
  // that form. SnapshotFile::Read sets it from what the file was opened as.
  SnapshotType type = SnapshotType::kAuto;
  // Length boxes (lenient_length_byte), also for detection.
  BoxReadOptions box;
  OutputsPolicy outputs = OutputsPolicy::kIfPresent;
  // kRequired: why, in its error.
  std::string_view required_why = "the outputs asked for";
};

// --- SnapshotReader -------------------------------------------------------------

// Walks one snapshot: ReadHeader(), then the header's accessors, then
// Next() until false, then Finish(). Calls out of order give
// kFailedPrecondition. Borrows the source, which must outlive the reader
// and be at byte 0 of the snapshot.
template <RewindableSource S>
class SnapshotReader {
 public:
  // Reads `src` as options.type; with kAuto detects the form on `src` first
  // (DescribeSnapshotSource) and seeks back. An empty source is an error
  // (EmptySnapshotError's, without a path), reported by ReadHeader.
  explicit SnapshotReader(S& src, SnapshotReadOptions options = {})
      : src_(src), options_(options), start_(src.position()) {
    if (!src_.Pull(1)) {
      failed_ = src_.status().ok()
                    ? FrameError(absl::StatusCode::kInvalidArgument,
                                 Frame{"file"}, start_, "a snapshot",
                                 "an empty file (an interrupted capture "
                                 "leaves one)")
                    : src_.status();
      return;
    }
    absl::StatusOr<SnapshotTypeEvidence> e =
        DescribeSnapshotSource(src_, options_.box);
    if (!e.ok()) {
      failed_ = e.status();
      return;
    }
    Init(*std::move(e), options_.type);
  }

  // Reads the snapshot at absolute position `start` of `src`, as
  // `requested` says, or, when it is kAuto, as `evidence` (what detection
  // saw on these bytes) says (SnapshotFile::Read).
  SnapshotReader(S& src, uint64_t start, SnapshotTypeEvidence evidence,
                 SnapshotType requested, SnapshotReadOptions options)
      : src_(src), options_(options), start_(start) {
    Init(std::move(evidence), requested);
  }

  SnapshotReader(const SnapshotReader&) = delete;
  SnapshotReader& operator=(const SnapshotReader&) = delete;

  // The form read (never kAuto) and what detection saw (empty evidence when
  // the form was named and not detected).
  SnapshotType type() const { return type_; }
  const SnapshotTypeEvidence& evidence() const { return evidence_; }
  // True when the form was detected (options.type kAuto).
  bool detected() const { return requested_ == SnapshotType::kAuto; }

  // Reads where the HloSnapshot message is and indexes it (its module and
  // literal records; for a classic file every top-level record, so a
  // malformed one fails here; for a decomposed header see
  // SnapshotHeader::contents). Errors: the decomposed framing's ("header
  // length box", "header"), the classic walk's ("HloSnapshot"); under
  // kAuto, for a file that looks like neither form, "file: not a decomposed
  // or classic snapshot; ...": one the decomposed rules refuse and whose
  // classic reading fails, or whose module protobuf rejects (so the module
  // of a file detected as classic is parsed here, once).
  absl::StatusOr<const SnapshotHeader*> ReadHeader() {
    if (!failed_.ok()) return failed_;
    if (state_ != kStart) return Order("ReadHeader");
    absl::Status s = type_ == SnapshotType::kDecomposed ? DecomposedHeader()
                                                        : ClassicHeader();
    if (!s.ok()) {
      if (type_ == SnapshotType::kClassic && detected() &&
          evidence_.evidence.empty()) {
        s = NotASnapshot(s);
      }
      return Fail(s);
    }
    state_ = kHeader;
    // Under auto, bytes that only begin like an HloSnapshot (an HloProto
    // dump: its field 1 is an HloModuleProto, where an HloSnapshot's is an
    // HloProto) index cleanly but hold a module protobuf rejects. When the
    // decomposed rules refused the file too, it is neither form.
    if (type_ == SnapshotType::kClassic && detected() &&
        !evidence_.decomposed_error.ok() && !header_.module.empty()) {
      absl::StatusOr<const xla::HloModuleProto*> m = Module();
      if (!m.ok() && m.status().code() == absl::StatusCode::kInvalidArgument &&
          !ErrnoOf(m.status())) {
        return Fail(NotASnapshot(m.status()));
      }
    }
    return &header_;
  }
  const SnapshotHeader& header_info() const { return header_; }

  // The HloSnapshot message's bytes as a bounded view (region [0]; a
  // classic file: the whole file), after ReadHeader(). Readers of it seek
  // inside it. On a stream, only until the first Next(); elsewhere at any
  // time, but it moves the source: body() must then be sought again.
  LimitedSource<S>& header() { return *header_view_; }

  // The message's bytes, whole (< 2 GiB: a decomposed header, also when its
  // records are malformed), and its non-literal records (the literal-empty
  // snapshot: what convert writes as a decomposed header, what verify
  // parses of a classic file), in `*out`.
  absl::Status ReadHeaderBytes(std::string* out) {
    if (absl::Status s = CheckHeaderAccess(/*contents=*/false); !s.ok()) {
      return s;
    }
    const ElementInfo& p = header_.place;
    if (absl::Status s = internal::SeekTo(src_, p.offset, Top()); !s.ok()) {
      return s;
    }
    return ReadToString(*header_view_, p.length, Top(), out);
  }
  absl::Status ReadLiteralEmptySnapshot(std::string* out) {
    if (absl::Status s = CheckHeaderAccess(); !s.ok()) return s;
    const ElementInfo& p = header_.place;
    return decomposed::ReadLiteralEmptySnapshot(
        *header_view_, ByteRange{p.offset, p.length}, Top(), out);
  }

  // --- The module -------------------------------------------------------------

  std::span<const ByteRange> module_ranges() const { return header_.module; }

  // The module's bytes as a bounded view (an HloModuleProto, as unpack
  // writes it to model.hlo), positioned at its first byte; nullptr when the
  // snapshot has no module or gives it in several occurrences (which must
  // be merged: Module()). Valid until the next call on this reader.
  absl::StatusOr<LimitedSource<S>*> ModuleView() {
    if (absl::Status s = CheckHeaderAccess(); !s.ok()) return s;
    if (header_.module.size() != 1) return nullptr;
    const ByteRange& m = header_.module[0];
    if (absl::Status s = internal::SeekTo(src_, m.offset, ModuleFrame());
        !s.ok()) {
      return s;
    }
    module_view_.emplace(src_, m.offset + m.length);
    return &*module_view_;
  }

  // The module, parsed by protobuf once (its occurrences merged), or
  // nullptr when the snapshot has no module. Errors: kResourceExhausted for
  // 2 GiB or more; kInvalidArgument "hlo_module: expected an
  // HloModuleProto protobuf can parse, found bytes it rejects (at byte N)".
  absl::StatusOr<const xla::HloModuleProto*> Module() {
    if (!module_status_.ok()) return module_status_;
    if (module_) return &*module_;
    if (absl::Status s = CheckHeaderAccess(); !s.ok()) return s;
    if (header_.module.empty()) return nullptr;
    absl::Status s = ParseModule();
    if (!s.ok()) {
      module_status_ = s;
      return s;
    }
    return &*module_;
  }

  // The module's facts (FactsOf(*Module())), or nullopt without a module.
  absl::StatusOr<std::optional<ModuleFacts>> Facts() {
    absl::StatusOr<const xla::HloModuleProto*> m = Module();
    if (!m.ok()) return m.status();
    if (*m == nullptr) return std::optional<ModuleFacts>();
    return std::optional<ModuleFacts>(FactsOf(**m));
  }

  // The module's host_program_shape (every occurrence merged), or nullopt
  // when it has none, read from the module's top-level records without
  // parsing the module. Errors: malformed records; a program shape protobuf
  // rejects.
  absl::StatusOr<std::optional<xla::ProgramShapeProto>> ProgramShape() {
    if (program_shape_) return *program_shape_;
    if (absl::Status s = CheckHeaderAccess(); !s.ok()) return s;
    absl::StatusOr<std::optional<xla::ProgramShapeProto>> ps =
        ClassicProgramShape(*header_view_, classic_, Top());
    if (!ps.ok()) return ps.status();
    program_shape_ = *ps;
    return *program_shape_;
  }

  // --- The literals -------------------------------------------------------------

  // The next literal: the inputs in order, then the outputs as
  // options.outputs says. True: `*literal` is set and body() views its
  // bytes until the next call. False: no more (then outputs_present() and
  // output_count() tell what region [2] or the result held). Errors: the
  // framing's (sticky: nothing after a framing error can be located); a
  // literal whose data is bad is the consumer's to find, and the walk goes
  // on.
  absl::StatusOr<bool> Next(SnapshotLiteral* literal) {
    if (!failed_.ok()) return failed_;
    if (state_ == kStart) return Order("Next");
    if (state_ >= kEnd) return false;
    absl::StatusOr<bool> more = type_ == SnapshotType::kDecomposed
                                    ? NextDecomposed(literal)
                                    : NextClassic(literal);
    if (!more.ok()) return Fail(more.status());
    if (!*more) {
      state_ = kEnd;
      body_ = nullptr;
    }
    return more;
  }

  // The bytes of the literal Next() returned last, as a bounded view at its
  // first byte: a decomposed element's body; a classic literal's range (for
  // merged occurrences, from the first to the end of the last; decoders
  // take `ranges`). Precondition: Next() returned true.
  LimitedSource<S>& body() { return *body_; }

  // Region [1]'s count and its count box's offset (a classic file: the
  // inputs the mapping gives, offset 0), once Next() was called.
  std::optional<uint64_t> input_count() const { return input_count_; }
  uint64_t input_count_offset() const { return input_count_offset_; }
  // Whether region [2] (a classic file: a result) is present, its count
  // and its count box's offset (classic: the result's first byte); known
  // once Next() reached the outputs. nullopt before, or with kSkip.
  std::optional<bool> outputs_present() const { return outputs_present_; }
  std::optional<uint64_t> output_count() const { return output_count_; }
  std::optional<uint64_t> output_count_offset() const {
    return output_count_offset_;
  }

  // Walks what is left (the literals not asked for are skipped, not read)
  // and checks the end: a decomposed file read with kIfPresent or
  // kRequired must end right after region [2] ("trailing data"). OK with
  // kSkip. Errors: the framing's, sticky.
  absl::Status Finish() {
    if (!failed_.ok()) return failed_;
    if (state_ == kStart) return Order("Finish");
    SnapshotLiteral skip;
    for (;;) {
      absl::StatusOr<bool> more = Next(&skip);
      if (!more.ok()) return more.status();
      if (!*more) break;
    }
    if (state_ == kDone) return absl::OkStatus();
    state_ = kDone;
    if (type_ == SnapshotType::kDecomposed &&
        options_.outputs != OutputsPolicy::kSkip) {
      if (absl::Status s = decomposed_->Finish(); !s.ok()) return Fail(s);
    }
    return absl::OkStatus();
  }

  S& source() { return src_; }
  const SnapshotReadOptions& options() const { return options_; }

 private:
  enum State { kStart, kHeader, kInputs, kOutputs, kEnd, kDone };

  void Init(SnapshotTypeEvidence evidence, SnapshotType requested) {
    evidence_ = std::move(evidence);
    requested_ = requested;
    type_ = requested == SnapshotType::kAuto ? evidence_.type : requested;
    if (!src_.Seek(start_)) {
      failed_ = src_.status().ok()
                    ? absl::InternalError(
                          "snapshot reader: the source cannot seek back to "
                          "the snapshot's first byte")
                    : src_.status();
      return;
    }
    if (type_ == SnapshotType::kDecomposed) {
      DecomposedReadOptions ro;
      ro.box = options_.box;
      decomposed_.emplace(src_, ro);
    }
  }

  absl::Status Order(std::string_view what) const {
    return absl::FailedPreconditionError(absl::StrCat(
        "SnapshotReader: ", Sv(what), " called out of order"));
  }
  absl::Status Fail(absl::Status s) {
    failed_ = s;
    return s;
  }
  // OK when the header may be read now (and, with `contents`, its records
  // are well-formed).
  absl::Status CheckHeaderAccess(bool contents = true) const {
    if (!failed_.ok()) return failed_;
    if (state_ == kStart) return Order("a header accessor");
    if (contents && !header_.contents.ok()) return header_.contents;
    if (state_ != kHeader && !seekable_header_) {
      return absl::FailedPreconditionError(
          "SnapshotReader: the header of a stream is gone once the literals "
          "are read");
    }
    return absl::OkStatus();
  }
  // The frame of the HloSnapshot message in errors.
  Frame Top() const {
    return Frame{type_ == SnapshotType::kDecomposed ? "header" : "HloSnapshot"};
  }
  static Frame ModuleFrame() { return Frame{"hlo_module"}; }

  absl::Status DecomposedHeader() {
    absl::StatusOr<ElementInfo> e = decomposed_->OpenHeader();
    if (!e.ok()) return e.status();
    header_.place = *e;
    // A view of its own (the framing's ends at StartInputs); the source is
    // at the header's first byte.
    header_own_.emplace(src_, e->offset + e->length);
    header_view_ = &*header_own_;
    // A source that never releases what it read keeps the header readable
    // after the literals; a SpoolSource does not.
    seekable_header_ = !requires(S & s, uint64_t p) { s.Release(p); };
    absl::StatusOr<ClassicSnapshot> snap = IndexClassicSnapshot(
        *header_view_, ByteRange{e->offset, e->length}, Top());
    if (!snap.ok()) {
      if (!src_.status().ok()) return snap.status();  // I/O: nothing more
      header_.contents = snap.status();
      return absl::OkStatus();
    }
    classic_ = *std::move(snap);
    Index();
    header_.warning = HeaderLiteralsWarning(header_.arguments, header_.result,
                                            e->offset);
    return absl::OkStatus();
  }

  absl::Status ClassicHeader() {
    std::optional<uint64_t> size = src_.size();
    if (!size) {
      HoldAhead(src_, ~uint64_t{0});  // a stream: read to its end
      size = src_.size();
    }
    if (!src_.status().ok()) return Prefix(src_.status(), Top());
    if (!size) {
      return absl::FailedPreconditionError(
          "HloSnapshot: a classic snapshot is read from a source of known "
          "size (a file, or a stream copied to one)");
    }
    const ByteRange message{start_, *size - start_};
    absl::StatusOr<ClassicSnapshot> snap =
        IndexClassicSnapshot(src_, message, Top());
    if (!snap.ok()) return snap.status();
    classic_ = *std::move(snap);
    header_.place = ElementInfo{message.offset, 0, message.offset,
                                message.length};
    if (absl::Status s = internal::SeekTo(src_, message.offset, Top());
        !s.ok()) {
      return s;
    }
    header_own_.emplace(src_, message.offset + message.length);
    header_view_ = &*header_own_;
    Index();
    header_.warning = absl::OkStatus();
    seekable_header_ = true;
    return absl::OkStatus();
  }

  void Index() {
    header_.module = classic_.module;
    header_.arguments = classic_.arguments;
    header_.result = !classic_.result.empty();
  }

  absl::Status ParseModule() {
    uint64_t total = 0;
    for (const ByteRange& r : header_.module) total += r.length;
    const uint64_t first = header_.module[0].offset;
    if (total > limits::kMaxMessageBytes) {
      return FrameError(absl::StatusCode::kResourceExhausted, ModuleFrame(),
                        first, "a module under protobuf's 2 GiB limit",
                        absl::StrCat(total, " bytes"));
    }
    std::string bytes;
    for (const ByteRange& r : header_.module) {
      if (absl::Status s = internal::SeekTo(src_, r.offset, ModuleFrame());
          !s.ok()) {
        return s;
      }
      std::string part;
      if (absl::Status s = ReadToString(src_, r.length, ModuleFrame(), &part);
          !s.ok()) {
        return s;
      }
      bytes += part;
    }
    xla::HloModuleProto m;
    if (!m.ParseFromString(bytes)) {
      return FrameError(absl::StatusCode::kInvalidArgument, ModuleFrame(),
                        first, "an HloModuleProto protobuf can parse",
                        "bytes it rejects");
    }
    module_.emplace(std::move(m));
    return absl::OkStatus();
  }

  // The literal `e` of the current block of the decomposed reader.
  void SetElement(const ElementInfo& e, LiteralRole role, int64_t index,
                  BlockReader<S>& block, SnapshotLiteral* literal) {
    literal->role = role;
    literal->index = index;
    literal->ranges.assign(1, ByteRange{e.offset, e.length});
    literal->element = e;
    body_ = &block.body();
  }

  absl::StatusOr<bool> NextDecomposed(SnapshotLiteral* literal) {
    DecomposedReader<S>& r = *decomposed_;
    if (state_ == kHeader) {
      absl::StatusOr<uint64_t> n = r.StartInputs();
      if (!n.ok()) return n.status();
      input_count_ = *n;
      input_count_offset_ = r.inputs().count_offset();
      state_ = kInputs;
    }
    ElementInfo e;
    if (state_ == kInputs) {
      // A stream keeps only the literal in hand from here on.
      ReleaseBefore(src_, src_.position());
      absl::StatusOr<bool> more = r.NextInput(&e);
      if (!more.ok()) return more.status();
      if (*more) {
        SetElement(e, LiteralRole::kInput, r.inputs().current_index(),
                   r.inputs(), literal);
        return true;
      }
      if (options_.outputs == OutputsPolicy::kSkip) return false;
      if (options_.outputs == OutputsPolicy::kRequired) {
        absl::StatusOr<uint64_t> m =
            r.StartRequiredOutputs(options_.required_why);
        if (!m.ok()) return m.status();
        outputs_present_ = true;
        output_count_ = *m;
      } else {
        absl::StatusOr<std::optional<uint64_t>> m = r.StartOutputs();
        if (!m.ok()) return m.status();
        outputs_present_ = m->has_value();
        if (!*outputs_present_) return false;
        output_count_ = **m;
      }
      output_count_offset_ = r.outputs().count_offset();
      state_ = kOutputs;
    }
    ReleaseBefore(src_, src_.position());
    absl::StatusOr<bool> more = r.NextOutput(&e);
    if (!more.ok()) return more.status();
    if (!*more) return false;
    SetElement(e, LiteralRole::kOutput, r.outputs().current_index(),
               r.outputs(), literal);
    return true;
  }

  // Sets `*literal` to the classic literal of `ranges` and views it.
  absl::Status SetRanges(LiteralRanges ranges, LiteralRole role,
                         int64_t index, SnapshotLiteral* literal) {
    literal->role = role;
    literal->index = index;
    literal->ranges = std::move(ranges);
    const LiteralRanges& r = literal->ranges;
    ElementInfo e;
    e.box_offset = e.offset = r.empty() ? 0 : r.front().offset;
    for (const ByteRange& x : r) e.length += x.length;
    literal->element = e;
    const uint64_t end = r.empty() ? e.offset : r.back().offset + r.back().length;
    if (absl::Status s = internal::SeekTo(src_, e.offset, literal->frame());
        !s.ok()) {
      return s;
    }
    classic_view_.emplace(src_, end);
    body_ = &*classic_view_;
    return absl::OkStatus();
  }

  absl::StatusOr<bool> NextClassic(SnapshotLiteral* literal) {
    if (state_ == kHeader) {
      absl::Status s = StartClassicInputs();
      if (!s.ok()) return s;
      state_ = kInputs;
    }
    if (state_ == kInputs) {
      absl::StatusOr<std::optional<ByteRange>> in = NextClassicInput();
      if (!in.ok()) return in.status();
      if (*in) {
        absl::Status s = SetRanges({**in}, LiteralRole::kInput, next_input_++,
                                   literal);
        if (!s.ok()) return s;
        return true;
      }
      if (options_.outputs == OutputsPolicy::kSkip) return false;
      if (classic_.result.empty()) {
        outputs_present_ = false;
        if (options_.outputs == OutputsPolicy::kRequired) {
          return FrameError(absl::StatusCode::kInvalidArgument,
                            Frame{"output", 0, "body"},
                            classic_.message.offset + classic_.message.length,
                            "a result literal (HloSnapshot field 3) to dump",
                            "none (XLA: \"LiteralProto has no shape\")");
        }
        return false;
      }
      absl::StatusOr<std::vector<LiteralRanges>> outs =
          ClassicOutputs(src_, classic_, Frame{"result"});
      if (!outs.ok()) return outs.status();
      classic_outputs_ = *std::move(outs);
      outputs_present_ = true;
      output_count_ = classic_outputs_.size();
      output_count_offset_ = classic_.result[0].offset;
      state_ = kOutputs;
    }
    if (next_output_ >= classic_outputs_.size()) return false;
    const size_t j = next_output_++;
    absl::Status s = SetRanges(std::move(classic_outputs_[j]),
                               LiteralRole::kOutput, static_cast<int64_t>(j),
                               literal);
    if (!s.ok()) return s;
    return true;
  }

  // The classic mapping's inputs (ForEachClassicInput, pulled): the
  // elements of a single tuple argument of a single-tuple-parameter
  // program, else one per `arguments` record.
  absl::Status StartClassicInputs() {
    input_count_ = classic_.arguments;
    next_record_ = classic_.message.offset;
    if (classic_.arguments != 1) return absl::OkStatus();
    absl::StatusOr<std::optional<xla::ProgramShapeProto>> ps = ProgramShape();
    if (!ps.ok()) return ps.status();
    if (!*ps || !internal::SingleTupleParameter(**ps)) {
      return absl::OkStatus();
    }
    absl::StatusOr<LiteralPlan> plan =
        PlanLiteral(src_, std::span<const ByteRange>(&classic_.first_argument, 1),
                    Frame{"input", 0, "body"});
    if (!plan.ok()) return plan.status();
    if (plan->has_shape && plan->shape.is_tuple()) {
      tuple_inputs_ = std::move(plan->tuple_literals);
      tuple_mode_ = true;
      input_count_ = tuple_inputs_.size();
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<ByteRange>> NextClassicInput() {
    if (tuple_mode_) {
      if (next_input_ >= static_cast<int64_t>(tuple_inputs_.size())) {
        return std::optional<ByteRange>();
      }
      return std::optional<ByteRange>(tuple_inputs_[next_input_]);
    }
    const uint64_t end = classic_.message.offset + classic_.message.length;
    if (next_record_ >= end) return std::optional<ByteRange>();
    absl::StatusOr<wire::FieldReader<S>> r =
        internal::HloSnapshotFields(src_, classic_.message, Top(), next_record_);
    if (!r.ok()) return r.status();
    wire::Field f;
    while (r->Next(f)) {
      next_record_ = f.end();
      if (f.Is(2, wire::kLen)) {
        return std::optional<ByteRange>(ByteRange{f.offset, f.length});
      }
    }
    if (!r->ok()) return r->status();
    next_record_ = end;
    return std::optional<ByteRange>();
  }

  absl::Status NotASnapshot(const absl::Status& classic) const {
    // I/O errors and the like are not about the bytes.
    const absl::StatusCode c = classic.code();
    if (ErrnoOf(classic) ||
        (c != absl::StatusCode::kInvalidArgument &&
         c != absl::StatusCode::kOutOfRange &&
         c != absl::StatusCode::kResourceExhausted)) {
      return classic;
    }
    std::string msg =
        absl::StrCat(Frame{"file"}.str(), ": not a decomposed or classic "
                                          "snapshot; ");
    if (!evidence_.decomposed_error.ok()) {
      absl::StrAppend(&msg, "read as decomposed, ",
                      evidence_.decomposed_error.message(), "; ");
    }
    absl::StrAppend(&msg, "read as classic, ", classic.message());
    // The offset is where the classic reading failed, the place the
    // message ends with (the file's start when it names none).
    return WithLocation(absl::InvalidArgumentError(msg), Frame{"file"}.str(),
                        OffsetOf(classic).value_or(start_));
  }

  S& src_;
  SnapshotReadOptions options_;
  uint64_t start_;
  SnapshotTypeEvidence evidence_;
  SnapshotType requested_ = SnapshotType::kAuto;
  SnapshotType type_ = SnapshotType::kClassic;
  State state_ = kStart;
  absl::Status failed_;
  std::optional<DecomposedReader<S>> decomposed_;
  ClassicSnapshot classic_;
  SnapshotHeader header_;
  std::optional<LimitedSource<S>> header_own_;
  LimitedSource<S>* header_view_ = nullptr;
  bool seekable_header_ = true;
  std::optional<LimitedSource<S>> classic_view_;  // a classic literal's
  std::optional<LimitedSource<S>> module_view_;
  LimitedSource<S>* body_ = nullptr;
  std::optional<xla::HloModuleProto> module_;
  absl::Status module_status_;
  std::optional<std::optional<xla::ProgramShapeProto>> program_shape_;
  // Counts, as Next() learns them.
  std::optional<uint64_t> input_count_;
  uint64_t input_count_offset_ = 0;
  std::optional<bool> outputs_present_;
  std::optional<uint64_t> output_count_;
  std::optional<uint64_t> output_count_offset_;
  // The classic walk.
  uint64_t next_record_ = 0;
  bool tuple_mode_ = false;
  std::vector<ByteRange> tuple_inputs_;
  int64_t next_input_ = 0;
  std::vector<LiteralRanges> classic_outputs_;
  size_t next_output_ = 0;
};

// --- SnapshotFile -------------------------------------------------------------------

// The source a SnapshotFile reads a regular file (or a spilled stream)
// through.
enum class SnapshotAccess : uint8_t {
  // FdSource: pread(2) into a 256 KiB window, the kernel-copy paths
  // (splice, copy_file_range, tiled pread transposes), no page of the file
  // mapped into the process (bounded RSS): unpack, compare, stats.
  kBuffered,
  // MmapSource: the file mapped, zero-copy views (ReadView): verify,
  // inspect, convert, the Python package.
  kMapped,
};

struct SnapshotOpenOptions {
  // kAuto: detect the form (docs/format.md §7.8); else read as named.
  SnapshotType type = SnapshotType::kAuto;
  // The length-box rules, for detection (SnapshotReadOptions::box reads).
  BoxReadOptions box;
  SnapshotAccess access = SnapshotAccess::kBuffered;
  // Copy any stream whole to an unlinked temp file first, for readers that
  // go back and forth (convert, compare, stats). Otherwise only a classic
  // stream is copied (it is read twice: indexed, then its literals); a
  // decomposed stream is read in one pass through a SpoolSource.
  bool spill_streams = false;
  // The stream is read as nothing but a snapshot: one detected as classic
  // is copied at most to just past protobuf's 2 GiB limit (a longer one is
  // refused), and one whose first byte starts no protobuf record (/dev/zero)
  // is not copied past what detection read, as it fails at byte 0. False
  // for readers of other formats through this one open (module files: HLO
  // text, whose first byte may be any letter, held to the parser's 4 GiB,
  // refused early only for a first byte below 8).
  bool snapshot_only = true;
};

// An input opened once. Not copyable; the sources it owns live as long as
// it does.
class SnapshotFile {
 public:
  // Opens `path` ("-": standard input) with one open(2), and detects its
  // form on the source it will be read through. Standard input redirected
  // from a regular file at byte 0 is that file (no copy). A stream (a pipe,
  // a FIFO, a character device, "-" otherwise) is read from a SpoolSource:
  // in memory up to limits::kSpoolMemoryBytes, beyond it in an unlinked
  // temp file under $TMPDIR (else /tmp).
  // Errors: OpenError (io/input.h, "Could not open: <path>: <reason>"), a
  // directory (kFailedPrecondition), EmptySnapshotError, read errors; each
  // names `path`.
  static absl::StatusOr<std::unique_ptr<SnapshotFile>> Open(
      const std::string& path, const SnapshotOpenOptions& options = {});

  SnapshotFile(const SnapshotFile&) = delete;
  SnapshotFile& operator=(const SnapshotFile&) = delete;
  ~SnapshotFile();

  const std::string& path() const { return path_; }
  // The form it is read as (never kAuto), what was asked, and what
  // detection saw.
  SnapshotType type() const { return type_; }
  SnapshotType requested() const { return requested_; }
  const SnapshotTypeEvidence& evidence() const { return evidence_; }
  // The bytes arrive through a pipe, a FIFO or a device (and, unless
  // spilled, are read once).
  bool from_stream() const { return from_stream_; }
  // The input's size (a stream read in one pass: once it has ended).
  std::optional<uint64_t> size() const;

  // Exactly one is non-null: the source the input is read through.
  FdSource* buffered() { return buffered_.get(); }
  MmapSource* mapped() { return mapped_.get(); }
  SpoolSource<OwnedFd>* stream() { return stream_.get(); }

  // Calls fn(SnapshotReader<S>&) once, with a reader over this file's
  // source positioned at byte 0 (S is FdSource, MmapSource or
  // SpoolSource<OwnedFd>, so `fn` is a generic lambda), and returns what it
  // returns. options.type is this file's type; its box rules are
  // options.box. A stream read in one pass can be read once.
  template <class Fn>
  decltype(auto) Read(SnapshotReadOptions options, Fn&& fn) {
    options.type = type_;
    if (buffered_) return Run(*buffered_, options, fn);
    if (mapped_) return Run(*mapped_, options, fn);
    return Run(*stream_, options, fn);
  }

  // `failure` (from reading this file) with the file named (WithFile) and,
  // when the command named the form and the bytes look like the other one,
  // WithSnapshotTypeHint's hint. OK stays OK.
  absl::Status Annotate(const absl::Status& failure) const;

  // Reads a stream read in one pass to its end without keeping it (so that
  // the program writing it is not cut off when a reader stops early).
  // Errors: the stream's read errors. A no-op for a file.
  absl::Status Drain();

  // A new FdSource over the same file: its own window and position, over a
  // dup() of the descriptor (no open): for a reader that keeps literals to
  // read later, in any order (the analysis sets). Precondition: not read
  // in one pass (stream() is null).
  absl::StatusOr<std::unique_ptr<FdSource>> NewFdSource() const;

 private:
  SnapshotFile() = default;

  template <RewindableSource S, class Fn>
  decltype(auto) Run(S& src, const SnapshotReadOptions& options, Fn& fn) {
    // Detection read ahead; the reader seeks back to byte 0 (a stream
    // keeps it until its first literal is read).
    SnapshotReader<S> reader(src, 0, evidence_, requested_, options);
    return fn(reader);
  }

  // Makes the source of a regular file (or spilled stream) `fd`.
  absl::Status Adopt(OwnedFd fd, const SnapshotOpenOptions& options);

  std::string path_;
  SnapshotType type_ = SnapshotType::kClassic;
  SnapshotType requested_ = SnapshotType::kAuto;
  SnapshotTypeEvidence evidence_;
  bool from_stream_ = false;
  OwnedFd fd_;  // the regular file (or spilled copy) behind mapped_
  std::unique_ptr<FdSource> buffered_;
  std::unique_ptr<MmapSource> mapped_;
  std::unique_ptr<SpoolSource<OwnedFd>> stream_;
};

}  // namespace decomposed

#endif  // DECOMPOSED_SNAPSHOT_READER_H_
