// Error conventions shared by every decoder and encoder in this library.
//
// Every failure is an absl::Status whose message names
//   * the frame (for example "input 3 body length box"),
//   * the byte offset of the problem in the stream,
//   * what was expected and what was found,
// for example:
//   input 3 body: declared 1048576 bytes but 1200 remain (at byte 4113)
//
// Canonical codes, chosen once; every code the library returns is here:
//   kInvalidArgument   the bytes are malformed: a bad varint, a forbidden
//                      field, a shape XLA would reject, trailing data; or a
//                      caller's request is (an unknown dtype name, a path
//                      that is not a directory where one is needed).
//   kOutOfRange        the input ends before a frame it declared (truncation,
//                      a declared length or count past the end of the data),
//                      or an index past the inputs a bundle holds.
//   kResourceExhausted a named limit of this library (limits.h) was exceeded.
//   kUnimplemented     well-formed input this library cannot convert (for
//                      example an XLA type with no NumPy representation, a
//                      compressed zip entry, a Fortran-order or
//                      non-contiguous tensor).
//   kFailedPrecondition  the state of the world is wrong for the call: an
//                      API used out of order, an output that already exists
//                      where overwriting is not allowed, a path that is not
//                      a regular file (a FIFO or device) or not a directory,
//                      a bundle without meta.json, a writer promised more
//                      bytes than it was given.
//   kDataLoss          a write failed with no errno to report (a stream's
//                      failbit), or an input changed between the two passes
//                      that read it.
//   kCancelled         a caller's callback asked to stop (StreamTensor).
//   kInternal          a broken invariant of this library (a seek back
//                      inside a file it just read, a message protobuf
//                      cannot serialize): a bug, never the input's fault.
//   kNotFound          a file the input names is missing (a `.npy.meta`
//                      sidecar that vanished between stat and open);
//                      ErrnoToStatus gives it for ENOENT too.
//   other codes        operating-system errors, via ErrnoError below
//                      (absl::ErrnoToStatus's codes: kPermissionDenied,
//                      kNotFound, kAlreadyExists, ...).
//
// Errors as data: what the message says for people travels beside it for
// programs, as absl::Status payloads (SetPayload) under the type URLs below,
// so that no caller parses the English back (verify's problem list, the
// Python package's FormatError.frame / .offset and OSError.errno):
//   kFramePayload   the frame, "input 3 body"           (FrameError,
//   kOffsetPayload  the byte offset, decimal, "4113"      TruncatedError)
//   kErrnoPayload   the errno of an OS error, decimal     (ErrnoError)
//   kPathPayload    the input the message names          (WithFile)
// FrameOf, OffsetOf, ErrnoOf and PathOf read them. Every helper here that
// rewrites a message (WithFile, Prefix, WithMessage) keeps the payloads.
#ifndef DECOMPOSED_STATUS_H_
#define DECOMPOSED_STATUS_H_

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace decomposed {

// Debian's Abseil is built with its own absl::string_view (not an alias of
// std::string_view), so StrCat cannot take a std::string_view directly.
// Sv() adapts one without copying.
inline absl::string_view Sv(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

// "<n> <noun>" with the noun's plural (noun + "s") unless n is 1:
// Counted(1, "file") -> "1 file", Counted(0, "input") -> "0 inputs".
inline std::string Counted(uint64_t n, std::string_view noun) {
  return absl::StrCat(n, " ", Sv(noun), n == 1 ? "" : "s");
}

// --- Payloads -----------------------------------------------------------------

inline constexpr std::string_view kFramePayload = "decomposed/frame";
inline constexpr std::string_view kOffsetPayload = "decomposed/offset";
inline constexpr std::string_view kErrnoPayload = "decomposed/errno";
inline constexpr std::string_view kPathPayload = "decomposed/path";

namespace internal {

inline std::optional<std::string> PayloadString(const absl::Status& s,
                                                std::string_view url) {
  absl::optional<absl::Cord> p = s.GetPayload(Sv(url));
  if (!p) return std::nullopt;
  return std::string(*p);
}

inline std::optional<uint64_t> PayloadNumber(const absl::Status& s,
                                             std::string_view url) {
  std::optional<std::string> p = PayloadString(s, url);
  uint64_t v;
  if (!p || !absl::SimpleAtoi(*p, &v)) return std::nullopt;
  return v;
}

}  // namespace internal

// The frame named by a status (kFramePayload), e.g. "input 3 body".
inline std::optional<std::string> FrameOf(const absl::Status& s) {
  return internal::PayloadString(s, kFramePayload);
}
// The byte offset of the problem in the input (kOffsetPayload).
inline std::optional<uint64_t> OffsetOf(const absl::Status& s) {
  return internal::PayloadNumber(s, kOffsetPayload);
}
// The errno of an operating-system error (kErrnoPayload).
inline std::optional<int> ErrnoOf(const absl::Status& s) {
  std::optional<uint64_t> e = internal::PayloadNumber(s, kErrnoPayload);
  if (!e || *e > 4095) return std::nullopt;
  return static_cast<int>(*e);
}
// The input a status names (kPathPayload), as the caller gave it ("-" for
// standard input).
inline std::optional<std::string> PathOf(const absl::Status& s) {
  return internal::PayloadString(s, kPathPayload);
}

// `s` with `message` instead of its message, keeping its code and payloads.
inline absl::Status WithMessage(const absl::Status& s,
                                std::string_view message) {
  if (s.ok()) return s;
  absl::Status out(s.code(), Sv(message));
  s.ForEachPayload([&out](absl::string_view url, const absl::Cord& payload) {
    out.SetPayload(url, payload);
  });
  return out;
}

// `s` located: the frame and offset payloads set (replacing any), the
// message unchanged.
inline absl::Status WithLocation(absl::Status s, std::string_view frame,
                                 uint64_t offset) {
  if (s.ok()) return s;
  s.SetPayload(Sv(kFramePayload), absl::Cord(Sv(frame)));
  s.SetPayload(Sv(kOffsetPayload), absl::Cord(absl::StrCat(offset)));
  return s;
}

// An operating-system error: absl::ErrnoToStatus(error, what) ("<what>:
// <strerror text>", the code from errno) with the errno as kErrnoPayload.
inline absl::Status ErrnoError(int error, std::string_view what) {
  absl::Status s = absl::ErrnoToStatus(error, Sv(what));
  if (!s.ok()) s.SetPayload(Sv(kErrnoPayload), absl::Cord(absl::StrCat(error)));
  return s;
}

// --- Frames ---------------------------------------------------------------------

// Names one frame of a stream: `name` `index` `part`, each optional,
// joined by spaces: {"input", 3, "body length box"} -> "input 3 body length
// box", {"header length box"} -> "header length box". `name` is a literal's
// role ("input", "output") or a whole frame name; it is not a region
// (docs/format.md §2.1: a region is a position [0], [1], [2] in the file).
// Cheap to build; only formatted when an error is reported.
struct Frame {
  std::string_view name;
  int64_t index = -1;
  std::string_view part;

  std::string str() const {
    std::string s(name);
    if (index >= 0) absl::StrAppend(&s, s.empty() ? "" : " ", index);
    if (!part.empty()) absl::StrAppend(&s, s.empty() ? "" : " ", Sv(part));
    return s;
  }
};

// "<frame>: expected <expected>, found <found> (at byte <offset>)", with the
// frame and the offset as payloads.
inline absl::Status FrameError(absl::StatusCode code, const Frame& frame,
                               uint64_t offset, std::string_view expected,
                               std::string_view found) {
  const std::string name = frame.str();
  return WithLocation(
      absl::Status(code, absl::StrCat(name, ": expected ", Sv(expected),
                                      ", found ", Sv(found), " (at byte ",
                                      offset, ")")),
      name, offset);
}

// A declared size that the source does not hold (kOutOfRange):
// "<frame>: declared <declared> bytes but <remaining> remain (at byte N)",
// with the frame and the offset as payloads.
inline absl::Status TruncatedError(const Frame& frame, uint64_t offset,
                                   uint64_t declared, uint64_t remaining) {
  const std::string name = frame.str();
  return WithLocation(
      absl::OutOfRangeError(absl::StrCat(name, ": declared ",
                                         Counted(declared, "byte"), " but ",
                                         remaining, " remain (at byte ",
                                         offset, ")")),
      name, offset);
}

// The input path that means standard input ("-", as for cat and tar).
inline constexpr std::string_view kStdinPath = "-";

// Appends " of <path>" to the message when it ends in a byte position, or
// " (<path>)" otherwise, keeping the code and the payloads and setting
// kPathPayload (unless already set). Used at API boundaries that know the
// file name. Standard input (kStdinPath) is marked ", from stdin" and
// " (from stdin)": "... (at byte 4113, from stdin)". This is the one place
// that names the input in a message.
inline absl::Status WithFile(const absl::Status& s, std::string_view path) {
  if (s.ok() || path.empty()) return s;
  const bool stdin_input = path == kStdinPath;
  std::string msg(s.message());
  if (!msg.empty() && msg.back() == ')') {
    msg.pop_back();
    absl::StrAppend(&msg, stdin_input ? ", from stdin" : " of ",
                    stdin_input ? "" : Sv(path), ")");
  } else {
    absl::StrAppend(&msg, " (", stdin_input ? "from stdin" : Sv(path), ")");
  }
  absl::Status out = WithMessage(s, msg);
  if (!PathOf(out)) out.SetPayload(Sv(kPathPayload), absl::Cord(Sv(path)));
  return out;
}

// Prefixes the message with "<context>: ", keeping the code and payloads.
inline absl::Status Prefix(const absl::Status& s, std::string_view context) {
  if (s.ok()) return s;
  return WithMessage(s, absl::StrCat(Sv(context), ": ", s.message()));
}

// Prefix(s, frame.str()) for an error met inside `frame` (a source's I/O
// error), which then names that frame (kFramePayload) unless it names one
// already.
inline absl::Status Prefix(const absl::Status& s, const Frame& frame) {
  if (s.ok()) return s;
  const std::string name = frame.str();
  absl::Status out = Prefix(s, name);
  if (!FrameOf(out)) out.SetPayload(Sv(kFramePayload), absl::Cord(name));
  return out;
}

}  // namespace decomposed

#endif  // DECOMPOSED_STATUS_H_
