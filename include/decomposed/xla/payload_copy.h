// Payload copy: moves the element bytes of a literal whose data needs no
// conversion (fixed-width and bytes encodings) from a source to an
// ArraySink (array_sink.h) by the fastest way the pair allows:
//   * a zero-copy view of the whole payload (MemorySource, MmapSource: the
//     sink gets one Write of the mapped bytes);
//   * else the bytes already in the source's window, then, from an
//     FdSource to a sink with a PayloadFd() (an .npy file), splice(2)
//     through a pipe (io/splice_copy.h: the default for payloads of at
//     least kSpliceMinBytes, measured fastest here: docs/unpack.md);
//   * or, with CopyMethod::kKernel, copy_file_range(2) between the same
//     pair;
//   * else (a small payload, another sink, CopyMethod::kBuffer, or a pair
//     the kernel refuses: EXDEV, EINVAL, ENOSYS, EOPNOTSUPP, EBADF) Read()
//     into one reused buffer, then the sink's Write.
// PayloadWriter also counts what the sink has been given, so the decoder
// can check element counts (remaining()).
//
// Errors: kOutOfRange when the source ends inside the payload; more bytes
// than the sink was promised (kFailedPrecondition, a decoder bug); I/O
// errors of either side, prefixed with the frame.
//
// Example:
//   decomposed::internal::PayloadWriter out(sink, header.byte_size,
//                                           decomposed::CopyMethod::kAuto,
//                                           buf, sizeof(buf));
//   absl::Status s = out.Raw(src, header.byte_size, frame);
#ifndef DECOMPOSED_XLA_PAYLOAD_COPY_H_
#define DECOMPOSED_XLA_PAYLOAD_COPY_H_

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <concepts>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/splice_copy.h"
#include "decomposed/status.h"
#include "decomposed/xla/array_sink.h"

namespace decomposed {

// How fixed-width data moves from an FdSource to an fd-backed sink.
enum class CopyMethod {
  kAuto,    // the measured fastest here (docs/unpack.md#closer-to-cp):
            // kSplice for payloads of kSpliceMinBytes and more, else kBuffer
  kKernel,  // copy_file_range(2), falling back to kBuffer where unsupported
  kBuffer,  // read(2) into one reused buffer, then write(2)
  kSplice,  // splice(2) through a pipe, falling back to kBuffer where
            // unsupported
};

// The smallest payload kAuto splices: below it the pipe's set-up (four
// system calls) costs more than the buffer's one extra copy.
inline constexpr uint64_t kSpliceMinBytes = 256 << 10;

// Which way the decoder moved a literal's data (for tests and benchmarks).
enum class LiteralPath {
  kEmpty,       // no payload
  kView,        // zero-copy view of the source
  kKernelCopy,  // copy_file_range
  kSpliceCopy,  // splice through a pipe
  kBufferCopy,  // Read into a reused buffer
  kVarint,      // chunked varint decode of one packed record
  kGeneral,     // re-walk of several / unpacked records
  kTranspose,   // gathered in logical order
};

namespace internal {

template <class S>
concept FdBackedSource = requires(S& s) {
  { s.fd() } -> std::convertible_to<int>;
  { s.backend().origin() } -> std::convertible_to<uint64_t>;
};

// An ArraySink with a byte budget: what the decoder writes payload through.
class PayloadWriter {
 public:
  // `buf` / `cap`: the reused copy buffer (may be null when only Put() and
  // zero-copy Raw() are used).
  PayloadWriter(ArraySink& sink, uint64_t bytes, CopyMethod copy, char* buf,
                size_t cap)
      : sink_(sink), left_(bytes), copy_(copy), buf_(buf), cap_(cap) {}

  uint64_t remaining() const { return left_; }

  // Reports each chunk's size to `*fn` (LiteralDecodeOptions::on_payload);
  // `fn` must outlive the writer.
  void set_on_payload(const std::function<void(uint64_t)>* fn) {
    on_payload_ = fn;
  }

  absl::Status Put(std::string_view d) {
    if (d.size() > left_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "array payload: ", d.size(), " more bytes with ", left_, " left"));
    }
    left_ -= d.size();
    absl::Status s = sink_.Write(d);
    if (on_payload_ != nullptr) (*on_payload_)(d.size());
    return s;
  }

  // Copies `n` raw payload bytes from `src`.
  template <ByteSource S>
  absl::Status Raw(S& src, uint64_t n, const Frame& frame) {
    const uint64_t start = src.position();
    if constexpr (ZeroCopySource<S>) {
      std::optional<std::string_view> v = src.ReadView(static_cast<size_t>(n));
      if (!v) return TruncatedError(frame, start, n, src.available());
      path_ = LiteralPath::kView;
      if (on_payload_ == nullptr || v->empty()) return Put(*v);
      // Someone shows progress: hand the view over in 64 MiB pieces.
      for (size_t at = 0; at < v->size(); at += size_t{64} << 20) {
        if (absl::Status s = Put(v->substr(at, size_t{64} << 20)); !s.ok()) {
          return s;
        }
      }
      return absl::OkStatus();
    } else {
      size_t w = static_cast<size_t>(std::min<uint64_t>(n, src.available()));
      if (w) {
        if (absl::Status s = Put(std::string_view(src.cursor(), w)); !s.ok()) {
          return s;
        }
        src.Advance(w);
      }
      uint64_t left = n - w;
      path_ = LiteralPath::kBufferCopy;
      if constexpr (FdBackedSource<S>) {
        FdSink* fs = sink_.PayloadFd();
        if (fs && copy_ == CopyMethod::kKernel && left > 0) {
          bool handled = false;
          absl::Status s = KernelCopy(src, *fs, left, frame, &handled);
          if (!s.ok()) return s;
          if (handled) {
            path_ = LiteralPath::kKernelCopy;
            return absl::OkStatus();
          }
        }
        const bool splice =
            copy_ == CopyMethod::kSplice ||
            (copy_ == CopyMethod::kAuto && left >= kSpliceMinBytes);
        if (fs && splice && left > 0) {
          absl::StatusOr<uint64_t> moved = SpliceTo(src, *fs, left, frame);
          if (!moved.ok()) return moved.status();
          if (*moved > 0) path_ = LiteralPath::kSpliceCopy;
          left -= *moved;  // the rest (if refused) through the buffer
        }
      }
      while (left > 0) {
        size_t k = static_cast<size_t>(std::min<uint64_t>(left, cap_));
        if (!src.Read(buf_, k)) {
          if (!src.status().ok()) return Prefix(src.status(), frame);
          return TruncatedError(frame, start, n, src.position() - start);
        }
        if (absl::Status s = Put(std::string_view(buf_, k)); !s.ok()) return s;
        left -= k;
      }
      return absl::OkStatus();
    }
  }

  // The way the last Raw() went.
  LiteralPath path() const { return path_; }

 private:
  template <class S>
  absl::Status KernelCopy(S& src, FdSink& fs, uint64_t n, const Frame& frame,
                          bool* handled) {
    if (n > left_) {
      return absl::FailedPreconditionError("array payload: more than declared");
    }
    if (!fs.Flush()) return fs.status();
    loff_t off = static_cast<loff_t>(src.backend().origin() + src.position());
    const uint64_t start = src.position();
    uint64_t done = 0;
    while (done < n) {
      // 1 GiB per call; 64 MiB when someone shows progress.
      const uint64_t max_chunk = on_payload_ != nullptr ? 64 << 20 : 1 << 30;
      size_t chunk = static_cast<size_t>(std::min<uint64_t>(n - done, max_chunk));
      ssize_t r = ::copy_file_range(src.fd(), &off, fs.fd(), nullptr, chunk, 0);
      if (r < 0) {
        if (errno == EINTR) continue;
        if (done == 0 && (errno == EXDEV || errno == EINVAL ||
                          errno == ENOSYS || errno == EOPNOTSUPP ||
                          errno == EBADF)) {
          return absl::OkStatus();  // not handled: use the buffer
        }
        return Prefix(ErrnoError(errno, "copy_file_range"),
                      frame.str());
      }
      if (r == 0) {
        left_ -= done;
        if (absl::Status s = sink_.WroteToFd(done); !s.ok()) return s;
        return TruncatedError(frame, start, n, done);
      }
      done += static_cast<uint64_t>(r);
      if (on_payload_ != nullptr) (*on_payload_)(static_cast<uint64_t>(r));
    }
    left_ -= done;
    if (absl::Status s = sink_.WroteToFd(done); !s.ok()) return s;
    *handled = true;
    if (!src.Skip(done)) {
      return TruncatedError(frame, start, n, src.position() - start);
    }
    return absl::OkStatus();
  }

  // Splices up to `n` payload bytes to the sink's fd; returns how many
  // (fewer only where the kernel refuses the pair: the caller copies the
  // rest). The source ending early is the truncation error.
  template <class S>
  absl::StatusOr<uint64_t> SpliceTo(S& src, FdSink& fs, uint64_t n,
                                    const Frame& frame) {
    if (n > left_) {
      return absl::FailedPreconditionError("array payload: more than declared");
    }
    if (!fs.Flush()) return fs.status();
    const uint64_t start = src.position();
    bool unsupported = false;
    absl::StatusOr<uint64_t> done =
        SpliceCopy(src.fd(), src.backend().origin() + start, fs.fd(), n,
                   on_payload_, &unsupported);
    if (!done.ok()) return Prefix(done.status(), frame);
    left_ -= *done;
    if (absl::Status s = sink_.WroteToFd(*done); !s.ok()) return s;
    if (*done < n && !unsupported) return TruncatedError(frame, start, n, *done);
    if (!src.Skip(*done)) {
      return TruncatedError(frame, start, n, src.position() - start);
    }
    return *done;
  }

  ArraySink& sink_;
  uint64_t left_;
  CopyMethod copy_;
  char* buf_;
  size_t cap_;
  LiteralPath path_ = LiteralPath::kGeneral;
  const std::function<void(uint64_t)>* on_payload_ = nullptr;
};

}  // namespace internal
}  // namespace decomposed

#endif  // DECOMPOSED_XLA_PAYLOAD_COPY_H_
