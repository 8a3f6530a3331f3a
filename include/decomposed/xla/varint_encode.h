// VarintConverter: the encoder's element conversion. It turns fixed-width
// little-endian elements of a varint type (PRED, S32, S64, U32, U64) into
// packed varints in chunks, counting (sizing pass) or emitting them, as
// XLA's LiteralBase::ToProto does (docs/format.md §8.3):
// PRED non-zero -> 1; S32 sign-extended to 64 bits (negatives take 10
// bytes, as protobuf's int32 does); U32 zero-extended.
//
// Errors: only those of the `emit` callback, passed through.
//
// Example (two S32 elements, -1 and 300, to varints):
//   decomposed::internal::VarintConverter conv(
//       decomposed::DataEncoding::kVarint32, 4);
//   conv.set_emit(true);
//   std::string out;
//   auto emit = [&](std::string_view c) { out.append(c); return absl::OkStatus(); };
//   int32_t v[2] = {-1, 300};
//   conv.Feed(std::string_view(reinterpret_cast<char*>(v), 8), emit);
//   conv.Flush(emit);  // out: ff ff ff ff ff ff ff ff ff 01 ac 02
#ifndef DECOMPOSED_XLA_VARINT_ENCODE_H_
#define DECOMPOSED_XLA_VARINT_ENCODE_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "decomposed/wire/writer.h"
#include "decomposed/xla/primitive_type.h"

namespace decomposed::internal {


// Converts little-endian elements of a varint type into varints, counting
// or emitting them. Elements may be split across chunks.
class VarintConverter {
 public:
  VarintConverter(DataEncoding enc, size_t element_bytes)
      : enc_(enc), width_(element_bytes) {}

  // Feeds a chunk; calls emit(std::string_view) with converted output
  // when `emit` is set, and always counts the output bytes.
  template <class Emit>
  absl::Status Feed(std::string_view chunk, Emit&& emit) {
    const char* p = chunk.data();
    size_t n = chunk.size();
    if (carry_len_ > 0) {
      size_t k = std::min(n, width_ - carry_len_);
      std::memcpy(carry_ + carry_len_, p, k);
      carry_len_ += k;
      p += k;
      n -= k;
      if (carry_len_ < width_) return absl::OkStatus();
      if (absl::Status s = Convert(carry_, width_, emit); !s.ok()) return s;
      carry_len_ = 0;
    }
    size_t whole = n / width_ * width_;
    if (whole) {
      if (absl::Status s = Convert(p, whole, emit); !s.ok()) return s;
    }
    std::memcpy(carry_, p + whole, n - whole);
    carry_len_ = n - whole;
    return absl::OkStatus();
  }
  template <class Emit>
  absl::Status Flush(Emit&& emit) {
    if (used_ && emit_enabled_) {
      absl::Status s = emit(std::string_view(buf_.data(), used_));
      used_ = 0;
      return s;
    }
    used_ = 0;
    return absl::OkStatus();
  }
  uint64_t out_bytes() const { return out_bytes_; }
  uint64_t elements() const { return elements_; }
  bool partial() const { return carry_len_ != 0; }
  void set_emit(bool on) {
    emit_enabled_ = on;
    if (on && buf_.empty()) buf_.resize(kBuf);
  }

 private:
  static constexpr size_t kBuf = 256 << 10;

  uint64_t Value(const char* q) const {
    switch (enc_) {
      case DataEncoding::kBool:
        return *q != 0 ? 1 : 0;
      case DataEncoding::kVarint32: {
        int32_t v;
        std::memcpy(&v, q, 4);
        return static_cast<uint64_t>(static_cast<int64_t>(v));
      }
      case DataEncoding::kVarintU32: {
        uint32_t v;
        std::memcpy(&v, q, 4);
        return v;
      }
      default: {
        uint64_t v;
        std::memcpy(&v, q, 8);
        return v;
      }
    }
  }

  template <class Emit>
  absl::Status Convert(const char* p, size_t n, Emit&& emit) {
    const size_t count = n / width_;
    elements_ += count;
    if (!emit_enabled_) {
      uint64_t total = 0;
      for (size_t i = 0; i < count; ++i) {
        total += wire::VarintSize(Value(p + i * width_));
      }
      out_bytes_ += total;
      return absl::OkStatus();
    }
    for (size_t i = 0; i < count; ++i) {
      if (kBuf - used_ < wire::kMaxVarintBytes) {
        absl::Status s = emit(std::string_view(buf_.data(), used_));
        used_ = 0;
        if (!s.ok()) return s;
      }
      char* e = wire::WriteVarint(Value(p + i * width_), buf_.data() + used_);
      size_t k = static_cast<size_t>(e - (buf_.data() + used_));
      used_ += k;
      out_bytes_ += k;
    }
    return absl::OkStatus();
  }

  DataEncoding enc_;
  size_t width_;
  char carry_[16];
  size_t carry_len_ = 0;
  bool emit_enabled_ = false;
  std::vector<char> buf_;
  size_t used_ = 0;
  uint64_t out_bytes_ = 0;
  uint64_t elements_ = 0;
};

}  // namespace decomposed::internal

#endif  // DECOMPOSED_XLA_VARINT_ENCODE_H_
