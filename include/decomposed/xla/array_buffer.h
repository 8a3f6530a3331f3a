// ArrayBuffer: an ArraySink (array_sink.h) that keeps the decoded array in
// memory, for code that wants the values rather than a file (compare,
// stats, language bindings).
//
// Memory: by default the buffer owns a std::vector<char>. It is sized up
// front only when the decoder has proven the source holds the data
// (ArrayHeader::size_proven); varint literals grow as elements arrive, so a
// small hostile body that declares a huge shape costs no more memory than
// the bytes it really decodes to. set_max_bytes() refuses larger arrays in
// Begin() (kResourceExhausted). Alternatively the caller supplies the
// memory (a std::span<char>); Begin() then refuses an array that does not
// fit (kResourceExhausted) and the elements are written there directly.
//
// Order: elements are always kept in logical row-major order, unless
// accept_column_major(true) was set, in which case a column-major literal
// is kept column-major (order() says which), saving the transpose.
//
// After a successful decode (complete() is true): type(), dims(),
// element_count(), order() and bytes() describe the array; values are
// little-endian, type_info().element_bytes each (PRED: 0/1 bytes; sub-byte
// types one element per byte). Values<T>() views them as T when T's size is
// the element size. Before, or after a failed decode, complete() is false
// and bytes() holds what arrived.
//
// Example:
//   decomposed::ArrayBuffer a;
//   absl::Status s = decomposed::DecodeLiteral(src, body.size(), frame, a);
//   if (!s.ok()) return s;
//   if (a.type() == decomposed::PrimitiveType::kS32) {
//     for (int32_t v : a.Values<int32_t>()) std::cout << v << "\n";
//   }
//   std::vector<char> owned = a.TakeBytes();   // moves the storage out
#ifndef DECOMPOSED_XLA_ARRAY_BUFFER_H_
#define DECOMPOSED_XLA_ARRAY_BUFFER_H_

#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "decomposed/status.h"
#include "decomposed/xla/array_sink.h"
#include "decomposed/xla/primitive_type.h"

namespace decomposed {

class ArrayBuffer final : public ArraySink {
 public:
  // Owns its memory.
  ArrayBuffer() = default;
  // Writes into `memory`, which must outlive the buffer's use.
  explicit ArrayBuffer(std::span<char> memory) : external_(memory), own_(false) {}

  ArrayBuffer(ArrayBuffer&&) = default;
  ArrayBuffer& operator=(ArrayBuffer&&) = default;

  // Refuse arrays over `n` bytes (owned memory only; default: no limit).
  void set_max_bytes(uint64_t n) { max_bytes_ = n; }
  // Keep column-major literals column-major (default: row-major always).
  void accept_column_major(bool on) { accept_column_major_ = on; }

  // --- ArraySink
  bool AcceptsColumnMajor() const override { return accept_column_major_; }
  absl::Status Begin(const ArrayHeader& h) override {
    // A buffer may be reused: Begin starts over.
    begun_ = true;
    complete_ = false;
    size_ = 0;
    header_ = h;
    const uint64_t cap = own_ ? max_bytes_ : external_.size();
    if (h.byte_size > cap) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "array buffer: expected an array of at most ", cap, " bytes, found ",
          Sv(h.type->name), " of ", h.byte_size, " bytes"));
    }
    if (own_) {
      bytes_.clear();
      if (h.size_proven) {
        bytes_.reserve(static_cast<size_t>(h.byte_size));
      }
    }
    return absl::OkStatus();
  }
  absl::Status Write(std::string_view chunk) override {
    if (!begun_) return absl::FailedPreconditionError("ArrayBuffer: no Begin");
    if (chunk.size() > header_.byte_size - size_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "array buffer: ", size_ + chunk.size(), " bytes written but ",
          header_.byte_size, " declared"));
    }
    if (own_) {
      bytes_.insert(bytes_.end(), chunk.begin(), chunk.end());
    } else if (!chunk.empty()) {
      std::memcpy(external_.data() + size_, chunk.data(), chunk.size());
    }
    size_ += chunk.size();
    return absl::OkStatus();
  }
  absl::Status Finish() override {
    if (!begun_) return absl::FailedPreconditionError("ArrayBuffer: no Begin");
    if (size_ != header_.byte_size) {
      return absl::FailedPreconditionError(absl::StrCat(
          "array buffer: ", size_, " bytes written but ", header_.byte_size,
          " declared"));
    }
    complete_ = true;
    return absl::OkStatus();
  }

  // --- The array
  bool complete() const { return complete_; }
  const ArrayHeader& header() const { return header_; }
  PrimitiveType type() const {
    return header_.type ? header_.type->type : PrimitiveType::kInvalid;
  }
  const PrimitiveTypeInfo& type_info() const { return *header_.type; }
  const std::vector<int64_t>& dims() const { return header_.dims; }
  ElementOrder order() const { return header_.order; }
  uint64_t element_count() const { return header_.element_count; }
  // The element bytes (owned or the caller's memory), size() bytes.
  std::string_view bytes() const {
    return own_ ? std::string_view(bytes_.data(), bytes_.size())
                : std::string_view(external_.data(),
                                   static_cast<size_t>(size_));
  }
  uint64_t size() const { return size_; }
  // The elements as T. Precondition: sizeof(T) == type_info().element_bytes
  // (else empty). The storage is only char-aligned: T must tolerate that
  // (the vector's allocation is suitably aligned for every scalar type).
  template <class T>
  std::span<const T> Values() const {
    if (!header_.type || sizeof(T) != header_.type->element_bytes) return {};
    std::string_view b = bytes();
    return {reinterpret_cast<const T*>(b.data()), b.size() / sizeof(T)};
  }
  // Moves the owned storage out (empty for caller memory); the buffer is
  // then empty but keeps its header.
  std::vector<char> TakeBytes() {
    size_ = 0;
    complete_ = false;
    return std::exchange(bytes_, {});
  }

 private:
  std::span<char> external_;
  bool own_ = true;
  uint64_t max_bytes_ = std::numeric_limits<uint64_t>::max();
  bool accept_column_major_ = false;
  bool begun_ = false;
  bool complete_ = false;
  ArrayHeader header_;
  std::vector<char> bytes_;
  uint64_t size_ = 0;
};

}  // namespace decomposed

#endif  // DECOMPOSED_XLA_ARRAY_BUFFER_H_
