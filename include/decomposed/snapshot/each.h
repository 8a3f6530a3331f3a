// Many files at once: `verify FILE...`, `inspect --json FILE...` and
// `unpack --each DIR FILE...` (docs/unpack.md, "Many files").
//
// The work is spread over `jobs` threads (0: one per core,
// std::thread::hardware_concurrency()); each file is handled by exactly
// the single-file call (VerifyFile, InspectFile, Unpack), so a file gives
// the same result whatever the job count. Results are handed to `emit` one
// per file, **in input order**, on the calling thread, as soon as every
// earlier file is done: a caller can print while later files still run.
// Results finished ahead of an unfinished earlier file wait in memory
// until it is emitted.
//
// The library's readers and writers share no mutable state, so distinct
// files may run concurrently (AtomicFileSink's temp names come from
// mkostemp; transpose spills are unlinked temp files).
//
// Example:
//   decomposed::VerifyFiles(paths, {}, /*jobs=*/0,
//       [](size_t i, absl::StatusOr<decomposed::VerifyReport>& r) {
//         std::cout << i << (r.ok() && r->valid() ? " ok\n" : " bad\n");
//       });
#ifndef DECOMPOSED_SNAPSHOT_EACH_H_
#define DECOMPOSED_SNAPSHOT_EACH_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "decomposed/snapshot/inspect.h"
#include "decomposed/snapshot/unpack.h"
#include "decomposed/snapshot/verify.h"

namespace decomposed {

// The job count `jobs` stands for: itself, or one per core when 0 (at
// least 1), never more than `tasks` (at least 1).
unsigned EffectiveJobs(unsigned jobs, size_t tasks);

// Runs work(i) for every i in [0, n) on up to EffectiveJobs(jobs, n)
// threads and calls emit(i, result) on the calling thread in order
// i = 0, 1, ..., n-1, each as soon as results 0..i are all done. With one
// job everything runs on the calling thread, work(i) then emit(i). `work`
// must be safe to call concurrently for distinct i.
template <class R>
void ForEachInOrder(size_t n, unsigned jobs,
                    const std::function<R(size_t)>& work,
                    const std::function<void(size_t, R&)>& emit);

// VerifyFile for each path. `options.progress`, when set, is called with
// the bytes checked so far summed over all files (from any thread,
// serialised).
void VerifyFiles(
    std::span<const std::string> paths, const VerifyOptions& options,
    unsigned jobs,
    const std::function<void(size_t, absl::StatusOr<VerifyReport>&)>& emit);

// InspectFile for each path.
void InspectFiles(
    std::span<const std::string> paths, const InspectOptions& options,
    unsigned jobs,
    const std::function<void(size_t, absl::StatusOr<InspectReport>&)>& emit);

// One input of UnpackEach.
struct UnpackEachResult {
  std::string path;           // the input
  std::string output_prefix;  // <dir>/<stem>/, what it was unpacked to
  absl::Status status;        // Unpack's
  std::vector<UnpackedFile> files;     // written (complete) files
  std::vector<absl::Status> warnings;  // what on_warning would have said
};

// The output directory of `path` under `dir`: "<dir>/<stem>/", where the
// stem is the base name without its last extension ("a/x.decomposed_hlo_
// snapshot" -> "x"; a name that is all extension, ".x", is kept whole).
std::string EachOutputPrefix(const std::string& dir, const std::string& path);

// Unpack(path, options with output_prefix = EachOutputPrefix(dir, path))
// for every path, creating each directory. `options.output_prefix`,
// `on_file` and `on_warning` are ignored (each result carries its files
// and warnings); `options.progress` as in VerifyFiles. Fails before
// unpacking anything, with kInvalidArgument naming both inputs, when two
// paths have the same output directory.
absl::Status UnpackEach(
    std::span<const std::string> paths, const std::string& dir,
    const UnpackOptions& options, unsigned jobs,
    const std::function<void(size_t, UnpackEachResult&)>& emit);

// --- Implementation ---------------------------------------------------------

namespace internal {
// Starts `threads` threads that run run(i) for every i in [0, n), each i
// once, and returns without waiting; the returned function joins them.
std::function<void()> StartWorkers(size_t n, unsigned threads,
                                   const std::function<void(size_t)>& run);
}  // namespace internal

template <class R>
void ForEachInOrder(size_t n, unsigned jobs,
                    const std::function<R(size_t)>& work,
                    const std::function<void(size_t, R&)>& emit) {
  const unsigned threads = EffectiveJobs(jobs, n);
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) {
      R r = work(i);
      emit(i, r);
    }
    return;
  }
  // Workers fill slots; the calling thread waits for slot i, emits it and
  // frees it.
  absl::Mutex mu;
  std::vector<std::optional<R>> slots(n);
  std::function<void()> join =
      internal::StartWorkers(n, threads, [&](size_t i) {
        R r = work(i);
        absl::MutexLock lock(&mu);
        slots[i].emplace(std::move(r));
      });
  for (size_t i = 0; i < n; ++i) {
    std::optional<R> ready;
    {
      absl::MutexLock lock(&mu);
      mu.Await(absl::Condition(
          +[](std::optional<R>* slot) { return slot->has_value(); },
          &slots[i]));
      ready = std::move(slots[i]);
      slots[i].reset();
    }
    emit(i, *ready);
  }
  join();
}

}  // namespace decomposed

#endif  // DECOMPOSED_SNAPSHOT_EACH_H_
