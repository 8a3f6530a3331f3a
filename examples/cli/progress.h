// A progress line on stderr for long operations: bytes done, percentage,
// rate and time left, redrawn at most every 200 ms (the way `pv` and
// `zstd -v` show it). By default only when stderr is a terminal and the
// work is at least 64 MiB (quiet in pipes, logs and tests); `--progress`
// forces it, `--quiet` silences it (AddProgressOptions). A line may count
// things other than bytes (ProgressUnit: `run` counts instructions). The library
// reports bytes through progress callbacks; this is only the display, and
// an update that is not drawn costs one clock read.
#ifndef DECOMPOSED_EXAMPLES_CLI_PROGRESS_H_
#define DECOMPOSED_EXAMPLES_CLI_PROGRESS_H_

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace decomposed::cli {

enum class ProgressMode { kAuto, kOn, kOff };

// What a progress line counts: bytes (shown as KiB, MiB, ...) or a plain
// number of things named by a unit word (`run`: "instructions").
struct ProgressUnit {
  const char* word = nullptr;  // nullptr: bytes
};

// The mode --progress / --quiet ask for.
inline ProgressMode ProgressModeOf(bool progress, bool quiet) {
  return progress ? ProgressMode::kOn
                  : quiet ? ProgressMode::kOff : ProgressMode::kAuto;
}

// The summed sizes of the regular files among `paths` (a directory, a
// pipe or a path that cannot be stat'ed adds 0): the total a progress line
// over many files shows.
inline uint64_t TotalFileBytes(const std::vector<std::string>& paths) {
  uint64_t total = 0;
  for (const std::string& p : paths) {
    struct stat sb;
    if (::stat(p.c_str(), &sb) == 0 && S_ISREG(sb.st_mode)) {
      total += sb.st_size;
    }
  }
  return total;
}

class ProgressLine {
 public:
  // `total` is the expected number of bytes (an estimate is fine; 0 when
  // unknown, as for a pipe: the line then shows bytes, rate and elapsed
  // time); in kAuto, work shorter than `min_total` or a stderr that is not
  // a terminal shows nothing.
  ProgressLine(std::string label, uint64_t total,
               ProgressMode mode = ProgressMode::kAuto,
               uint64_t min_total = 64 << 20, ProgressUnit unit = {})
      : label_(std::move(label)),
        unit_(unit),
        total_(total),
        enabled_(mode == ProgressMode::kOn ||
                 (mode == ProgressMode::kAuto && ::isatty(2) &&
                  total >= min_total)),
        start_(Clock::now()),
        last_(start_) {}
  ~ProgressLine() { Done(); }

  // Safe to call from several threads (`--jobs`): updates are serialised.
  void Update(uint64_t done) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!enabled_) return;
    done_ = done;
    auto now = Clock::now();
    if (now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    Draw(done, now);
  }
  // Draws the final state once (so a forced line shows even for work
  // shorter than one redraw interval) and ends the line.
  void Done() {
    std::lock_guard<std::mutex> lock(mu_);
    if (enabled_) Draw(done_, Clock::now());
    if (drawn_) std::fputc('\n', stderr);
    drawn_ = false;
    enabled_ = false;
  }

  // Changes the total (a count learnt once the work started).
  void SetTotal(uint64_t total) {
    std::lock_guard<std::mutex> lock(mu_);
    total_ = total;
  }

  // The work is done: the total was an estimate (file sizes for tensors
  // read out of them), so the final line shows all of it.
  void Complete() {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_ < total_) done_ = total_;
  }

  // Erases the drawn line, so that a result printed to a terminal's stdout
  // does not run into it; the next update draws it again.
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!drawn_) return;
    std::fprintf(stderr, "\r%*s\r", 79, "");
    drawn_ = false;
  }

 private:
  using Clock = std::chrono::steady_clock;

  void Draw(uint64_t done, Clock::time_point now) {
    double secs = std::chrono::duration<double>(now - start_).count();
    double rate = secs > 0 ? done / secs : 0;
    if (total_ == 0) {  // unknown (a pipe): what was read, and how fast
      std::fprintf(stderr, "\r%s: %s  %s/s  %ds   ", label_.c_str(),
                   Human(done).c_str(),
                   Human(static_cast<uint64_t>(rate)).c_str(),
                   static_cast<int>(secs + 0.5));
      drawn_ = true;
      return;
    }
    double pct = total_ ? 100.0 * done / total_ : 0;
    if (pct > 100) pct = 100;
    double left = rate > 0 && total_ > done ? (total_ - done) / rate : 0;
    std::fprintf(stderr, "\r%s: %s / %s%s%s  %3.0f%%  %s/s  %ds left   ",
                 label_.c_str(), Human(done).c_str(), Human(total_).c_str(),
                 unit_.word ? " " : "", unit_.word ? unit_.word : "", pct,
                 Human(static_cast<uint64_t>(rate)).c_str(),
                 static_cast<int>(left + 0.5));
    drawn_ = true;
  }

  std::string Human(uint64_t b) const {
    if (unit_.word != nullptr) return std::to_string(b);
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(b);
    int u = 0;
    while (v >= 1024 && u < 4) {
      v /= 1024;
      ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", v, units[u]);
    return buf;
  }

  std::string label_;
  ProgressUnit unit_;
  uint64_t total_;
  bool enabled_;
  bool drawn_ = false;
  uint64_t done_ = 0;
  std::mutex mu_;
  Clock::time_point start_, last_;
};

}  // namespace decomposed::cli

#endif  // DECOMPOSED_EXAMPLES_CLI_PROGRESS_H_
