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
//   other codes        operating-system errors, via absl::ErrnoToStatus
//                      (kPermissionDenied, kNotFound, kAlreadyExists, ...).
#ifndef DECOMPOSED_STATUS_H_
#define DECOMPOSED_STATUS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
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

// "<frame>: expected <expected>, found <found> (at byte <offset>)".
inline absl::Status FrameError(absl::StatusCode code, const Frame& frame,
                               uint64_t offset, std::string_view expected,
                               std::string_view found) {
  return absl::Status(code, absl::StrCat(frame.str(), ": expected ", Sv(expected),
                                         ", found ", Sv(found), " (at byte ",
                                         offset, ")"));
}

// A declared size that the source does not hold (kOutOfRange):
// "<frame>: declared <declared> bytes but <remaining> remain (at byte N)".
inline absl::Status TruncatedError(const Frame& frame, uint64_t offset,
                                   uint64_t declared, uint64_t remaining) {
  return absl::OutOfRangeError(
      absl::StrCat(frame.str(), ": declared ", Counted(declared, "byte"),
                   " but ", remaining, " remain (at byte ", offset, ")"));
}

// The input path that means standard input ("-", as for cat and tar).
inline constexpr std::string_view kStdinPath = "-";

// Appends " of <path>" to the message when it ends in a byte position, or
// " (<path>)" otherwise, keeping the code. Used at API boundaries that know
// the file name. Standard input (kStdinPath) is marked ", from stdin" and
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
  return absl::Status(s.code(), msg);
}

// Prefixes the message with "<context>: ", keeping the code.
inline absl::Status Prefix(const absl::Status& s, std::string_view context) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(Sv(context), ": ", s.message()));
}

}  // namespace decomposed

#endif  // DECOMPOSED_STATUS_H_
