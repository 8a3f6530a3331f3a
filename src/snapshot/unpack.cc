#include "decomposed/snapshot/unpack.h"

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "decomposed/container/framing.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/spool_source.h"
#include "decomposed/limits.h"
#include "decomposed/npy/json_text.h"
#include "decomposed/npy/literal_to_npy.h"
#include "decomposed/npy/npy_sink.h"
#include "decomposed/snapshot/classic.h"
#include "decomposed/snapshot/reader.h"
#include "decomposed/status.h"
#include "decomposed/xla/literal_decoder.h"

namespace decomposed {

std::string_view UnpackedKindName(UnpackedKind kind) {
  // Indexed by the enum's value (unpack.h declares them in this order).
  constexpr std::string_view kNames[] = {
      "module", "value_input", "snapshot_output", "meta", "manifest", "npz"};
  static_assert(std::size(kNames) ==
                static_cast<size_t>(UnpackedKind::kArchive) + 1);
  const auto i = static_cast<size_t>(kind);
  return i < std::size(kNames) ? kNames[i] : kNames[0];
}

std::string_view UnpackedKindRole(UnpackedKind kind) {
  switch (kind) {
    case UnpackedKind::kInput:
      return "input";
    case UnpackedKind::kOutput:
      return "output";
    default:
      return UnpackedKindName(kind);
  }
}

// --- HloSnapshotSink ---------------------------------------------------------

HloSnapshotSink::HloSnapshotSink(const UnpackOptions& options,
                                 std::vector<UnpackedFile>* written)
    : options_(options), written_(written),
      dest_(MakeUnpackDestination(options)) {}

HloSnapshotSink::~HloSnapshotSink() = default;

void HloSnapshotSink::SetProgramShape(const xla::ProgramShapeProto& ps) {
  has_program_shape_ = true;
  parameter_names_.assign(ps.parameter_names().begin(),
                          ps.parameter_names().end());
  single_tuple_parameter_ = internal::SingleTupleParameter(ps);
}

absl::Status HloSnapshotSink::Finish() {
  if (options_.manifest) {
    const std::string text = JsonText(ManifestJson(options_, manifest_));
    UnpackedFile f;
    if (absl::Status s =
            dest_->Write(options_.output_prefix + "manifest.json", text, &f);
        !s.ok()) {
      return s;
    }
    f.kind = UnpackedKind::kManifest;
    Record(std::move(f));
  }
  absl::StatusOr<std::optional<UnpackedFile>> archive = dest_->Finish();
  if (!archive.ok()) return archive.status();
  // The archive exists now: its entries are announced, then the archive.
  for (UnpackedFile& f : unannounced_) Announce(std::move(f));
  unannounced_.clear();
  if (*archive) Record(std::move(**archive));
  return absl::OkStatus();
}

absl::Status HloSnapshotSink::ParseModule(std::span<const ByteRange> ranges,
                                          const Frame& frame, bool merge,
                                          std::string* bytes) {
  xla::HloModuleProto module;
  if (!module.ParseFromString(*bytes)) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame,
                      ranges.empty() ? 0 : ranges[0].offset,
                      "an HloModuleProto protobuf can parse",
                      "bytes it rejects");
  }
  if (!merge) return absl::OkStatus();
  if (options_.module_pass) {
    if (absl::Status s = options_.module_pass(module); !s.ok()) {
      return Prefix(s, "module pass");
    }
  }
  bytes->clear();
  if (!module.SerializeToString(bytes)) {
    return absl::InternalError("hlo_module: serializing failed");
  }
  return absl::OkStatus();
}

namespace {

void SetSource(std::span<const ByteRange> ranges, UnpackedFile* f) {
  if (ranges.empty()) return;
  f->source_offset = ranges.front().offset;
  for (const ByteRange& r : ranges) f->source_length += r.length;
}

}  // namespace

void HloSnapshotSink::RecordModule(UnpackedFile f,
                                   std::span<const ByteRange> ranges) {
  f.kind = UnpackedKind::kModule;
  SetSource(ranges, &f);
  Record(std::move(f));
}

absl::Status HloSnapshotSink::RunLiteralPass(std::span<const ByteRange> ranges,
                                             UnpackedKind kind, int64_t index,
                                             const Frame& frame,
                                             std::string* bytes) {
  xla::LiteralProto literal;
  if (!literal.ParseFromString(*bytes)) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame,
                      ranges.empty() ? 0 : ranges[0].offset,
                      "a LiteralProto protobuf can parse", "bytes it rejects");
  }
  if (absl::Status s = options_.literal_pass(literal, kind, index); !s.ok()) {
    return Prefix(s, absl::StrCat(Sv(UnpackedKindRole(kind)), " ", index,
                                  " literal pass"));
  }
  bytes->clear();
  literal.SerializeToString(bytes);
  return absl::OkStatus();
}

absl::Status HloSnapshotSink::RecordLiteral(UnpackedFile f,
                                            const std::string& path,
                                            UnpackedKind kind, int64_t index,
                                            const LiteralPlan& plan,
                                            std::span<const ByteRange> ranges) {
  const NpyHeader header = NpyHeaderFor(plan);
  f.kind = kind;
  f.index = index;
  f.shape = plan.shape.ToString();
  f.descr = header.descr;
  f.fortran_order = header.fortran_order;
  f.element_type = plan.shape.TypeName();
  f.dims = plan.shape.dimensions;
  if (plan.shape.has_layout) f.minor_to_major = plan.shape.layout.minor_to_major;
  SetSource(ranges, &f);
  if (kind == UnpackedKind::kInput && has_program_shape_) {
    f.parameter =
        InputParameterOf(parameter_names_, single_tuple_parameter_, index);
  }
  Record(std::move(f));
  if (options_.ml_dtype_sidecar && !plan.type->ml_dtype.empty()) {
    UnpackedFile meta;
    if (absl::Status m = dest_->Write(
            path + ".meta", NpyMetaSidecarText(plan.type->ml_dtype), &meta);
        !m.ok()) {
      return m;
    }
    meta.kind = UnpackedKind::kMeta;
    meta.index = index;
    Record(std::move(meta));
  }
  return absl::OkStatus();
}

void HloSnapshotSink::Record(UnpackedFile f) {
  if (options_.manifest && f.kind != UnpackedKind::kManifest &&
      f.kind != UnpackedKind::kArchive) {
    manifest_.push_back(f);
  }
  // An npz entry is announced (on_file, `written`) once its archive is
  // committed (Finish): a run that fails leaves no archive, so it reports
  // none of its entries as written.
  if (options_.output_format == UnpackFormat::kNpz &&
      f.kind != UnpackedKind::kArchive) {
    unannounced_.push_back(std::move(f));
    return;
  }
  Announce(std::move(f));
}

void HloSnapshotSink::Announce(UnpackedFile f) {
  if (options_.on_file) options_.on_file(f);
  if (written_) written_->push_back(std::move(f));
}

namespace {

UnpackedKind KindOf(LiteralRole role) {
  return role == LiteralRole::kOutput ? UnpackedKind::kOutput
                                      : UnpackedKind::kInput;
}

// Unpacks what `reader` reads, of either form: the module, then each
// literal from its bounded view (a stream keeps only the literal in hand).
template <RewindableSource S>
absl::Status UnpackFrom(SnapshotReader<S>& reader, const UnpackOptions& options,
                        std::vector<UnpackedFile>* written) {
  absl::StatusOr<const SnapshotHeader*> header = reader.ReadHeader();
  if (!header.ok()) return header.status();
  if (!(*header)->contents.ok()) return (*header)->contents;  // no module
  if (options.on_warning && !(*header)->warning.ok()) {
    options.on_warning((*header)->warning);
  }
  HloSnapshotSink sink(options, written);
  if (options.manifest) {
    absl::StatusOr<std::optional<xla::ProgramShapeProto>> ps =
        reader.ProgramShape();
    if (!ps.ok()) return ps.status();
    if (*ps) sink.SetProgramShape(**ps);
  }
  if (absl::Status s = sink.WriteModule(reader.header(), (*header)->module);
      !s.ok()) {
    return s;
  }
  SnapshotLiteral lit;
  for (;;) {
    absl::StatusOr<bool> more = reader.Next(&lit);
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (absl::Status s = sink.WriteLiteral(reader.body(), lit.ranges,
                                           KindOf(lit.role), lit.index);
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = reader.Finish(); !s.ok()) return s;
  return sink.Finish();
}

}  // namespace

absl::Status Unpack(const std::string& path, const UnpackOptions& options,
                    std::vector<UnpackedFile>* written) {
  SnapshotOpenOptions open;
  open.type = options.snapshot_type;
  open.box = options.box;
  open.access = SnapshotAccess::kBuffered;  // pread, splice: unpack's paths
  absl::StatusOr<std::unique_ptr<SnapshotFile>> file =
      SnapshotFile::Open(path, open);
  if (!file.ok()) return file.status();
  std::vector<UnpackedFile> local;
  std::vector<UnpackedFile>* files = written ? written : &local;
  const size_t before = files->size();
  SnapshotReadOptions read;
  read.box = options.box;
  read.outputs = options.dump_snapshot_outputs ? OutputsPolicy::kRequired
                                               : OutputsPolicy::kSkip;
  read.required_why = "the outputs asked for by dump-snapshot-outputs";
  SnapshotFile& f = **file;
  absl::Status s = f.Read(read, [&](auto& reader) {
    return UnpackFrom(reader, options, files);
  });
  // A stream is read to its end, so that its writer is not cut off.
  if (s.ok()) s = f.Drain();
  if (s.ok()) {
    if (options.progress) options.progress(f.size().value_or(0));  // all read
    return s;
  }
  s = f.Annotate(s);
  // Finished files stay (every output is atomic); say how many.
  size_t kept = 0;
  if (options.output_format == UnpackFormat::kNpyFiles) {
    for (size_t i = before; i < files->size(); ++i) {
      if ((*files)[i].kind != UnpackedKind::kArchive) ++kept;
    }
  }
  if (kept > 0) {
    s = WithMessage(s, absl::StrCat(s.message(), "; kept ",
                                    Counted(kept, "complete file"),
                                    " before the error"));
  }
  return s;
}

}  // namespace decomposed
