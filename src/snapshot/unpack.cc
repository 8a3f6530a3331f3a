#include "decomposed/snapshot/unpack.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/container/framing.h"
#include "decomposed/io/dirs.h"
#include "decomposed/npy/literal_to_npy.h"
#include "decomposed/npy/npy_sink.h"
#include "decomposed/status.h"

namespace decomposed {
namespace {

// Where the pieces of one HloSnapshot message are.
struct HloSnapshotIndex {
  std::vector<ByteRange> hlo_module;  // HloProto.hlo_module occurrences
  uint64_t arguments = 0;
  std::vector<ByteRange> result;      // HloSnapshot.result occurrences
};

// Bounds merged occurrences of one message field (each costs 16 bytes).
constexpr size_t kMaxMergedOccurrences = 1 << 16;

absl::Status TooMany(const Frame& frame, uint64_t offset) {
  return FrameError(absl::StatusCode::kResourceExhausted, frame, offset,
                    absl::StrCat("at most ", kMaxMergedOccurrences,
                                 " occurrences of the field"),
                    "more");
}

// Walks an HloSnapshot in `range`: notes its hlo.hlo_module and result
// occurrences and counts arguments, without reading literal data.
template <RewindableSource S>
absl::StatusOr<HloSnapshotIndex> IndexHloSnapshot(S& src, ByteRange range,
                                                  const Frame& frame) {
  HloSnapshotIndex index;
  const Frame hlo_frame{frame.region, frame.index, "hlo"};
  absl::Status s = internal::WalkRecords(
      src, std::span<const ByteRange>(&range, 1), frame,
      [&](wire::Field& r) -> absl::Status {
        if (r.wire_type != wire::kLen) return absl::OkStatus();
        if (r.number == 1) {  // hlo: HloProto
          ByteRange hlo{r.offset, r.length};
          return internal::WalkRecords(
              src, std::span<const ByteRange>(&hlo, 1), hlo_frame,
              [&](wire::Field& h) -> absl::Status {
                if (h.number == 1 && h.wire_type == wire::kLen) {
                  if (index.hlo_module.size() >= kMaxMergedOccurrences) {
                    return TooMany(hlo_frame, h.tag_offset);
                  }
                  index.hlo_module.push_back({h.offset, h.length});
                }
                return absl::OkStatus();
              });
        }
        if (r.number == 2) ++index.arguments;
        if (r.number == 3) {
          if (index.result.size() >= kMaxMergedOccurrences) {
            return TooMany(frame, r.tag_offset);
          }
          index.result.push_back({r.offset, r.length});
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  return index;
}

template <RewindableSource S>
absl::Status UnpackSnapshot(S& src, const UnpackOptions& options,
                            std::vector<UnpackedFile>* written) {
  const Frame frame{"snapshot"};
  ByteRange all{0, src.size().value_or(0)};
  absl::StatusOr<HloSnapshotIndex> index = IndexHloSnapshot(src, all, frame);
  if (!index.ok()) return index.status();
  HloSnapshotSink<S> sink(src, options, written);
  if (absl::Status s = sink.WriteModule(index->hlo_module); !s.ok()) return s;
  int64_t i = 0;
  absl::Status s = internal::WalkRecords(
      src, std::span<const ByteRange>(&all, 1), frame,
      [&](wire::Field& r) -> absl::Status {
        if (r.number != 2 || r.wire_type != wire::kLen) {
          return absl::OkStatus();
        }
        ByteRange lit{r.offset, r.length};
        return sink.WriteLiteral(std::span<const ByteRange>(&lit, 1),
                                 "value_input", i++);
      });
  if (!s.ok()) return s;
  if (!options.dump_snapshot_outputs) return absl::OkStatus();
  const Frame result_frame{"snapshot_output", -1, "result"};
  if (index->result.empty()) {
    return FrameError(absl::StatusCode::kInvalidArgument,
                      Frame{"snapshot_output", 0, "body"}, all.length,
                      "a result literal (HloSnapshot field 3) to dump",
                      "none (XLA: \"LiteralProto has no shape\")");
  }
  absl::StatusOr<LiteralPlan> plan =
      PlanLiteral(src, index->result, result_frame);
  if (!plan.ok()) return plan.status();
  if (plan->has_shape && plan->shape.is_tuple()) {
    for (size_t j = 0; j < plan->tuple_literals.size(); ++j) {
      absl::Status t = sink.WriteLiteral(
          std::span<const ByteRange>(&plan->tuple_literals[j], 1),
          "snapshot_output", static_cast<int64_t>(j));
      if (!t.ok()) return t;
    }
    return absl::OkStatus();
  }
  return sink.WriteLiteral(index->result, "snapshot_output", 0);
}

template <RewindableSource S>
absl::Status UnpackBlock(S& src, HloSnapshotSink<S>& sink,
                         std::string_view stem, const BoxReadOptions& box) {
  RepeatedReader<S> block(src, stem, box);
  absl::StatusOr<uint64_t> n = block.Start();
  if (!n.ok()) return n.status();
  ElementInfo e;
  for (;;) {
    absl::StatusOr<bool> more = block.Next(&e);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    ByteRange body{e.offset, e.length};
    absl::Status s = sink.WriteLiteral(std::span<const ByteRange>(&body, 1),
                                       stem, block.current_index());
    if (!s.ok()) return s;
  }
}

template <RewindableSource S>
absl::Status UnpackDecomposed(S& src, const UnpackOptions& options,
                              std::vector<UnpackedFile>* written) {
  ElementInfo header;
  if (absl::Status s =
          ReadElementHeader(src, Frame{"snapshot length box"},
                            Frame{"snapshot"}, options.box, &header);
      !s.ok()) {
    return s;
  }
  if (header.length > limits::kMaxSnapshotBytes) {
    return FrameError(absl::StatusCode::kResourceExhausted,
                      Frame{"snapshot length box"}, header.box_offset,
                      "a snapshot under protobuf's 2 GiB message limit",
                      absl::StrCat(header.length, " bytes"));
  }
  absl::StatusOr<HloSnapshotIndex> index = IndexHloSnapshot(
      src, ByteRange{header.offset, header.length}, Frame{"snapshot"});
  if (!index.ok()) return index.status();
  HloSnapshotSink<S> sink(src, options, written);
  if (absl::Status s = sink.WriteModule(index->hlo_module); !s.ok()) return s;
  if (!src.Seek(header.offset + header.length)) {
    return Prefix(src.status(), "snapshot");
  }
  if (absl::Status s = UnpackBlock(src, sink, "value_input", options.box);
      !s.ok()) {
    return s;
  }
  if (!options.dump_snapshot_outputs) return absl::OkStatus();
  if (!src.Pull(1)) {
    if (!src.status().ok()) return Prefix(src.status(), "snapshot_output");
    return FrameError(absl::StatusCode::kOutOfRange,
                      Frame{"snapshot_output", -1, "count box"},
                      src.position(),
                      "region [2] (the outputs asked for by "
                      "dump-snapshot-outputs)",
                      "the end of the file: this file holds no outputs");
  }
  if (absl::Status s = UnpackBlock(src, sink, "snapshot_output", options.box);
      !s.ok()) {
    return s;
  }
  if (src.Pull(1)) {
    std::optional<uint64_t> rem = Remaining(src);
    return FrameError(absl::StatusCode::kInvalidArgument,
                      Frame{"trailing data"}, src.position(),
                      "the end of the file after region [2]",
                      rem ? absl::StrCat(*rem, " more bytes")
                          : std::string("more bytes"));
  }
  return src.status();
}

absl::Status OpenInput(const std::string& path, OwnedFd* fd) {
  absl::Status s = OpenForReading(path, fd);
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat("Could not open: ", path));
  }
  return absl::OkStatus();
}

std::string DetectOn(FdSource& src) {
  BoxReadOptions box;
  absl::StatusOr<uint64_t> lm = ReadBox(src, Frame{"x"}, box);
  if (!lm.ok()) return "snapshot";
  std::optional<uint64_t> rem = Remaining(src);
  if (!rem || *lm > *rem || !src.Skip(*lm)) return "snapshot";
  absl::StatusOr<uint64_t> n = ReadBox(src, Frame{"x"}, box);
  if (!n.ok()) return "snapshot";
  rem = Remaining(src);
  if (*n > *rem / kMinBoxBytes) return "snapshot";
  if (*n > 0) {
    absl::StatusOr<uint64_t> len = ReadBox(src, Frame{"x"}, box);
    if (!len.ok() || *len > *Remaining(src)) return "snapshot";
  }
  return "decomposed";
}

// mkdir -p of the directory part of `prefix`.
absl::Status EnsureOutputDir(const std::string& prefix) {
  size_t slash = prefix.rfind('/');
  if (slash == std::string::npos || slash == 0) return absl::OkStatus();
  return internal::MakeDirectories(prefix.substr(0, slash));
}

}  // namespace

absl::StatusOr<std::string> DetectSnapshotType(const std::string& path) {
  OwnedFd fd;
  if (absl::Status s = OpenInput(path, &fd); !s.ok()) return s;
  FdSource src(std::move(fd));
  std::string t = DetectOn(src);
  if (!src.status().ok()) return WithFile(src.status(), path);
  return t;
}

absl::Status Unpack(const std::string& path, const UnpackOptions& options,
                    std::vector<UnpackedFile>* written) {
  OwnedFd fd;
  if (absl::Status s = OpenInput(path, &fd); !s.ok()) return s;
  std::string type = options.snapshot_type;
  if (type != "snapshot" && type != "decomposed" && type != "auto") {
    return absl::InvalidArgumentError("ERROR: Unsupported snapshot format");
  }
  FdSource src(std::move(fd));
  if (!src.size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": the input must be a regular file (unpacking seeks in it)"));
  }
  if (options.create_output_dir) {
    if (absl::Status s = EnsureOutputDir(options.output_prefix); !s.ok()) {
      return s;
    }
  }
  if (type == "auto") {
    type = DetectOn(src);
    if (!src.status().ok()) return WithFile(src.status(), path);
    if (!src.Seek(0)) return WithFile(src.status(), path);
  }
  absl::Status s = type == "snapshot"
                       ? UnpackSnapshot(src, options, written)
                       : UnpackDecomposed(src, options, written);
  return WithFile(s, path);
}

// --- Command line -------------------------------------------------------------

namespace {

struct OptSpec {
  const char* name;
  bool is_bool;
  const char* help;
};

constexpr OptSpec kOpts[] = {
    {"module", false, "Output HLO module file name (default model.hlo)"},
    {"output-prefix", false,
     "Prefix of every output path, concatenated as is (default ./)"},
    {"snapshot-type", false,
     "Input type: snapshot (default), decomposed, or auto (detect)"},
    {"dump-snapshot-outputs", true,
     "Also write the snapshot's outputs as snapshot_output<j>.npy"},
    {"ml-dtype-sidecar", true,
     "Also write <file>.npy.meta {\"ml_dtype\": ...} for void dtypes "
     "(extension)"},
    {"lenient-length-byte", true,
     "Read a box length byte >= 0x80 as unsigned, as AWS's Python reader "
     "does (extension)"},
};

}  // namespace

std::string UnpackUsage(std::string_view program) {
  std::string out = absl::StrCat(
      "OVERVIEW: snapshot-unpack\n\nUSAGE: ", Sv(program),
      " [options] <snapshot>\n\nOPTIONS:\n\nsnapshot-unpack options:\n\n");
  for (const OptSpec& o : kOpts) {
    std::string left = absl::StrCat("  --", o.name, o.is_bool ? "" : "=<string>");
    left.resize(std::max<size_t>(left.size() + 2, 36), ' ');
    absl::StrAppend(&out, left, "- ", o.help, "\n");
  }
  absl::StrAppend(&out,
                  "\nGeneric Options:\n\n  --help                            "
                  "- Display available options\n");
  return out;
}

absl::StatusOr<UnpackCommandLine> ParseUnpackCommandLine(
    const std::vector<std::string>& args, std::string_view program) {
  UnpackCommandLine cl;
  std::vector<std::string> positional;
  bool seen[std::size(kOpts)] = {};
  auto err = [&](const std::string& m) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(program), ": ", m));
  };
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (options_done || a.size() < 2 || a[0] != '-') {
      positional.push_back(a);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    std::string body = a.substr(a[1] == '-' ? 2 : 1);
    std::string name = body;
    std::optional<std::string> value;
    if (size_t eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
    }
    if (name == "help" || name == "help-list" || name == "help-hidden" ||
        name == "help-list-hidden") {
      cl.help = true;  // LLVM prints the help and exits right here
      return cl;
    }
    size_t k = 0;
    while (k < std::size(kOpts) && name != kOpts[k].name) ++k;
    if (k == std::size(kOpts)) {
      return err(absl::StrCat("Unknown command line argument '", a,
                              "'.  Try: '", Sv(program), " --help'"));
    }
    const OptSpec& o = kOpts[k];
    const std::string dashes = "--";
    if (seen[k]) {
      return err(absl::StrCat("for the ", dashes, o.name,
                              " option: may only occur zero or one times!"));
    }
    seen[k] = true;
    if (o.is_bool) {
      bool v = true;
      if (value) {
        const std::string& x = *value;
        if (x == "true" || x == "TRUE" || x == "True" || x == "1") {
          v = true;
        } else if (x == "false" || x == "FALSE" || x == "False" ||
                   x == "0") {
          v = false;
        } else {
          return err(absl::StrCat("for the ", dashes, o.name, " option: '", x,
                                  "' is invalid value for boolean argument! "
                                  "Try 0 or 1"));
        }
      }
      if (name == "dump-snapshot-outputs") cl.options.dump_snapshot_outputs = v;
      if (name == "ml-dtype-sidecar") cl.options.ml_dtype_sidecar = v;
      if (name == "lenient-length-byte") {
        cl.options.box.lenient_length_byte = v;
      }
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size()) {
        return err(absl::StrCat("for the ", dashes, o.name,
                                " option: requires a value!"));
      }
      value = args[++i];
    }
    if (name == "module") cl.options.module = *value;
    if (name == "output-prefix") cl.options.output_prefix = *value;
    if (name == "snapshot-type") cl.options.snapshot_type = *value;
  }
  if (cl.help) return cl;
  if (positional.empty()) {
    return err("Not enough positional command line arguments specified!\n"
               "Must specify at least 1 positional argument: See: " +
               std::string(program) + " --help");
  }
  if (positional.size() > 1) {
    return err(absl::StrCat("Too many positional arguments specified!\n"
                            "Can specify at most 1 positional arguments: "
                            "See: ",
                            Sv(program), " --help"));
  }
  cl.snapshot = positional[0];
  return cl;
}

}  // namespace decomposed
