// LimitedSource<S>: a bounded view of another ByteSource, in the style of
// riegeli's LimitingReader. It reads the inner source from its current
// position up to an absolute end position and reports a clean end there, so
// a decoder handed one element (a literal body, a length-delimited field)
// cannot read past it, and needs no arithmetic to resynchronise the outer
// cursor afterwards: the outer reader skips to `end()` when the view is done.
//
// Contract (on top of the ByteSource contract of byte_source.h):
//   * positions are the inner source's absolute positions: position() of the
//     view equals the inner position(); size() is `end` (the view's end is
//     its size as far as decoders can tell), or the inner size when that is
//     smaller, and unknown when the inner size is: a view never claims
//     bytes its source may not hold (CheckHeld, ReadToString and the like
//     trust a known size);
//   * the window [cursor(), limit()) is the inner window clipped at `end`;
//   * Pull(n) fails cleanly (status() stays OK) when fewer than n bytes are
//     left before `end`, even if the inner source holds more;
//   * Seek(pos) (when S is a RewindableSource) succeeds for pos in
//     [start(), end()];
//   * ReadView(n) (when S is a ZeroCopySource) is forwarded within bounds;
//   * fd() and backend() (when S has them: FdSource) are forwarded, so that
//     the literal decoder keeps its kernel-copy path on a view of a file;
//   * status() is the inner source's sticky status.
// The view borrows `inner`, which must outlive it; reading the inner source
// directly while a view is in use is not allowed.
//
// Example (hand one body to a decoder, then move past it):
//   decomposed::LimitedSource body(src, e.offset + e.length);
//   absl::Status s = decode_something(body);
//   if (!src.Seek(body.end())) {     // or src.Skip(body.end() - src.position())
//     return src.status();
//   }
#ifndef DECOMPOSED_IO_LIMITED_SOURCE_H_
#define DECOMPOSED_IO_LIMITED_SOURCE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "decomposed/io/byte_source.h"

namespace decomposed {

template <ByteSource S>
class LimitedSource {
 public:
  // Reads `inner` from its current position up to absolute position `end`.
  // Precondition: end >= inner.position().
  LimitedSource(S& inner, uint64_t end)
      : inner_(inner), start_(inner.position()), end_(std::max(end, start_)) {}

  uint64_t start() const { return start_; }
  uint64_t end() const { return end_; }
  // Bytes left before the end of the view.
  uint64_t remaining() const {
    uint64_t pos = inner_.position();
    return pos < end_ ? end_ - pos : 0;
  }

  const char* cursor() const { return inner_.cursor(); }
  const char* limit() const {
    uint64_t left = remaining();
    size_t avail = inner_.available();
    return left < avail ? inner_.cursor() + left : inner_.limit();
  }
  size_t available() const { return static_cast<size_t>(limit() - cursor()); }
  void Advance(size_t n) { inner_.Advance(n); }
  bool Pull(size_t n) {
    if (remaining() < n) {
      // Still pull what is there, so the window holds the view's tail.
      if (remaining() > inner_.available()) {
        inner_.Pull(static_cast<size_t>(remaining()));
      }
      return false;
    }
    return inner_.Pull(n);
  }
  bool Read(char* dst, size_t n) {
    if (remaining() < n) {
      uint64_t left = remaining();
      if (left) inner_.Read(dst, static_cast<size_t>(left));
      return false;
    }
    return inner_.Read(dst, n);
  }
  bool Skip(uint64_t n) {
    if (remaining() < n) {
      inner_.Skip(remaining());
      return false;
    }
    return inner_.Skip(n);
  }
  uint64_t position() const { return inner_.position(); }
  std::optional<uint64_t> size() const {
    // The inner source may hold less than the view claims: report the
    // smaller, so CheckHeld() sees a truncated file as truncated, and
    // nothing when the inner size is unknown (a pipe), so that no reader
    // allocates the declared length on the view's word alone.
    std::optional<uint64_t> inner = inner_.size();
    if (!inner) {
      // A source that retains what it read ahead (SpoolSource) holds the
      // whole view once it has read past its end: the view's size is then
      // known, as a file's would be.
      if constexpr (requires { inner_.held_end(); }) {
        if (inner_.held_end() >= end_) return end_;
      }
      return std::nullopt;
    }
    return std::min(*inner, end_);
  }
  // Forwarded to a source that reads ahead (SpoolSource), clipped to the
  // view.
  bool Hold(uint64_t n)
    requires requires(S& s, uint64_t k) { s.Hold(k); }
  {
    return inner_.Hold(std::min(n, remaining()));
  }
  uint64_t held_end() const
    requires requires(const S& s) { s.held_end(); }
  {
    return std::min(inner_.held_end(), end_);
  }
  const absl::Status& status() const { return inner_.status(); }

  bool Seek(uint64_t pos)
    requires RewindableSource<S>
  {
    if (pos < start_ || pos > end_) return false;
    return inner_.Seek(pos);
  }
  std::optional<std::string_view> ReadView(size_t n)
    requires ZeroCopySource<S>
  {
    if (remaining() < n) return std::nullopt;
    return inner_.ReadView(n);
  }
  // The file descriptor and backend of an fd-backed inner source, so that a
  // decoder handed a view of an FdSource can still let the kernel copy a
  // range of it (copy_file_range). Copying stays the caller's job to bound
  // by remaining().
  int fd()
    requires requires(S& s) { s.fd(); }
  {
    return inner_.fd();
  }
  auto& backend()
    requires requires(S& s) { s.backend(); }
  {
    return inner_.backend();
  }

 private:
  S& inner_;
  uint64_t start_;
  uint64_t end_;
};

static_assert(ZeroCopySource<LimitedSource<MemorySource>>);
static_assert(RewindableSource<LimitedSource<MemorySource>>);
static_assert(RewindableSource<LimitedSource<FdSource>>);
static_assert(ByteSource<LimitedSource<FdSourceRef>>);

}  // namespace decomposed

#endif  // DECOMPOSED_IO_LIMITED_SOURCE_H_
