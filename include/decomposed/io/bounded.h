// Bounded operations on any ByteSource, shared by every decoder: check that
// a declared length is held, walk the next `length` bytes chunk by chunk
// without copying, copy them into a string that grows only as bytes arrive,
// or skip them. Every failure names the frame and the byte offset
// (status.h); a declared length is never allocated before it is checked.
#ifndef DECOMPOSED_IO_BOUNDED_H_
#define DECOMPOSED_IO_BOUNDED_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/status.h"

namespace decomposed {

// Checks that `length` bytes from the current position are held by `src`,
// when its size is known (a SpoolSource is first asked to read ahead up to
// them, HoldAhead: it then fails as a regular file would).
template <ByteSource S>
absl::Status CheckHeld(S& src, uint64_t length, const Frame& frame) {
  HoldAhead(src, length);
  std::optional<uint64_t> rem = Remaining(src);
  if (rem && length > *rem) {
    return TruncatedError(frame, src.position(), length, *rem);
  }
  return absl::OkStatus();
}

template <ByteSource S>
absl::Status SourceEnded(const S& src, const Frame& frame, uint64_t declared,
                         uint64_t got, uint64_t body_offset) {
  if (!src.status().ok()) return Prefix(src.status(), frame);
  return TruncatedError(frame, body_offset, declared, got);
}

// Calls `fn(std::string_view chunk)` for consecutive chunks of the next
// `length` bytes, straight from the source's window (no copy). `fn` returns
// an absl::Status; a non-OK one stops the walk and is returned.
template <ByteSource S, class Fn>
absl::Status ForEachChunk(S& src, uint64_t length, const Frame& frame,
                          Fn&& fn) {
  uint64_t start = src.position();
  uint64_t left = length;
  while (left > 0) {
    if (src.available() == 0 && !src.Pull(1)) {
      return SourceEnded(src, frame, length, length - left, start);
    }
    size_t k = static_cast<size_t>(std::min<uint64_t>(left, src.available()));
    std::string_view chunk(src.cursor(), k);
    src.Advance(k);
    left -= k;
    absl::Status s = fn(chunk);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// Copies the next `length` bytes into `out` (replacing its contents). The
// string grows only as bytes arrive, never from the declared length alone.
template <ByteSource S>
absl::Status ReadToString(S& src, uint64_t length, const Frame& frame,
                          std::string* out) {
  out->clear();
  if (absl::Status s = CheckHeld(src, length, frame); !s.ok()) return s;
  if (Remaining(src)) {
    // The source holds the bytes (checked above): read them in one go.
    uint64_t start = src.position();
    out->resize(static_cast<size_t>(length));
    if (!src.Read(out->data(), static_cast<size_t>(length))) {
      uint64_t got = src.position() - start;
      out->clear();
      return SourceEnded(src, frame, length, got, start);
    }
    return absl::OkStatus();
  }
  return ForEachChunk(src, length, frame, [&](std::string_view c) {
    out->append(c);
    return absl::OkStatus();
  });
}

// Skips the next `length` bytes; seekable sources do not read them.
template <ByteSource S>
absl::Status SkipBytes(S& src, uint64_t length, const Frame& frame) {
  uint64_t start = src.position();
  if (absl::Status s = CheckHeld(src, length, frame); !s.ok()) return s;
  if (!src.Skip(length)) {
    return SourceEnded(src, frame, length, src.position() - start, start);
  }
  return absl::OkStatus();
}

}  // namespace decomposed

#endif  // DECOMPOSED_IO_BOUNDED_H_
