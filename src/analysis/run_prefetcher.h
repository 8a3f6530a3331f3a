// Verbatim runs, read ahead: the I/O under compare and stats (report.h).
// Private to src/analysis/.
#ifndef DECOMPOSED_SRC_ANALYSIS_RUN_PREFETCHER_H_
#define DECOMPOSED_SRC_ANALYSIS_RUN_PREFETCHER_H_

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/analysis/tensor_set.h"
#include "decomposed/status.h"

namespace decomposed::internal {

// When a tensor's elements lie verbatim in a file (TensorSet::Run), compare
// and stats read them with pread themselves: a helper thread reads chunk
// c + 1 (and c + 2) of every run while the caller computes on chunk c. This
// keeps the decoders and the pipe out of the common case, and overlaps the
// kernel's copies with the arithmetic.

// Bytes of each run mapped at a time, and windows mapped ahead.
constexpr size_t kRunWindowBytes = size_t{4} << 20;
constexpr size_t kRunWindowsAhead = 2;

// Walks one or two runs in step, window by window. Each window is mapped
// with MAP_POPULATE (the page-cache pages are mapped in one call: no copy,
// no fault per page) by a helper thread that keeps kRunWindowsAhead
// windows ready while the caller computes, and is unmapped as soon as the
// caller moves on: the mapped pages, which count in RSS, stay within
// (1 + kRunWindowsAhead) windows per run.
class RunPrefetcher {
 public:
  struct Spec {
    const TensorRun* run;
    size_t element_bytes;
  };

  RunPrefetcher(std::vector<Spec> specs, uint64_t elements, size_t chunk_elements)
      : specs_(std::move(specs)), elements_(elements), chunk_(chunk_elements) {
    thread_ = std::thread([this] { Produce(); });
  }
  RunPrefetcher(const RunPrefetcher&) = delete;
  RunPrefetcher& operator=(const RunPrefetcher&) = delete;
  ~RunPrefetcher() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    Unmap(current_);
    for (Window& w : ready_) Unmap(w);
  }

  // The next chunk: its element count (0 at the end) and, in `views`, the
  // bytes of each run, valid until the next call.
  absl::StatusOr<uint64_t> Next(std::vector<const char*>* views) {
    Unmap(current_);
    std::unique_lock<std::mutex> lock(mu_);
    cv_.notify_all();  // room for one more window
    cv_.wait(lock, [&] { return !ready_.empty() || done_; });
    if (ready_.empty()) {
      if (!status_.ok()) return status_;
      return uint64_t{0};
    }
    current_ = std::move(ready_.front());
    ready_.pop_front();
    cv_.notify_all();
    views->clear();
    for (const Map& m : current_.maps) views->push_back(m.data);
    return current_.elements;
  }

 private:
  struct Map {
    void* base = nullptr;
    size_t len = 0;
    const char* data = nullptr;
  };
  struct Window {
    std::vector<Map> maps;
    uint64_t elements = 0;
  };

  static void Unmap(Window& w) {
    for (Map& m : w.maps) {
      if (m.base) ::munmap(m.base, m.len);
    }
    w.maps.clear();
  }

  absl::Status MapWindow(uint64_t done, uint64_t n, Window* w) {
    static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    w->elements = n;
    for (const Spec& sp : specs_) {
      const uint64_t start = sp.run->offset + done * sp.element_bytes;
      const uint64_t base = start / page * page;
      const size_t len = static_cast<size_t>(start - base + n * sp.element_bytes);
      // Touching a mapped page past the end of the file raises SIGBUS: a
      // file that shrank since it was checked is an error instead.
      struct stat st;
      if (::fstat(sp.run->fd.get(), &st) != 0) {
        return ErrnoError(errno, "stat of tensor data");
      }
      if (static_cast<uint64_t>(st.st_size) < base + len) {
        return absl::OutOfRangeError(absl::StrCat(
            "tensor data: expected ", base + len, " bytes of file, found ", st.st_size,
            " (it shrank while being read) (at byte ", start, ")"));
      }
      void* m = ::mmap(nullptr, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE,
                       sp.run->fd.get(), static_cast<off_t>(base));
      if (m == MAP_FAILED) {
        return ErrnoError(errno, absl::StrCat("mapping tensor data at byte ", base));
      }
      w->maps.push_back({m, len, static_cast<const char*>(m) + (start - base)});
    }
    return absl::OkStatus();
  }

  void Produce() {
    absl::Status s;
    for (uint64_t done = 0; done < elements_;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return ready_.size() < kRunWindowsAhead || stop_; });
        if (stop_) break;
      }
      const uint64_t n = std::min<uint64_t>(chunk_, elements_ - done);
      Window w;
      s = MapWindow(done, n, &w);
      if (!s.ok()) {
        Unmap(w);
        break;
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        ready_.push_back(std::move(w));
      }
      cv_.notify_all();
      done += n;
    }
    std::lock_guard<std::mutex> lock(mu_);
    status_ = s;
    done_ = true;
    cv_.notify_all();
  }

  std::vector<Spec> specs_;
  uint64_t elements_;
  size_t chunk_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Window> ready_;
  Window current_;  // the caller's (touched by the caller only)
  bool stop_ = false, done_ = false;
  absl::Status status_;
  std::thread thread_;
};

// Checks that a run holds `elements` elements of `eb` bytes.
inline absl::Status CheckRun(const TensorRun& r, uint64_t elements, size_t eb,
                      const std::string& label) {
  if (r.bytes / eb != elements || r.bytes % eb != 0) {
    return absl::InternalError(absl::StrCat(label, ": a run of ", r.bytes,
                                            " bytes for ", elements, " elements"));
  }
  return absl::OkStatus();
}

}  // namespace decomposed::internal

#endif  // DECOMPOSED_SRC_ANALYSIS_RUN_PREFETCHER_H_
