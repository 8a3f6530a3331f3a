// TensorSets over snapshot files: the decomposed stream (docs/format.md §7)
// and the classic HloSnapshot (§11), walked once by SnapshotReader. Each
// set reads with pread from a descriptor of its own (a dup of the one
// open); each tensor is a literal decoded by the literal codec into an
// ArraySink that forwards the row-major chunks.
#include "decomposed/analysis/snapshot_set.h"

#include <fcntl.h>
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
#include "decomposed/io/byte_source.h"
#include "decomposed/io/fd.h"
#include "decomposed/snapshot/reader.h"
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

// Walks the snapshot once and lists both blocks.
template <RewindableSource S>
absl::Status ListLiterals(SnapshotReader<S>& reader, SnapshotLists* lists) {
  absl::StatusOr<const SnapshotHeader*> h = reader.ReadHeader();
  if (!h.ok()) return h.status();
  SnapshotLiteral lit;
  for (;;) {
    absl::StatusOr<bool> more = reader.Next(&lit);
    if (!more.ok()) return more.status();
    if (!*more) break;
    const bool input = lit.role == LiteralRole::kInput;
    (input ? lists->inputs : lists->outputs)
        .push_back({LiteralRoleName(lit.role), lit.index,
                    std::move(lit.ranges)});
  }
  return reader.Finish();
}

// The walked lists of `path`, opened once. A stream is copied whole (a set
// reads its literals in any order) and kept for the life of the process,
// so that a stream named twice (compare - -) is read once.
absl::StatusOr<std::shared_ptr<const SnapshotLists>> Lists(
    const std::string& path, SnapshotType type) {
  static auto* streams =
      new std::map<std::pair<std::string, SnapshotType>,
                   std::shared_ptr<const SnapshotLists>>();
  static auto* mu = new std::mutex();
  {
    std::lock_guard<std::mutex> lock(*mu);
    auto it = streams->find({path, type});
    if (it != streams->end()) return it->second;
  }
  SnapshotOpenOptions open;
  open.type = type;
  open.access = SnapshotAccess::kBuffered;
  open.spill_streams = true;
  absl::StatusOr<std::unique_ptr<SnapshotFile>> file =
      SnapshotFile::Open(path, open);
  if (!file.ok()) return file.status();
  auto lists = std::make_shared<SnapshotLists>();
  lists->path = path;
  lists->form = (*file)->type() == SnapshotType::kDecomposed
                    ? "decomposed file"
                    : "classic snapshot";
  absl::Status s = (*file)->Read({}, [&](auto& reader) {
    return ListLiterals(reader, lists.get());
  });
  if (!s.ok()) return (*file)->Annotate(s);
  const bool stream = (*file)->from_stream();
  lists->file = std::move(*file);
  if (stream) {
    std::lock_guard<std::mutex> lock(*mu);
    (*streams)[{path, type}] = lists;
  }
  return std::shared_ptr<const SnapshotLists>(std::move(lists));
}

absl::StatusOr<std::unique_ptr<TensorSet>> SetOf(
    std::shared_ptr<const SnapshotLists> lists, bool inputs) {
  absl::StatusOr<std::unique_ptr<FdSource>> src = lists->file->NewFdSource();
  if (!src.ok()) return src.status();
  return std::unique_ptr<TensorSet>(std::make_unique<LiteralListSet>(
      std::move(lists), inputs, *std::move(src)));
}

}  // namespace

LiteralDecodeOptions AnalysisDecodeOptions() {
  LiteralDecodeOptions o;
  o.max_in_memory_transpose = kAnalysisTransposeBytes;
  o.transpose_budget_bytes = kAnalysisTransposeBytes;
  return o;
}

LiteralListSet::LiteralListSet(std::shared_ptr<const SnapshotLists> lists,
                               bool inputs, std::unique_ptr<FdSource> src)
    : lists_(std::move(lists)), inputs_(inputs), src_(std::move(src)) {}

std::string LiteralListSet::Name() const {
  return absl::StrCat(lists_->form, " ", lists_->path,
                      inputs_ ? " (inputs)" : " (outputs)");
}

absl::StatusOr<std::unique_ptr<TensorSet>> LiteralListSet::OtherList() {
  return SetOf(lists_, !inputs_);
}

absl::StatusOr<LiteralPlan> LiteralListSet::Plan(size_t i) {
  const LiteralRef& l = literals()[i];
  absl::StatusOr<LiteralPlan> plan = PlanLiteral(*src_, l.ranges, l.frame());
  if (!plan.ok()) return WithFile(plan.status(), lists_->path);
  const uint64_t offset = l.ranges.empty() ? 0 : l.ranges[0].offset;
  if (absl::Status s = ResolveArrayPlan(*plan, l.frame(), offset); !s.ok()) {
    return WithFile(s, lists_->path);
  }
  return plan;
}

absl::StatusOr<TensorInfo> LiteralListSet::Describe(size_t i) {
  const LiteralRef& l = literals()[i];
  absl::StatusOr<LiteralPlan> plan = Plan(i);
  if (!plan.ok()) return plan.status();
  return TensorInfo{plan->type->type, plan->shape.dimensions,
                    absl::StrCat(Sv(l.role), " ", l.index, " of ",
                                 lists_->path)};
}

absl::StatusOr<std::optional<TensorRun>> LiteralListSet::Run(size_t i) {
  absl::StatusOr<LiteralPlan> plan = Plan(i);
  if (!plan.ok()) return plan.status();
  std::optional<ByteRange> run = VerbatimRowMajorRun(*plan);
  if (!run) return std::optional<TensorRun>();
  const int fd = ::fcntl(src_->fd(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    return WithFile(ErrnoError(errno, "duplicating"), lists_->path);
  }
  return std::optional<TensorRun>(TensorRun{
      OwnedFd(fd), src_->backend().origin() + run->offset, run->length});
}

absl::Status LiteralListSet::Stream(size_t i, const ChunkFn& emit) {
  const LiteralRef& l = literals()[i];
  ForwardingSink sink(emit);
  return WithFile(
      DecodeLiteral(*src_, l.ranges, l.frame(), sink, AnalysisDecodeOptions()),
      lists_->path);
}

absl::StatusOr<std::unique_ptr<TensorSet>> OpenSnapshotSet(
    const std::string& path, bool inputs, SnapshotType type) {
  absl::StatusOr<std::shared_ptr<const SnapshotLists>> lists =
      Lists(path, type);
  if (!lists.ok()) return lists.status();
  return SetOf(*std::move(lists), inputs);
}

absl::StatusOr<std::unique_ptr<TensorSet>> OpenDecomposedSet(
    const std::string& path, bool inputs) {
  return OpenSnapshotSet(path, inputs, SnapshotType::kDecomposed);
}

absl::StatusOr<std::unique_ptr<TensorSet>> OpenClassicSet(
    const std::string& path, bool inputs) {
  return OpenSnapshotSet(path, inputs, SnapshotType::kClassic);
}

}  // namespace decomposed
