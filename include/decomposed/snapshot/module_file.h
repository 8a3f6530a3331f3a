// Reading an HLO module from a file of any form it is shipped in, told
// apart by content, not by name:
//
//   decomposed snapshot  region [0]'s HloSnapshot.hlo.hlo_module, through
//                        SnapshotReader (reader.h); no literal is read
//   classic snapshot     HloSnapshot.hlo.hlo_module, the same way (the
//                        arguments and result are skipped, never parsed)
//   HloModuleProto       a serialized module, as `unpack` writes model.hlo
//                        and `pack --module` reads it
//   HloProto             a serialized HloProto (field 1: the module), as
//                        XLA's --xla_dump_hlo_as_proto writes *.hlo.pb
//   HloUnoptimizedSnapshot  XLA's --xla_dump_hlo_unoptimized_snapshots
//                        file: its module (field 1; field 2, its partitions'
//                        arguments, tells it from an HloProto)
//   HLO text             XLA's text form (any of its three styles,
//                        docs/hlo.md §2), through hlo/parse.h (ParseHloText)
//   torch-xla graph dump XLA_SAVE_TENSORS_FILE with XLA_SAVE_TENSORS_FMT=hlo:
//                        graph reports and modules (hlo/tensors_dump.h);
//                        one graph is read, as ModuleFileOptions says
//
// Detection: text when the first 4 KiB hold no byte below 0x20 but tab,
// newline, carriage return and form feed (every protobuf message above
// starts with a length or a tag below 0x20 within its first bytes); a graph
// dump when the text's first non-blank line is `## BEGIN_GRAPH` or a `[Title]` line
// that such a line follows (hlo::LooksLikeTensorsDump); HLO text when the
// first word that is not a comment is `HloModule`, or begins a computation
// (text without the HloModule line, as XLA's parser takes it: an optional
// `ENTRY`, a name, then `{` or `(`); a decomposed snapshot
// when the snapshot detector says so (docs/format.md §7.8); otherwise the
// three protobuf readings are tried, each accepted only when it gives a
// module with at least one computation: an HloModuleProto, an HloProto, a
// classic HloSnapshot. Protobuf's own log lines about a wrong reading are
// silenced.
//
// The input is opened once (SnapshotFile: a path or "-"; a stream is
// copied to an unlinked temp file first). A protobuf file must be under
// 2 GiB, protobuf's limit (a decomposed snapshot may be larger: only its
// header is read).
//
// Errors name the file: an empty file, a file that is none of the forms
// ("<path>: not a module file: expected an HloModuleProto, an
// HloUnoptimizedSnapshot, an HloProto, ...; read as HloModuleProto, ...;
// read as HloUnoptimizedSnapshot, ...; read as HloProto, ...; read as a
// classic snapshot, ..."), a snapshot
// without a module, the snapshot reader's errors, and the text parser's
// (line:column).
//
// Example:
//   absl::StatusOr<decomposed::ModuleFile> m = decomposed::ReadModuleFile("model.hlo");
//   if (!m.ok()) return m.status();
//   std::cout << decomposed::ModuleFileFormName(m->form) << " "
//             << m->module.name() << "\n";     // "HloModuleProto example"
#ifndef DECOMPOSED_SNAPSHOT_MODULE_FILE_H_
#define DECOMPOSED_SNAPSHOT_MODULE_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "decomposed/hlo/text.h"
#include "decomposed/proto/hlo.pb.h"

namespace decomposed {

enum class ModuleFileForm {
  kDecomposedSnapshot,
  kClassicSnapshot,
  kHloModuleProto,
  kHloProto,
  // XLA's --xla_dump_hlo_unoptimized_snapshots file: an HloModuleProto and
  // each partition's arguments (HloUnoptimizedSnapshot, proto/hlo.proto).
  // Its module is read; its arguments are not. One without partitions is
  // on the wire an HloProto, and is read as one.
  kHloUnoptimizedSnapshot,
  kHloText,
  // torch-xla's XLA_SAVE_TENSORS_FILE dump of HLO text: graph reports and
  // modules between `## BEGIN_GRAPH` and `## END_GRAPH`
  // (hlo/tensors_dump.h). One of its graphs is read (ModuleFileOptions).
  kTensorsDump,
};

// "decomposed snapshot", "classic snapshot", "HloModuleProto", "HloProto",
// "HloUnoptimizedSnapshot", "HLO text", "torch-xla graph dump".
std::string_view ModuleFileFormName(ModuleFileForm form);

struct ModuleFile {
  xla::HloModuleProto module;
  ModuleFileForm form = ModuleFileForm::kHloModuleProto;
  // HLO text only: what its header carried that the proto cannot hold
  // (module-config attributes, whether entry_computation_layout was
  // given), so that text printed again keeps it (hlo/text.h).
  hlo::HloModuleTextExtras extras;
  bool has_extras = false;
  // kTensorsDump: the graph read (0-based) and how many the file holds.
  // Read with ModuleFileOptions::graph = kEveryGraph, `module` is empty and
  // `dump_text` holds the file's text for hlo::SplitTensorsDump. Read with
  // ModuleFileOptions::keep_hlo_text, HLO text is not parsed either: it is
  // in `dump_text`, for hlo::ParseHloTextToProto.
  int64_t graph = -1;
  int64_t graphs = 0;
  std::string dump_text;
};

struct ModuleFileOptions {
  // A torch-xla graph dump's graph to read, 0-based; kOnlyGraph: the dump
  // must hold one graph (an error says how many it holds, otherwise);
  // kEveryGraph: none is parsed, the text is kept (ModuleFile::dump_text).
  // Another form of file is read as always, but with a graph number (>= 0)
  // asked for, which is an error.
  static constexpr int64_t kOnlyGraph = -1;
  static constexpr int64_t kEveryGraph = -2;
  int64_t graph = kOnlyGraph;
  // HLO text (not a graph dump) is kept unparsed, in ModuleFile::dump_text
  // with `module` empty: `decomposed hlo TEXT --to-proto` parses it
  // straight to bytes (hlo::ParseHloTextToProto), never holding protobuf's
  // objects of the whole module.
  bool keep_hlo_text = false;
};

// True when `head` (a file's first bytes, up to 4 KiB) reads as HLO text by
// the rule above.
bool LooksLikeHloText(std::string_view head);

// The module in the file at `path` ("-": standard input), by the rules
// above.
absl::StatusOr<ModuleFile> ReadModuleFile(const std::string& path,
                                          const ModuleFileOptions& options = {});

// Region [0] of a snapshot made from a module file, as `pack --module` and
// Python's write() take one: HLO text (LooksLikeHloText) is parsed and its
// proto used; a constant the text left as `{...}` has no values to pack,
// an error naming the constant and its computation. Any other file is
// used as a serialized HloModuleProto, byte for byte (fields this library
// does not declare are kept). The header is SnapshotFromModule's
// (classic.h); errors name the file.
absl::StatusOr<std::string> SnapshotFromModuleFile(const std::string& path);

// The same for bytes in memory (a protobuf message or HLO text; a
// snapshot's bytes too). `name` names them in errors.
absl::StatusOr<ModuleFile> ParseModuleBytes(std::string_view bytes,
                                            std::string_view name = "module",
                                            const ModuleFileOptions& options = {});

}  // namespace decomposed

#endif  // DECOMPOSED_SNAPSHOT_MODULE_FILE_H_
