#include "decomposed/eval/value.h"

#include <cstring>
#include <limits>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/status.h"
#include "decomposed/xla/element_value.h"

namespace decomposed::eval {
namespace {

absl::StatusOr<int64_t> CheckedCount(PrimitiveType type,
                                     const std::vector<int64_t>& dims,
                                     uint64_t max_bytes) {
  if (KindOf(type) == ElementKind::kNone || Info(type).element_bytes == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected an array element type, found ", Sv(PrimitiveTypeName(type))));
  }
  uint64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected dimensions >= 0, found [",
                       absl::StrJoin(dims, ","), "]"));
    }
    if (d != 0 && count > (uint64_t{1} << 62) / static_cast<uint64_t>(d)) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "an array of dimensions [", absl::StrJoin(dims, ","),
          "] has more elements than fit in 64 bits"));
    }
    count *= static_cast<uint64_t>(d);
  }
  const uint64_t bytes = count * Info(type).element_bytes;
  if (bytes > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "expected an array of at most ", max_bytes, " bytes (max_array_bytes), found ",
        Sv(PrimitiveTypeName(type)), "[", absl::StrJoin(dims, ","), "] of ",
        bytes, " bytes"));
  }
  return static_cast<int64_t>(count);
}

void NormaliseElements(PrimitiveType type, char* p, int64_t n) {
  if (type == PrimitiveType::kPred) {
    for (int64_t i = 0; i < n; ++i) p[i] = p[i] != 0 ? 1 : 0;
    return;
  }
  const int bits = SubByteBits(type);
  if (bits == 0) return;
  const bool is_signed = KindOf(type) == ElementKind::kSigned;
  for (int64_t i = 0; i < n; ++i) {
    uint8_t v = static_cast<uint8_t>(p[i]) & ((1u << bits) - 1);
    if (is_signed && (v >> (bits - 1))) v |= static_cast<uint8_t>(~((1u << bits) - 1));
    p[i] = static_cast<char>(v);
  }
}

// Freed large buffers kept for the next allocation of the same size, so
// that an op writing a fresh result reuses pages already mapped instead of
// paying the kernel's page faults and zeroing (measured: a 64 MiB memcpy
// into new memory is 4x slower than into a reused buffer, bench/eval_bench.cc
// BM_MemcpyFresh). At most kBufferCacheBytes are held, which is the
// evaluator's bound on memory beyond the live set (docs/eval.md §6).
constexpr size_t kBufferCacheBytes = size_t{64} << 20;
constexpr size_t kMinCachedBytes = size_t{1} << 20;
constexpr size_t kCacheGranule = size_t{64} << 10;

struct BufferCache {
  std::mutex mu;
  std::vector<std::pair<size_t, char*>> free;  // (capacity, buffer), oldest first
  size_t held = 0;
};

BufferCache& Cache() {
  static BufferCache* c = new BufferCache;
  return *c;
}

void FreeBuffer(char* p) { ::operator delete[](p, std::align_val_t{64}); }

char* TakeBuffer(size_t capacity) {
  BufferCache& c = Cache();
  std::lock_guard<std::mutex> l(c.mu);
  for (size_t i = c.free.size(); i-- > 0;) {
    if (c.free[i].first == capacity) {
      char* p = c.free[i].second;
      c.free.erase(c.free.begin() + static_cast<std::ptrdiff_t>(i));
      c.held -= capacity;
      return p;
    }
  }
  return nullptr;
}

void GiveBuffer(char* p, size_t capacity) {
  if (capacity < kMinCachedBytes || capacity > kBufferCacheBytes) {
    FreeBuffer(p);
    return;
  }
  BufferCache& c = Cache();
  std::vector<char*> drop;
  {
    std::lock_guard<std::mutex> l(c.mu);
    while (c.held + capacity > kBufferCacheBytes && !c.free.empty()) {
      drop.push_back(c.free.front().second);
      c.held -= c.free.front().first;
      c.free.erase(c.free.begin());
    }
    c.free.emplace_back(capacity, p);
    c.held += capacity;
  }
  for (char* q : drop) FreeBuffer(q);
}

}  // namespace

void TrimBufferCache() {
  BufferCache& c = Cache();
  std::vector<std::pair<size_t, char*>> drop;
  {
    std::lock_guard<std::mutex> l(c.mu);
    drop.swap(c.free);
    c.held = 0;
  }
  for (auto& [n, p] : drop) FreeBuffer(p);
}

absl::StatusOr<Array> Array::Allocate(PrimitiveType type,
                                      std::vector<int64_t> dims,
                                      uint64_t max_bytes) {
  absl::StatusOr<int64_t> count = CheckedCount(type, dims, max_bytes);
  if (!count.ok()) return count.status();
  Array a;
  a.type_ = type;
  a.dims_ = std::move(dims);
  a.count_ = *count;
  const size_t bytes = static_cast<size_t>(a.byte_size());
  // 64-byte aligned, so vector loads and the BLAS see aligned rows.
  const size_t capacity = bytes < kMinCachedBytes
                              ? (bytes == 0 ? 1 : bytes)
                              : (bytes + kCacheGranule - 1) / kCacheGranule * kCacheGranule;
  char* p = capacity >= kMinCachedBytes ? TakeBuffer(capacity) : nullptr;
  if (!p) p = static_cast<char*>(::operator new[](capacity, std::align_val_t{64}));
  a.storage_ = std::shared_ptr<char>(p, [capacity](char* q) { GiveBuffer(q, capacity); });
  a.data_ = p;
  a.owned_ = true;
  return a;
}

absl::StatusOr<Array> Array::Zeros(PrimitiveType type, std::vector<int64_t> dims,
                                   uint64_t max_bytes) {
  absl::StatusOr<Array> a = Allocate(type, std::move(dims), max_bytes);
  if (a.ok() && a->byte_size() > 0) std::memset(a->mutable_data(), 0, a->byte_size());
  return a;
}

absl::StatusOr<Array> Array::Borrow(PrimitiveType type, std::vector<int64_t> dims,
                                    const char* bytes, uint64_t size,
                                    std::shared_ptr<const void> keep_alive) {
  absl::StatusOr<int64_t> count = CheckedCount(type, dims, kNoLimit);
  if (!count.ok()) return count.status();
  const uint64_t want = static_cast<uint64_t>(*count) * Info(type).element_bytes;
  if (size != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected ", want, " bytes for ", Sv(PrimitiveTypeName(type)), "[",
        absl::StrJoin(dims, ","), "], found ", size));
  }
  Array a;
  a.type_ = type;
  a.dims_ = std::move(dims);
  a.count_ = *count;
  a.storage_ = std::move(keep_alive);
  a.data_ = bytes;
  a.owned_ = false;
  return a;
}

absl::StatusOr<Array> Array::Copy(PrimitiveType type, std::vector<int64_t> dims,
                                  std::string_view bytes) {
  absl::StatusOr<Array> a = Allocate(type, std::move(dims));
  if (!a.ok()) return a.status();
  if (bytes.size() != a->byte_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected ", a->byte_size(), " bytes for ", a->ShapeString(), ", found ",
        bytes.size()));
  }
  if (!bytes.empty()) std::memcpy(a->mutable_data(), bytes.data(), bytes.size());
  NormaliseElements(type, a->mutable_data(), a->element_count());
  return a;
}

Array Array::View(const Array& base, std::vector<int64_t> dims,
                  std::vector<int64_t> strides, int64_t offset) {
  Array a = base;
  a.data_ = base.data_ + offset * static_cast<int64_t>(base.element_bytes());
  a.count_ = 1;
  for (int64_t d : dims) a.count_ *= d;
  a.dims_ = std::move(dims);
  a.strides_ = std::move(strides);
  // A view whose strides are the row-major ones is contiguous.
  int64_t expect = 1;
  bool row_major = true;
  for (int64_t d = static_cast<int64_t>(a.dims_.size()) - 1; d >= 0; --d) {
    if (a.dims_[d] != 1 && a.strides_[d] != expect) row_major = false;
    expect *= a.dims_[d];
  }
  if (row_major) a.strides_.clear();
  return a;
}

std::vector<int64_t> Array::EffectiveStrides() const {
  if (!strides_.empty()) return strides_;
  std::vector<int64_t> s(dims_.size());
  int64_t acc = 1;
  for (int64_t d = static_cast<int64_t>(dims_.size()) - 1; d >= 0; --d) {
    s[d] = acc;
    acc *= dims_[d];
  }
  return s;
}

absl::StatusOr<Array> Array::Contiguous(uint64_t max_bytes) const {
  if (is_contiguous()) return *this;
  absl::StatusOr<Array> out = Allocate(type_, dims_, max_bytes);
  if (!out.ok()) return out.status();
  const size_t w = element_bytes();
  const int64_t rank = this->rank();
  std::vector<int64_t> idx(rank, 0);
  char* dst = out->mutable_data();
  for (int64_t n = 0; n < count_; ++n) {
    int64_t off = 0;
    for (int64_t d = 0; d < rank; ++d) off += idx[d] * strides_[d];
    std::memcpy(dst + n * w, data_ + off * static_cast<int64_t>(w), w);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < dims_[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

absl::StatusOr<Array> Array::Reshaped(std::vector<int64_t> dims,
                                      uint64_t max_bytes) const {
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) return absl::InvalidArgumentError("negative dimension in reshape");
    count *= d;
  }
  if (count != count_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected ", count_, " elements (", ShapeString(), "), found [",
        absl::StrJoin(dims, ","), "] of ", count));
  }
  absl::StatusOr<Array> c = Contiguous(max_bytes);
  if (!c.ok()) return c.status();
  c->dims_ = std::move(dims);
  return c;
}

Array Array::Retyped(PrimitiveType type) const {
  Array a = *this;
  a.type_ = type;
  return a;
}

std::string Array::ShapeString() const {
  return absl::StrCat(Sv(PrimitiveTypeName(type_)), "[", absl::StrJoin(dims_, ","),
                      "]");
}

std::string Value::ShapeString() const {
  if (!is_tuple_) return array_.ShapeString();
  std::vector<std::string> parts;
  for (const Value& v : elements_) parts.push_back(v.ShapeString());
  return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
}

uint64_t Value::TotalBytes() const {
  if (!is_tuple_) return array_.byte_size();
  uint64_t n = 0;
  for (const Value& v : elements_) n += v.TotalBytes();
  return n;
}

}  // namespace decomposed::eval
