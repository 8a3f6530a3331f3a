#include "decomposed/snapshot/each.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <map>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "decomposed/status.h"

namespace decomposed {

unsigned EffectiveJobs(unsigned jobs, size_t tasks) {
  if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  if (tasks < jobs) jobs = static_cast<unsigned>(std::max<size_t>(tasks, 1));
  return jobs;
}

namespace internal {

std::function<void()> StartWorkers(size_t n, unsigned threads,
                                   const std::function<void(size_t)>& run) {
  auto next = std::make_shared<std::atomic<size_t>>(0);
  auto pool = std::make_shared<std::vector<std::thread>>();
  for (unsigned t = 0; t < threads; ++t) {
    pool->emplace_back([next, n, run] {
      for (size_t i; (i = next->fetch_add(1)) < n;) run(i);
    });
  }
  return [pool] {
    for (std::thread& t : *pool) t.join();
  };
}

}  // namespace internal

namespace {

// Sums per-file progress into one running total, reported under a lock.
class SummedProgress {
 public:
  SummedProgress(size_t files, std::function<void(uint64_t)> report)
      : done_(files, 0), report_(std::move(report)) {}

  // The callback for file i, or an empty function when nobody listens.
  std::function<void(uint64_t)> For(size_t i) {
    if (!report_) return {};
    return [this, i](uint64_t done) {
      absl::MutexLock lock(&mu_);
      total_ += done - done_[i];
      done_[i] = done;
      report_(total_);
    };
  }

 private:
  absl::Mutex mu_;
  std::vector<uint64_t> done_ ABSL_GUARDED_BY(mu_);
  uint64_t total_ ABSL_GUARDED_BY(mu_) = 0;
  std::function<void(uint64_t)> report_;
};

}  // namespace

void VerifyFiles(
    std::span<const std::string> paths, const VerifyOptions& options,
    unsigned jobs,
    const std::function<void(size_t, absl::StatusOr<VerifyReport>&)>& emit) {
  SummedProgress progress(paths.size(), options.progress);
  ForEachInOrder<absl::StatusOr<VerifyReport>>(
      paths.size(), jobs,
      [&](size_t i) {
        VerifyOptions o = options;
        o.progress = progress.For(i);
        return VerifyFile(paths[i], o);
      },
      emit);
}

void InspectFiles(
    std::span<const std::string> paths, const InspectOptions& options,
    unsigned jobs,
    const std::function<void(size_t, absl::StatusOr<InspectReport>&)>& emit) {
  ForEachInOrder<absl::StatusOr<InspectReport>>(
      paths.size(), jobs,
      [&](size_t i) { return InspectFile(paths[i], options); }, emit);
}

std::string EachOutputPrefix(const std::string& dir, const std::string& path) {
  std::string base = path;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  if (size_t slash = base.rfind('/'); slash != std::string::npos) {
    base = base.substr(slash + 1);
  }
  if (size_t dot = base.rfind('.'); dot != std::string::npos && dot > 0) {
    base.resize(dot);
  }
  std::string out = dir;
  if (!out.empty() && out.back() != '/') out.push_back('/');
  return absl::StrCat(out, base, "/");
}

absl::Status UnpackEach(
    std::span<const std::string> paths, const std::string& dir,
    const UnpackOptions& options, unsigned jobs,
    const std::function<void(size_t, UnpackEachResult&)>& emit) {
  std::vector<std::string> prefixes;
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < paths.size(); ++i) {
    prefixes.push_back(EachOutputPrefix(dir, paths[i]));
    auto [it, fresh] = seen.emplace(prefixes.back(), i);
    if (!fresh) {
      return absl::InvalidArgumentError(absl::StrCat(
          paths[it->second], " and ", paths[i],
          " would both be unpacked to ", prefixes.back(),
          "; rename one, or unpack them separately"));
    }
  }
  SummedProgress progress(paths.size(), options.progress);
  ForEachInOrder<UnpackEachResult>(
      paths.size(), jobs,
      [&](size_t i) {
        UnpackEachResult r;
        r.path = paths[i];
        r.output_prefix = prefixes[i];
        UnpackOptions o = options;
        o.output_prefix = prefixes[i];
        o.create_output_dir = true;
        o.on_file = nullptr;
        o.on_warning = [&r](const absl::Status& w) {
          r.warnings.push_back(w);
        };
        o.progress = progress.For(i);
        r.status = Unpack(paths[i], o, &r.files);
        return r;
      },
      emit);
  return absl::OkStatus();
}

}  // namespace decomposed
