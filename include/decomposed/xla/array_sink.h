// ArraySink: where the literal decoder (literal_decoder.h) delivers a
// decoded array. The decoder knows neither .npy nor any container: it plans
// the literal (literal_plan.h), tells the sink what array is coming, and
// streams the elements.
//
// Contract, in call order (the decoder keeps it; a sink may rely on it):
//   1. AcceptsColumnMajor() may be asked any number of times, before Begin.
//   2. Begin(header) exactly once. `header` gives the element type, the
//      logical dimensions (major first), the order the elements will come
//      in, and the exact byte size.
//        * order kRowMajor: logical row-major (C) order. Always, unless
//        * order kColumnMajor: only when AcceptsColumnMajor() returned true
//          and the literal's layout is column-major ({0, 1, ..., rank-1},
//          ignoring dimensions of size 1): the elements come as stored,
//          first dimension fastest (Fortran order). Sinks that do not
//          accept it get the array transposed to row-major instead.
//   3. Write(chunk) zero or more times: consecutive chunks of the element
//      bytes, little endian, header.type->element_bytes per element (one
//      byte per element for sub-byte types; PRED is 0/1), no padding.
//      Chunk boundaries are arbitrary: a chunk may split an element. A
//      chunk may be a view into the source (a whole mapped payload at
//      once, zero-copy) or into the decoder's buffer: it is valid only
//      during the call.
//      Kernel copies: when PayloadFd() returns an FdSink, the decoder may,
//      instead of calling Write, flush that FdSink, copy payload bytes into
//      its fd with copy_file_range(2) or splice(2) (advancing the fd's file
//      offset), and then call WroteToFd(n). The FdSink must be positioned so that its
//      next byte is the next payload byte. Interleaving with Write is
//      allowed; the total of both is header.byte_size.
//   4. Finish() once, after exactly header.byte_size bytes, on success.
//   On any error the decoder stops calling the sink (no Finish): the sink is
//   left with a partial array, which its owner discards. A non-OK status
//   from Begin, Write, WroteToFd or Finish stops the decoder and is
//   returned as is.
//
// Example (a sink that counts bytes and keeps the first element):
//   class FirstElement final : public decomposed::ArraySink {
//    public:
//     absl::Status Begin(const decomposed::ArrayHeader& h) override {
//       width_ = h.type->element_bytes;
//       return absl::OkStatus();
//     }
//     absl::Status Write(std::string_view c) override {
//       if (first_.size() < width_) {
//         first_.append(c.substr(0, width_ - first_.size()));
//       }
//       total_ += c.size();
//       return absl::OkStatus();
//     }
//     absl::Status Finish() override { return absl::OkStatus(); }
//    private:
//     size_t width_ = 0;
//     std::string first_;
//     uint64_t total_ = 0;
//   };
//   FirstElement sink;
//   absl::Status s = decomposed::DecodeLiteral(src, body.size(), frame, sink);
#ifndef DECOMPOSED_XLA_ARRAY_SINK_H_
#define DECOMPOSED_XLA_ARRAY_SINK_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/xla/primitive_type.h"

namespace decomposed {

// The order elements reach an ArraySink in.
enum class ElementOrder : uint8_t {
  kRowMajor,     // logical C order: the last dimension varies fastest
  kColumnMajor,  // Fortran order: the first dimension varies fastest
};

// What Begin() announces.
struct ArrayHeader {
  // The element type (never null; an array type XLA can load).
  const PrimitiveTypeInfo* type = nullptr;
  // Logical dimensions, major first (empty: a scalar).
  std::vector<int64_t> dims;
  ElementOrder order = ElementOrder::kRowMajor;
  uint64_t element_count = 0;
  uint64_t byte_size = 0;  // element_count * type->element_bytes
  // True when the source was checked to hold data for all byte_size bytes
  // (fixed-width and bytes encodings), so a sink may allocate byte_size up
  // front. False for varint types (PRED, S32, S64, U32, U64), whose count is
  // only known to match as they decode: allocate as bytes arrive.
  bool size_proven = false;

  PrimitiveType element_type() const { return type->type; }
};

class ArraySink {
 public:
  virtual ~ArraySink() = default;

  // Whether the sink takes a column-major array in column-major order
  // (Begin gets ElementOrder::kColumnMajor). Default: no, transpose it.
  virtual bool AcceptsColumnMajor() const { return false; }

  virtual absl::Status Begin(const ArrayHeader& header) = 0;
  virtual absl::Status Write(std::string_view chunk) = 0;

  // For kernel copies: the FdSink the payload goes to, or nullptr (the
  // default: no kernel copy). See the file comment.
  virtual FdSink* PayloadFd() { return nullptr; }
  // `n` payload bytes were copied into PayloadFd()'s fd directly: account
  // for them (the FdSink's own Wrote(n) included).
  virtual absl::Status WroteToFd(uint64_t n) {
    (void)n;
    return absl::FailedPreconditionError("ArraySink: no payload fd");
  }

  virtual absl::Status Finish() = 0;
};

}  // namespace decomposed

#endif  // DECOMPOSED_XLA_ARRAY_SINK_H_
