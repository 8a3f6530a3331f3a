// TensorSets over snapshot files: the decomposed stream (docs/format.md §7)
// and the classic HloSnapshot (§11). The file is read with pread; each
// tensor is a literal decoded by the literal codec into an ArraySink that
// forwards the row-major chunks.
#include "decomposed/analysis/snapshot_set.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "decomposed/container/framing.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/fd.h"
#include "decomposed/io/input.h"
#include "decomposed/snapshot/classic.h"
#include "decomposed/snapshot/snapshot_type.h"
#include "decomposed/status.h"
#include "decomposed/xla/array_sink.h"
#include "decomposed/xla/literal_decoder.h"
#include "decomposed/xla/literal_plan.h"

namespace decomposed {
namespace {

// Forwards the decoded row-major chunks to a ChunkFn.
class ForwardingSink final : public ArraySink {
 public:
  explicit ForwardingSink(const ChunkFn& emit) : emit_(emit) {}
  absl::Status Begin(const ArrayHeader&) override { return absl::OkStatus(); }
  absl::Status Write(std::string_view chunk) override { return emit_(chunk); }
  absl::Status Finish() override { return absl::OkStatus(); }

 private:
  const ChunkFn& emit_;
};

absl::StatusOr<std::unique_ptr<FdSource>> OpenSource(const std::string& path) {
  OwnedFd fd;
  if (absl::Status s = OpenForReading(path, &fd); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("Could not open: ", path));
  }
  return std::make_unique<FdSource>(std::move(fd));
}

}  // namespace

LiteralDecodeOptions AnalysisDecodeOptions() {
  LiteralDecodeOptions o;
  o.max_in_memory_transpose = kAnalysisTransposeBytes;
  o.transpose_budget_bytes = kAnalysisTransposeBytes;
  return o;
}

LiteralListSet::LiteralListSet(std::string name, std::string path,
                               std::unique_ptr<FdSource> src,
                               std::vector<LiteralRef> literals, bool both)
    : name_(std::move(name)),
      path_(std::move(path)),
      src_(std::move(src)),
      literals_(std::move(literals)),
      both_(both) {}

absl::StatusOr<LiteralPlan> LiteralListSet::Plan(size_t i) {
  const LiteralRef& l = literals_[i];
  absl::StatusOr<LiteralPlan> plan = PlanLiteral(*src_, l.ranges, l.frame());
  if (!plan.ok()) return WithFile(plan.status(), path_);
  const uint64_t offset = l.ranges.empty() ? 0 : l.ranges[0].offset;
  if (absl::Status s = ResolveArrayPlan(*plan, l.frame(), offset); !s.ok()) {
    return WithFile(s, path_);
  }
  return plan;
}

absl::StatusOr<TensorInfo> LiteralListSet::Describe(size_t i) {
  const LiteralRef& l = literals_[i];
  absl::StatusOr<LiteralPlan> plan = Plan(i);
  if (!plan.ok()) return plan.status();
  return TensorInfo{plan->type->type, plan->shape.dimensions,
                    absl::StrCat(Sv(l.role), " ", l.index, " of ", path_)};
}

absl::StatusOr<std::optional<TensorRun>> LiteralListSet::Run(size_t i) {
  absl::StatusOr<LiteralPlan> plan = Plan(i);
  if (!plan.ok()) return plan.status();
  std::optional<ByteRange> run = VerbatimRowMajorRun(*plan);
  if (!run) return std::optional<TensorRun>();
  const int fd = ::dup(src_->fd());
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("dup ", path_));
  return std::optional<TensorRun>(
      TensorRun{OwnedFd(fd), src_->backend().origin() + run->offset, run->length});
}

absl::Status LiteralListSet::Stream(size_t i, const ChunkFn& emit) {
  const LiteralRef& l = literals_[i];
  ForwardingSink sink(emit);
  return WithFile(
      DecodeLiteral(*src_, l.ranges, l.frame(), sink, AnalysisDecodeOptions()),
      path_);
}

namespace {

absl::StatusOr<std::unique_ptr<TensorSet>> DecomposedSetOf(
    const std::string& path, bool inputs,
    absl::StatusOr<std::unique_ptr<FdSource>> src) {
  if (!src.ok()) return src.status();
  std::vector<LiteralRef> refs;
  DecomposedReader<FdSource> reader(**src);
  absl::Status s = [&]() -> absl::Status {
    if (auto h = reader.ReadHeader(nullptr); !h.ok()) return h.status();
    if (auto n = reader.StartInputs(); !n.ok()) return n.status();
    ElementInfo e;
    for (int64_t i = 0;; ++i) {
      absl::StatusOr<bool> more = reader.NextInput(&e);
      if (!more.ok()) return more.status();
      if (!*more) break;
      if (inputs) refs.push_back({"input", i, {{e.offset, e.length}}});
    }
    absl::StatusOr<std::optional<uint64_t>> n = reader.StartOutputs();
    if (!n.ok()) return n.status();
    if (*n) {
      for (int64_t i = 0;; ++i) {
        absl::StatusOr<bool> more = reader.NextOutput(&e);
        if (!more.ok()) return more.status();
        if (!*more) break;
        if (!inputs) refs.push_back({"output", i, {{e.offset, e.length}}});
      }
    }
    return reader.Finish();
  }();
  if (!s.ok()) return WithFile(s, path);
  return std::unique_ptr<TensorSet>(std::make_unique<LiteralListSet>(
      absl::StrCat("decomposed file ", path, inputs ? " (inputs)" : " (outputs)"), path,
      *std::move(src), std::move(refs), /*both=*/true));
}

absl::StatusOr<std::unique_ptr<TensorSet>> ClassicSetOf(
    const std::string& path, bool inputs,
    absl::StatusOr<std::unique_ptr<FdSource>> opened) {
  if (!opened.ok()) return opened.status();
  FdSource& src = **opened;
  std::vector<LiteralRef> refs;
  absl::Status s = [&]() -> absl::Status {
    const Frame frame{"snapshot"};
    const ByteRange whole{0, src.size().value_or(0)};
    absl::StatusOr<ClassicSnapshot> snap = IndexClassicSnapshot(src, whole, frame);
    if (!snap.ok()) return snap.status();
    if (inputs) {
      return ForEachClassicInput(
          src, *snap, frame, [](int64_t i) { return Frame{"input", i, "body"}; },
          [&](std::span<const ByteRange> literal, int64_t i) {
            refs.push_back({"input", i, {literal.begin(), literal.end()}});
            return absl::OkStatus();
          });
    }
    absl::StatusOr<std::vector<LiteralRanges>> outputs =
        ClassicOutputs(src, *snap, Frame{"result"});
    if (!outputs.ok()) return outputs.status();
    for (size_t j = 0; j < outputs->size(); ++j) {
      refs.push_back({"output", static_cast<int64_t>(j), std::move((*outputs)[j])});
    }
    return absl::OkStatus();
  }();
  if (!s.ok()) return WithFile(s, path);
  return std::unique_ptr<TensorSet>(std::make_unique<LiteralListSet>(
      absl::StrCat("classic snapshot ", path, inputs ? " (inputs)" : " (outputs)"), path,
      *std::move(opened), std::move(refs), /*both=*/true));
}

// A stream input (a pipe, a FIFO, "-") spilled whole to a temp file, kept
// for the life of the process: stats opens an input twice (outputs, then
// inputs), and a pipe can be read only once.
struct SpilledInput {
  OwnedFd fd;
  SnapshotType type;
  SnapshotTypeEvidence evidence;
};

// The spilled copy of a stream input already read, or nullptr. With `file`
// (the input just opened), reads it and keeps its copy.
absl::StatusOr<const SpilledInput*> SpilledStream(const std::string& path,
                                                  SnapshotType requested,
                                                  InputFile* file) {
  static auto* cache = new std::map<std::pair<std::string, SnapshotType>,
                                    std::unique_ptr<SpilledInput>>();
  static auto* mu = new std::mutex();
  std::lock_guard<std::mutex> lock(*mu);
  auto& slot = (*cache)[{path, requested}];
  if (slot || file == nullptr) return slot.get();
  absl::StatusOr<SnapshotInput> in =
      OpenSnapshotInput(path, std::move(*file), requested);
  if (!in.ok()) return in.status();
  if (!in->is_stream()) return nullptr;
  absl::StatusOr<OwnedFd> fd = SpillSnapshotInput(*in);
  if (!fd.ok()) return fd.status();
  slot = std::make_unique<SpilledInput>(
      SpilledInput{*std::move(fd), in->type, in->evidence});
  return slot.get();
}

absl::StatusOr<std::unique_ptr<FdSource>> DupSource(const SpilledInput& in,
                                                    const std::string& path) {
  // A new open file description, so that each set has its own file offset
  // (FdSource reads with read(2)); a dup would share one.
  const std::string self = ReopenPath(in.fd.get());
  int fd = ::open(self.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("reopening ", path));
  return std::make_unique<FdSource>(OwnedFd(fd));
}

}  // namespace

absl::StatusOr<std::unique_ptr<TensorSet>> OpenDecomposedSet(
    const std::string& path, bool inputs) {
  return DecomposedSetOf(path, inputs, OpenSource(path));
}

absl::StatusOr<std::unique_ptr<TensorSet>> OpenClassicSet(const std::string& path,
                                                          bool inputs) {
  return ClassicSetOf(path, inputs, OpenSource(path));
}

absl::StatusOr<std::unique_ptr<TensorSet>> OpenSnapshotSet(const std::string& path,
                                                           bool inputs,
                                                           SnapshotType type) {
  // A stream is spilled whole once (a set reads its literals in any order;
  // stats opens its input twice, and a pipe can be read only once).
  absl::StatusOr<const SpilledInput*> in = SpilledStream(path, type, nullptr);
  if (in.ok() && *in == nullptr) {
    absl::StatusOr<InputFile> f = OpenInput(path);
    if (!f.ok()) return f.status();
    // Standard input from a regular file is read by name below, through
    // /proc/self/fd/0; without /proc, as a stream.
    if (!f->regular ||
        (IsStdin(path) && ::access(ReopenPath(0).c_str(), R_OK) != 0)) {
      in = SpilledStream(path, type, &*f);
    }
  }
  if (!in.ok()) return in.status();
  if (*in != nullptr) {
    absl::StatusOr<std::unique_ptr<TensorSet>> set =
        (*in)->type == SnapshotType::kDecomposed
            ? DecomposedSetOf(path, inputs, DupSource(**in, path))
            : ClassicSetOf(path, inputs, DupSource(**in, path));
    if (!set.ok()) {
      return WithSnapshotTypeHint(set.status(), (*in)->evidence, (*in)->type);
    }
    return set;
  }
  // A regular file, or standard input redirected from one (read by the
  // name /proc/self/fd/0: a new open file description per set, so that
  // stats' two sets and fd 0 keep their own offsets; messages name "-").
  const std::string open = IsStdin(path) ? ReopenPath(0) : path;
  if (IsStdin(path)) {
    struct stat st;
    if (::fstat(0, &st) == 0 && st.st_size == 0) {
      return EmptySnapshotError(path);
    }
  }
  // The empty-file rule and the type hint of every reader
  // (docs/format.md §7.8).
  absl::StatusOr<SnapshotType> t = ResolveSnapshotType(open, type);
  if (!t.ok()) return t.status();
  absl::StatusOr<std::unique_ptr<TensorSet>> set =
      *t == SnapshotType::kDecomposed
          ? DecomposedSetOf(path, inputs, OpenSource(open))
          : ClassicSetOf(path, inputs, OpenSource(open));
  if (!set.ok()) return WithSnapshotTypeHint(set.status(), open, *t);
  return set;
}

}  // namespace decomposed
