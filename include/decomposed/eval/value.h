// The values the CPU evaluator (eval/evaluate.h) computes with: arrays of
// any XLA element type, and tuples of values.
//
// An Array is an element type, logical dimensions (major first) and
// elements in the literal codec's output form (docs/eval.md §2):
// little-endian, fixed width, one element per byte for the sub-byte types
// (S4/U4/S2/U2: the value sign- or zero-extended into the byte), PRED as
// 0/1 bytes. The elements live in shared storage, so that an instruction's
// result may alias an operand without a copy (reshape, bitcast, copy,
// get-tuple-element, tuple). Storage is either owned (allocated by the
// evaluator) or borrowed (a caller's buffer, a mapped snapshot input) with
// a keep-alive handle.
//
// Almost every array is contiguous row-major. The one exception is a
// strided view (strides() non-empty, in elements, 0 for a broadcast
// dimension): a broadcast result is such a view of its operand, so that an
// elementwise op reads it without the broadcast being materialised.
// Contiguous() returns the row-major copy where a caller needs one.
//
// Arrays are immutable once shared: only the code that allocated one
// writes it, through mutable_data(), before handing it out.
//
// Example:
//   using decomposed::eval::Array;
//   Array a = *Array::Allocate(decomposed::PrimitiveType::kF32, {2, 3});
//   float* p = a.mutable_data<float>();
//   for (int i = 0; i < 6; ++i) p[i] = i;
//   Array r = *a.Reshaped({3, 2});          // same storage, no copy
//   decomposed::eval::Value t = decomposed::eval::Value::Tuple({a, r});
//   t.element(1).array().dims();            // {3, 2}
#ifndef DECOMPOSED_EVAL_VALUE_H_
#define DECOMPOSED_EVAL_VALUE_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "decomposed/xla/primitive_type.h"

namespace decomposed::eval {

class Array {
 public:
  // An empty F32 scalar-less placeholder (type kInvalid, no storage).
  Array() = default;

  // A new contiguous array of `type` and `dims`, uninitialised. Errors:
  // kInvalidArgument for a type without array data (TUPLE, TOKEN, ...) or a
  // negative dimension; kResourceExhausted when the byte size overflows or
  // exceeds `max_bytes` (the evaluator passes EvalOptions::max_array_bytes).
  static absl::StatusOr<Array> Allocate(PrimitiveType type,
                                        std::vector<int64_t> dims,
                                        uint64_t max_bytes = kNoLimit);
  // As Allocate, every byte zero.
  static absl::StatusOr<Array> Zeros(PrimitiveType type,
                                     std::vector<int64_t> dims,
                                     uint64_t max_bytes = kNoLimit);
  // A contiguous array over a caller's bytes, without a copy. `bytes` must
  // hold exactly element_count * element_bytes bytes in this file's
  // element form and stay valid while `keep_alive` (or any copy of the
  // array) lives. Errors: kInvalidArgument when the size does not match.
  static absl::StatusOr<Array> Borrow(PrimitiveType type,
                                      std::vector<int64_t> dims,
                                      const char* bytes, uint64_t size,
                                      std::shared_ptr<const void> keep_alive);
  // A contiguous copy of `bytes` (PRED bytes normalised to 0/1, sub-byte
  // integers sign- or zero-extended from their low bits).
  static absl::StatusOr<Array> Copy(PrimitiveType type,
                                    std::vector<int64_t> dims,
                                    std::string_view bytes);
  // A strided view of `base`'s storage: `strides` in elements, one per
  // dimension of `dims` (0: broadcast). Precondition: every index of `dims`
  // maps inside the base's storage.
  // `offset` (in elements, from base.data()) is where index 0..0 is; a
  // stride may be negative (reverse).
  static Array View(const Array& base, std::vector<int64_t> dims,
                    std::vector<int64_t> strides, int64_t offset = 0);

  static constexpr uint64_t kNoLimit = ~uint64_t{0};

  PrimitiveType type() const { return type_; }
  const PrimitiveTypeInfo& type_info() const { return Info(type_); }
  size_t element_bytes() const { return Info(type_).element_bytes; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  int64_t element_count() const { return count_; }
  // element_count() * element_bytes(): the size of the contiguous form.
  uint64_t byte_size() const { return count_ * element_bytes(); }
  bool valid() const { return type_ != PrimitiveType::kInvalid; }

  // Empty for a contiguous row-major array; else one stride per dimension.
  const std::vector<int64_t>& strides() const { return strides_; }
  bool is_contiguous() const { return strides_.empty(); }
  // The strides of this array whether contiguous or not.
  std::vector<int64_t> EffectiveStrides() const;

  // The first element. For a strided view, element i_0..i_n is at
  // data() + sum(i_k * strides[k]) * element_bytes().
  const char* data() const { return data_; }
  template <class T>
  const T* data() const { return reinterpret_cast<const T*>(data_); }
  // Only for the producer of a freshly allocated (owned, contiguous)
  // array, before it is shared.
  char* mutable_data() const { return const_cast<char*>(data_); }
  template <class T>
  T* mutable_data() const { return reinterpret_cast<T*>(mutable_data()); }
  // The contiguous bytes. Precondition: is_contiguous().
  std::string_view bytes() const {
    return {data_, static_cast<size_t>(byte_size())};
  }

  // True when the storage was allocated by the evaluator (not borrowed).
  bool owns_storage() const { return owned_; }
  // True when no other array shares this array's storage: its producer or
  // last user may write it in place.
  bool storage_unique() const { return owned_ && storage_.use_count() == 1; }
  bool SharesStorageWith(const Array& o) const {
    return storage_ && storage_ == o.storage_;
  }
  const std::shared_ptr<const void>& storage() const { return storage_; }

  // Same elements, other dims (equal element count), sharing storage when
  // contiguous; a strided view is copied first. Errors: kInvalidArgument
  // when the counts differ.
  absl::StatusOr<Array> Reshaped(std::vector<int64_t> dims,
                                 uint64_t max_bytes = kNoLimit) const;
  // Same bytes, another type of the same element size (bitcast-convert of
  // equal widths). Precondition: is_contiguous().
  Array Retyped(PrimitiveType type) const;
  // This array when contiguous, else its row-major copy.
  absl::StatusOr<Array> Contiguous(uint64_t max_bytes = kNoLimit) const;

  // "F32[2,3]".
  std::string ShapeString() const;

 private:
  PrimitiveType type_ = PrimitiveType::kInvalid;
  std::vector<int64_t> dims_;
  std::vector<int64_t> strides_;
  int64_t count_ = 0;
  std::shared_ptr<const void> storage_;
  const char* data_ = nullptr;
  bool owned_ = false;
};

// An array or a tuple of values (possibly empty: a token is an empty
// tuple).
class Value {
 public:
  Value() : is_tuple_(true) {}
  Value(Array a) : array_(std::move(a)) {}  // NOLINT: an array is a value
  static Value Tuple(std::vector<Value> elements) {
    Value v;
    v.elements_ = std::move(elements);
    return v;
  }

  bool is_tuple() const { return is_tuple_; }
  bool is_array() const { return !is_tuple_; }
  // Precondition: is_array().
  const Array& array() const { return array_; }
  // Precondition: is_tuple().
  const std::vector<Value>& elements() const { return elements_; }
  const Value& element(size_t i) const { return elements_[i]; }
  size_t element_count() const { return elements_.size(); }

  // "F32[2,3]" or "(F32[2], S32[])".
  std::string ShapeString() const;
  // Bytes of every array reachable (shared storage counted once per
  // occurrence).
  uint64_t TotalBytes() const;

 private:
  bool is_tuple_ = false;
  Array array_;
  std::vector<Value> elements_;
};

// Frees the buffers the allocator keeps for reuse: arrays of 1 MiB and more
// return their memory to a process-wide cache of at most 64 MiB when
// released, so that the next array of the same size reuses mapped pages.
void TrimBufferCache();

}  // namespace decomposed::eval

#endif  // DECOMPOSED_EVAL_VALUE_H_
