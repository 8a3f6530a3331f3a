// ReadModuleFile: a module from a file of any form (module_file.h).
#include "decomposed/snapshot/module_file.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "decomposed/hlo/parse.h"
#include "decomposed/hlo/tensors_dump.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/limits.h"
#include "decomposed/snapshot/classic.h"
#include "decomposed/snapshot/producer.h"
#include "decomposed/snapshot/reader.h"
#include "decomposed/snapshot/snapshot_type.h"
#include "decomposed/status.h"
#include "google/protobuf/stubs/logging.h"

namespace decomposed {
namespace {

constexpr size_t kTextProbeBytes = 4096;

// A module worth taking: protobuf parsed it and it has a computation.
bool HasComputations(const xla::HloModuleProto& m) {
  return m.computations_size() > 0;
}

std::string NoComputations(const xla::HloModuleProto& m) {
  return absl::StrCat("a module without computations (name \"",
                      m.name().substr(0, 64), "\")");
}

// The module of a snapshot in `bytes` (either form, as `type` says or as
// detected), through the one snapshot reader.
absl::StatusOr<xla::HloModuleProto> SnapshotModule(std::string_view bytes,
                                                   SnapshotType type,
                                                   std::string_view name) {
  MemorySource src(bytes);
  SnapshotReadOptions o;
  o.type = type;
  o.outputs = OutputsPolicy::kSkip;
  SnapshotReader<MemorySource> reader(src, o);
  absl::StatusOr<const SnapshotHeader*> h = reader.ReadHeader();
  if (!h.ok()) return h.status();
  absl::StatusOr<const xla::HloModuleProto*> m = reader.Module();
  if (!m.ok()) return m.status();
  if (*m == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "hlo_module: expected a module in the snapshot (HloSnapshot.hlo."
        "hlo_module), found none: a snapshot of arguments only"));
  }
  (void)name;
  return **m;
}

absl::StatusOr<ModuleFile> FromText(std::string_view bytes,
                                    std::string_view name) {
  absl::StatusOr<hlo::ParsedHloText> t = hlo::ParseHloText(bytes);
  if (!t.ok()) return WithFile(t.status(), std::string(name));
  ModuleFile f;
  f.module = std::move(t->module);
  f.extras = std::move(t->extras);
  f.has_extras = true;
  f.form = ModuleFileForm::kHloText;
  return f;
}

// No byte below 0x20 but tab, newline, carriage return and form feed in
// the first kTextProbeBytes.
bool TextHead(std::string_view bytes) {
  for (unsigned char c : bytes.substr(0, kTextProbeBytes)) {
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f') {
      return false;
    }
  }
  return true;
}

absl::StatusOr<ModuleFile> FromDump(std::string_view bytes, std::string_view name,
                                    const ModuleFileOptions& options) {
  const std::string file(name);
  absl::StatusOr<hlo::TensorsDump> dump = hlo::SplitTensorsDump(bytes);
  if (!dump.ok()) {
    return WithFile(absl::InvalidArgumentError(absl::StrCat(
                        "file: torch-xla graph dump: ", dump.status().message())),
                    file);
  }
  ModuleFile f;
  f.form = ModuleFileForm::kTensorsDump;
  f.graphs = static_cast<int64_t>(dump->graphs.size());
  if (options.graph == ModuleFileOptions::kEveryGraph) {
    f.dump_text = std::string(bytes);
    return f;
  }
  if (options.graph == ModuleFileOptions::kOnlyGraph && f.graphs != 1) {
    return WithFile(
        absl::InvalidArgumentError(absl::StrCat(
            "file: torch-xla graph dump: expected one graph, found ", f.graphs,
            "; name one, from 0 to ", f.graphs - 1,
            ", with `decomposed hlo --graph N` or Python's "
            "`decomposed.hlo.load(path, graph=N)`")),
        file);
  }
  f.graph = options.graph == ModuleFileOptions::kOnlyGraph ? 0 : options.graph;
  if (f.graph < 0 || f.graph >= f.graphs) {
    return WithFile(absl::InvalidArgumentError(absl::StrCat(
                        "file: torch-xla graph dump: expected a graph in [0, ",
                        f.graphs, "), found ", options.graph)),
                    file);
  }
  const hlo::TensorsDumpGraph& g = dump->graphs[static_cast<size_t>(f.graph)];
  absl::StatusOr<hlo::ParsedHloText> t = hlo::ParseHloText(g.text);
  if (!t.ok()) {
    return WithFile(absl::Status(t.status().code(),
                                 absl::StrCat("file: torch-xla graph dump: graph ", f.graph,
                                              ", whose text starts at line ", g.line, ": ",
                                              t.status().message())),
                    file);
  }
  f.module = std::move(t->module);
  f.extras = std::move(t->extras);
  f.has_extras = true;
  return f;
}

std::string Quote(const absl::Status& s) {
  return std::string(s.message());
}

}  // namespace

std::string_view ModuleFileFormName(ModuleFileForm form) {
  switch (form) {
    case ModuleFileForm::kDecomposedSnapshot: return "decomposed snapshot";
    case ModuleFileForm::kClassicSnapshot: return "classic snapshot";
    case ModuleFileForm::kHloModuleProto: return "HloModuleProto";
    case ModuleFileForm::kHloProto: return "HloProto";
    case ModuleFileForm::kHloUnoptimizedSnapshot: return "HloUnoptimizedSnapshot";
    case ModuleFileForm::kHloText: return "HLO text";
    case ModuleFileForm::kTensorsDump: return "torch-xla graph dump";
  }
  return "?";
}

bool LooksLikeHloText(std::string_view head) {
  head = head.substr(0, kTextProbeBytes);
  if (!TextHead(head)) return false;
  // The first word that is not whitespace or a comment.
  size_t i = 0;
  while (i < head.size()) {
    const char c = head[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      ++i;
    } else if (head.substr(i, 2) == "//" || c == '#') {
      const size_t nl = head.find('\n', i);
      if (nl == std::string_view::npos) return false;
      i = nl + 1;
    } else if (head.substr(i, 2) == "/*") {
      const size_t end = head.find("*/", i + 2);
      if (end == std::string_view::npos) return false;
      i = end + 2;
    } else {
      break;
    }
  }
  auto is_space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
  };
  static constexpr std::string_view kWord = "HloModule";
  if (head.substr(i, kWord.size()) == kWord) {
    const size_t after = i + kWord.size();
    return after == head.size() || is_space(head[after]);
  }
  // Text without the HloModule line, as XLA's parser also takes it (its
  // tools' test data has such files): computations from the first word,
  // `ENTRY main {`, `body {`, `%fused (p: f32[]) -> f32[] {`: an optional
  // ENTRY, a name, then `{` or `(` after optional spaces.
  static constexpr std::string_view kEntry = "ENTRY";
  if (head.substr(i, kEntry.size()) == kEntry && i + kEntry.size() < head.size() &&
      is_space(head[i + kEntry.size()])) {
    i += kEntry.size();
    while (i < head.size() && is_space(head[i])) ++i;
  }
  if (i < head.size() && head[i] == '%') ++i;
  auto name_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-';
  };
  const size_t name_start = i;
  while (i < head.size() && name_char(head[i])) ++i;
  if (i == name_start) return false;
  while (i < head.size() && is_space(head[i])) ++i;
  return i < head.size() && (head[i] == '{' || head[i] == '(');
}

absl::StatusOr<ModuleFile> ParseModuleBytes(std::string_view bytes,
                                            std::string_view name,
                                            const ModuleFileOptions& options) {
  const std::string file(name);
  if (bytes.empty()) {
    return WithFile(
        FrameError(absl::StatusCode::kInvalidArgument, Frame{"file"}, 0,
                   "a module file", "an empty file"),
        file);
  }
  if (TextHead(bytes) && hlo::LooksLikeTensorsDump(bytes)) {
    return FromDump(bytes, name, options);
  }
  if (options.graph >= 0) {
    return WithFile(absl::InvalidArgumentError(
                        "file: a graph was asked for (--graph), but the file "
                        "is not a torch-xla graph dump"),
                    file);
  }
  if (LooksLikeHloText(bytes)) {
    if (!options.keep_hlo_text) return FromText(bytes, name);
    ModuleFile f;
    f.form = ModuleFileForm::kHloText;
    f.dump_text = std::string(bytes);
    return f;
  }

  // A decomposed snapshot: by the snapshot detector's rule.
  {
    MemorySource src(bytes);
    absl::StatusOr<SnapshotTypeEvidence> e = DescribeSnapshotSource(src, {});
    if (e.ok() && e->type == SnapshotType::kDecomposed) {
      absl::StatusOr<xla::HloModuleProto> m =
          SnapshotModule(bytes, SnapshotType::kDecomposed, name);
      if (!m.ok()) return WithFile(m.status(), file);
      ModuleFile f;
      f.module = *std::move(m);
      f.form = ModuleFileForm::kDecomposedSnapshot;
      return f;
    }
  }
  if (bytes.size() > limits::kMaxMessageBytes) {
    return WithFile(
        FrameError(absl::StatusCode::kResourceExhausted, Frame{"file"}, 0,
                   "a protobuf module file under protobuf's 2 GiB limit, or "
                   "a decomposed snapshot",
                   absl::StrCat(bytes.size(), " bytes that are not a "
                                              "decomposed snapshot")),
        file);
  }
  // The protobuf readings. A wrong one may meet a string field that is not
  // UTF-8, which protobuf logs: silenced here, the outcome says it all.
  google::protobuf::LogSilencer quiet;
  std::string why_module, why_unoptimized, why_hlo, why_classic;
  {
    ModuleFile f;
    f.form = ModuleFileForm::kHloModuleProto;
    if (!f.module.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      why_module = "protobuf rejects the bytes";
    } else if (!HasComputations(f.module)) {
      why_module = NoComputations(f.module);
    } else {
      return f;
    }
  }
  {
    // An HloUnoptimizedSnapshot and an HloProto both hold the module in
    // field 1; the unoptimized snapshot's partitions (field 2, which an
    // HloProto lacks) tell them apart. One parse serves both readings: an
    // HloProto's buffer_assignment (field 3) is kept as an unknown field.
    xla::HloUnoptimizedSnapshot u;
    if (!u.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      why_unoptimized = why_hlo = "protobuf rejects the bytes";
    } else if (!u.has_hlo_module()) {
      why_unoptimized = "no hlo_module (field 1)";
      why_hlo = "no hlo_module (HloProto field 1)";
    } else if (!HasComputations(u.hlo_module())) {
      why_unoptimized = why_hlo = NoComputations(u.hlo_module());
    } else {
      ModuleFile f;
      f.form = u.partitions_size() > 0 ? ModuleFileForm::kHloUnoptimizedSnapshot
                                       : ModuleFileForm::kHloProto;
      f.module = std::move(*u.mutable_hlo_module());
      return f;
    }
  }
  {
    absl::StatusOr<xla::HloModuleProto> m =
        SnapshotModule(bytes, SnapshotType::kClassic, name);
    if (!m.ok()) {
      why_classic = Quote(m.status());
    } else if (!HasComputations(*m)) {
      why_classic = NoComputations(*m);
    } else {
      ModuleFile f;
      f.form = ModuleFileForm::kClassicSnapshot;
      f.module = *std::move(m);
      return f;
    }
  }
  return WithFile(
      WithLocation(absl::InvalidArgumentError(absl::StrCat(
          "file: not a module file: expected an HloModuleProto, an "
                "HloUnoptimizedSnapshot, an HloProto, a decomposed or classic "
                "snapshot, HLO text or a torch-xla graph dump; "
                "read as HloModuleProto, ",
          why_module, "; read as HloUnoptimizedSnapshot, ", why_unoptimized,
          "; read as HloProto, ", why_hlo,
          "; read as a classic snapshot, ", why_classic)),
                   "file", 0),
      file);
}

absl::StatusOr<ModuleFile> ReadModuleFile(const std::string& path,
                                          const ModuleFileOptions& options) {
  SnapshotOpenOptions o;
  o.access = SnapshotAccess::kMapped;
  o.spill_streams = true;
  o.snapshot_only = false;  // HLO text and module protos come this way too
  absl::StatusOr<std::unique_ptr<SnapshotFile>> f = SnapshotFile::Open(path, o);
  if (!f.ok()) return f.status();
  MmapSource* src = (*f)->mapped();
  if (src == nullptr) {
    return absl::InternalError(absl::StrCat(path, ": not mapped"));
  }
  src->Seek(0);
  const std::string_view bytes(src->cursor(), src->available());
  return ParseModuleBytes(bytes, path, options);
}

absl::StatusOr<std::string> SnapshotFromModuleFile(const std::string& path) {
  absl::StatusOr<std::string> module = ReadMessageFile(path);
  if (!module.ok()) return module.status();
  if (LooksLikeHloText(std::string_view(*module).substr(0, kTextProbeBytes)) ||
      (TextHead(*module) && hlo::LooksLikeTensorsDump(*module))) {
    // Text: HLO text, or a graph dump of one graph.
    absl::StatusOr<ModuleFile> parsed = ParseModuleBytes(*module, path);
    if (!parsed.ok()) return parsed.status();
    for (const xla::HloComputationProto& c : parsed->module.computations()) {
      for (const xla::HloInstructionProto& in : c.instructions()) {
        if (in.opcode() == "constant" && hlo::IsElidedLiteral(in.literal())) {
          return absl::InvalidArgumentError(absl::StrCat(
              path, ": constant \"", in.name(), "\" of computation \"", c.name(),
              "\": expected its values, found {...} (the text left them out; print it "
              "with --large-constants)"));
        }
      }
    }
    *module = parsed->module.SerializeAsString();
  }
  absl::StatusOr<std::string> snapshot = SnapshotFromModule(*module);
  if (!snapshot.ok()) return WithFile(snapshot.status(), path);
  return snapshot;
}

}  // namespace decomposed
