// NpySink: writes one .npy file (header, then exactly the declared number of
// payload bytes) through any ByteSink, and the optional `<file>.npy.meta`
// sidecar that names the ml_dtypes type of a void-typed array.
//
//   NpySink<K>        the header + payload writer over a ByteSink K; itself a
//                     ByteSink for the payload, so decoders stream into it.
//   NpyHeaderFor()    the header XLA type + dims + order give
//                     (docs/format.md §12.3: BF16 -> |V2, F8/F4/S4/U4/
//                     S2/U2 -> |V1, PRED -> |b1, C64 -> <c8, C128 -> <c16).
//   WriteNpyMetaSidecar()  `<npy path>.meta` = {"ml_dtype": "bfloat16"},
//                     written atomically (temp file + rename).
//
// Example (a 2x3 F32 array into a file, atomically):
//   decomposed::AtomicFileSink file;
//   if (auto s = file.Open("x.npy"); !s.ok()) return s;
//   decomposed::NpySink npy(file);
//   auto s = npy.Begin(decomposed::NpyHeaderFor(
//       decomposed::Info(decomposed::PrimitiveType::kF32), {2, 3}), 24);
//   npy.Write(std::string_view(bytes, 24));
//   if (s = npy.Finish(); !s.ok()) return s;   // checks 24 bytes arrived
//   return file.Commit();
#ifndef DECOMPOSED_NPY_NPY_SINK_H_
#define DECOMPOSED_NPY_NPY_SINK_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/npy/npy.h"
#include "decomposed/xla/primitive_type.h"
#include "decomposed/status.h"

namespace decomposed {

// The .npy header for an array of `type` with logical `dims`.
// `fortran_order` says the payload is column-major. Precondition: the type
// has an npy descr (every array type in primitive_type.h does).
inline NpyHeader NpyHeaderFor(const PrimitiveTypeInfo& type,
                              std::vector<int64_t> dims,
                              bool fortran_order = false) {
  NpyHeader h;
  h.descr = std::string(type.npy_descr);
  h.fortran_order = fortran_order;
  h.shape = std::move(dims);
  return h;
}

// Writes a .npy through `K`: Begin() once, then the payload through Write(),
// then Finish(), which checks that exactly the declared payload arrived.
// Errors: Begin() twice or Write() before Begin() -> kFailedPrecondition;
// more payload than declared -> Write() returns false and status() is
// kFailedPrecondition; Finish() with fewer bytes -> kFailedPrecondition;
// the inner sink's own errors pass through.
template <ByteSink K>
class NpySink {
 public:
  explicit NpySink(K& sink) : sink_(sink) {}

  absl::Status Begin(const NpyHeader& header, uint64_t data_bytes) {
    if (begun_) return absl::FailedPreconditionError("NpySink: Begin twice");
    begun_ = true;
    declared_ = data_bytes;
    std::string h = FormatNpyHeader(header);
    header_bytes_ = h.size();
    if (!sink_.Write(h)) return sink_.status();
    return absl::OkStatus();
  }

  // ByteSink: payload bytes.
  bool Write(std::string_view d) {
    if (!status_.ok()) return false;
    if (!begun_) {
      status_ = absl::FailedPreconditionError("NpySink: Write before Begin");
      return false;
    }
    if (d.size() > declared_ - written_) {
      status_ = absl::FailedPreconditionError(absl::StrCat(
          "npy payload: ", written_ + d.size(), " bytes written but ",
          declared_, " declared"));
      return false;
    }
    written_ += d.size();
    if (!sink_.Write(d)) {
      status_ = sink_.status();
      return false;
    }
    return true;
  }
  bool Flush() { return sink_.Flush(); }
  // Payload bytes written so far.
  uint64_t position() const { return written_; }
  const absl::Status& status() const {
    return status_.ok() ? static_cast<const absl::Status&>(sink_.status())
                        : status_;
  }
  // Records `n` payload bytes written to the inner sink directly (kernel
  // copies). The caller checked n against remaining().
  void Wrote(uint64_t n) { written_ += n; }
  uint64_t remaining() const { return declared_ - written_; }

  absl::Status Finish() {
    if (!status_.ok()) return status_;
    if (!begun_) return absl::FailedPreconditionError("NpySink: no Begin");
    if (written_ != declared_) {
      return absl::FailedPreconditionError(
          absl::StrCat("npy payload: ", written_, " bytes written but ",
                       declared_, " declared"));
    }
    if (!sink_.Flush()) return sink_.status();
    return absl::OkStatus();
  }

  K& sink() { return sink_; }
  uint64_t header_bytes() const { return header_bytes_; }
  uint64_t file_bytes() const { return header_bytes_ + written_; }

 private:
  K& sink_;
  bool begun_ = false;
  uint64_t declared_ = 0;
  uint64_t written_ = 0;
  uint64_t header_bytes_ = 0;
  absl::Status status_;
};

// The sidecar text: `{"ml_dtype": "<name>"}` (Python json.dumps spacing;
// the name is JSON-escaped), no newline. (Compiled in src/npy/npy_sidecar.cc.)
std::string NpyMetaSidecarText(std::string_view ml_dtype);

// Writes `<npy_path>.meta` atomically. Errors: OS errors from creating,
// writing or renaming the file, with the path. (src/npy/npy_sidecar.cc.)
absl::Status WriteNpyMetaSidecar(const std::string& npy_path,
                                 std::string_view ml_dtype);

}  // namespace decomposed

#endif  // DECOMPOSED_NPY_NPY_SINK_H_
