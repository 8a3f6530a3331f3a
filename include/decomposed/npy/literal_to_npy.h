// A LiteralProto body on the wire to one .npy file: the literal decoder
// (xla/literal_decoder.h) into an NpyArraySink.
//
//   NpyArraySink<K>     the ArraySink that writes a .npy through a ByteSink
//                       K (an NpySink: header, then exactly the declared
//                       payload). It accepts column-major arrays, which it
//                       writes as they are with `fortran_order: True` (no
//                       transpose), and exposes K's fd for kernel copies
//                       when K is an FdSink or an AtomicFileSink.
//   NpyHeaderFor(plan)  the .npy header of a resolved plan (descr from the
//                       type, docs/format.md §12.3: BF16 -> |V2,
//                       F8/F4/S4/U4/S2/U2 -> |V1, PRED -> |b1, ...).
//   DecodeLiteralToNpy  decodes and writes header + payload to K.
//
// Errors: those of DecodeLiteral (literal_decoder.h), and the sink's. On
// error `sink` holds a partial file: write through AtomicFileSink and drop
// it (Unpack does).
//
// Example:
//   decomposed::MemorySource src(body);
//   decomposed::AtomicFileSink out;
//   if (auto s = out.Open("x.npy"); !s.ok()) return s;
//   absl::Status s = decomposed::DecodeLiteralToNpy(
//       src, body.size(), decomposed::Frame{"input", 0, "body"}, out);
//   if (!s.ok()) return s;   // `out` removes its temp file when dropped
//   return out.Commit();
#ifndef DECOMPOSED_NPY_LITERAL_TO_NPY_H_
#define DECOMPOSED_NPY_LITERAL_TO_NPY_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/status/status.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/npy/npy.h"
#include "decomposed/npy/npy_sink.h"
#include "decomposed/status.h"
#include "decomposed/xla/array_sink.h"
#include "decomposed/xla/literal_decoder.h"
#include "decomposed/xla/literal_plan.h"

namespace decomposed {

// The .npy header for an ArraySink header.
inline NpyHeader NpyHeaderFor(const ArrayHeader& h) {
  return NpyHeaderFor(*h.type, h.dims, h.order == ElementOrder::kColumnMajor);
}

// The .npy header DecodeLiteralToNpy writes for a resolved plan.
inline NpyHeader NpyHeaderFor(const LiteralPlan& plan) {
  return NpyHeaderFor(ArrayHeaderFor(plan, /*column_major_ok=*/true));
}

// Writes the decoded array as a .npy through `K` (see the file comment).
template <ByteSink K>
class NpyArraySink final : public ArraySink {
 public:
  explicit NpyArraySink(K& sink) : npy_(sink) {}

  bool AcceptsColumnMajor() const override { return true; }
  absl::Status Begin(const ArrayHeader& h) override {
    return npy_.Begin(NpyHeaderFor(h), h.byte_size);
  }
  absl::Status Write(std::string_view chunk) override {
    if (!npy_.Write(chunk)) return npy_.status();
    return absl::OkStatus();
  }
  FdSink* PayloadFd() override {
    if constexpr (std::is_same_v<K, AtomicFileSink>) {
      return npy_.sink().fd_sink();
    } else if constexpr (std::is_same_v<K, FdSink>) {
      return &npy_.sink();
    } else {
      return nullptr;
    }
  }
  absl::Status WroteToFd(uint64_t n) override {
    FdSink* fs = PayloadFd();
    if (fs == nullptr || n > npy_.remaining()) {
      return absl::FailedPreconditionError("npy payload: more than declared");
    }
    fs->Wrote(n);
    npy_.Wrote(n);
    return absl::OkStatus();
  }
  absl::Status Finish() override { return npy_.Finish(); }

  NpySink<K>& npy() { return npy_; }

 private:
  NpySink<K> npy_;
};

// Decodes the literal made of `ranges` of `src` and writes it as a .npy
// (header and payload) to `sink`. `plan_out` / `path_out`, when given,
// receive the plan and the path taken (NpyHeaderFor(*plan_out) is the
// header written). On return the source position is unspecified.
template <RewindableSource S, ByteSink K>
absl::Status DecodeLiteralToNpy(S& src, std::span<const ByteRange> ranges,
                                const Frame& frame, K& sink,
                                const LiteralDecodeOptions& options = {},
                                LiteralPlan* plan_out = nullptr,
                                LiteralPath* path_out = nullptr) {
  NpyArraySink<K> npy(sink);
  return DecodeLiteral(src, ranges, frame, npy, options, plan_out, path_out);
}

// One contiguous body [src.position(), + length).
template <RewindableSource S, ByteSink K>
absl::Status DecodeLiteralToNpy(S& src, uint64_t length, const Frame& frame,
                                K& sink,
                                const LiteralDecodeOptions& options = {},
                                LiteralPlan* plan_out = nullptr,
                                LiteralPath* path_out = nullptr) {
  NpyArraySink<K> npy(sink);
  return DecodeLiteral(src, length, frame, npy, options, plan_out, path_out);
}

}  // namespace decomposed

#endif  // DECOMPOSED_NPY_LITERAL_TO_NPY_H_
