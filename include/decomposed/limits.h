// Every limit this library enforces, in one place, each with its reason.
// Limits protect memory and time on hostile input; none restricts a valid
// file that XLA or Neuron could have written.
#ifndef DECOMPOSED_LIMITS_H_
#define DECOMPOSED_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace decomposed::limits {

// A box payload is read through a signed char by snapshot-unpack: 127 is
// the largest length it can read.
inline constexpr size_t kMaxBoxPayload = 127;
// The lenient (unsigned, AWS Python reader) mode accepts up to 255.
inline constexpr size_t kMaxLenientBoxPayload = 255;

// The region [0] HloSnapshot is one protobuf message and is materialised to
// be parsed; protobuf cannot parse a message of 2 GiB or more.
inline constexpr uint64_t kMaxSnapshotBytes = (uint64_t{1} << 31) - 1;

// XLA's maximum rank is far lower in practice (kernels support <= 8); 64
// leaves room while bounding per-literal index arrays.
inline constexpr size_t kMaxRank = 64;

// Element counts are products of dimensions; we require the product and the
// byte size (count * 16 for C128) to fit in int64 with no overflow.
inline constexpr uint64_t kMaxElementCount = (uint64_t{1} << 59);

// Tuples nest; recursion over tuple_shapes / tuple_literals is bounded to
// keep stack use bounded on hostile input (protobuf's own recursion limit is
// 100). A layout's physical_shape counts two levels (layout, then shape), so
// any shape within this limit is within protobuf's too.
inline constexpr int kMaxTupleDepth = 64;

// A literal body's shape message is materialised to be validated; real
// shapes are a few hundred bytes.
inline constexpr uint64_t kMaxShapeBytes = 1 << 20;

// Shapes nested in one ShapeProto (tuple elements at every level). A
// hostile shape of empty tuple_shapes records would otherwise cost ~160
// bytes of memory per 2 bytes of input; real tuples hold at most thousands.
inline constexpr size_t kMaxShapeNodes = size_t{1} << 16;

// .npy header text: NumPy itself refuses headers over 10000 bytes unless
// told otherwise (max_header_size, NumPy >= 1.24); we allow more for very
// high ranks but bound the allocation.
inline constexpr uint32_t kMaxNpyHeaderBytes = 1 << 20;

// Largest read requested through ByteSource::Pull. Buffered sources keep at
// least this much buffer.
inline constexpr size_t kMaxPull = 4096;

// --- The protobuf wire (wire/format.h) ---------------------------------------
// These are protobuf's own parse limits, kept so that our decoders refuse
// exactly the bytes protobuf (and so XLA and Neuron) refuses.
// A field tag is a 32-bit varint: protobuf refuses one of more than 5
// bytes, even a zero-padded one.
inline constexpr size_t kMaxTagBytes = 5;
// The size of a length-delimited field is a 32-bit varint too: at most 5
// bytes, even zero-padded.
inline constexpr size_t kMaxLenSizeBytes = 5;
// ...whose value protobuf caps at INT_MAX - 16 (it keeps 16 bytes of slop
// below INT_MAX for its limit arithmetic). Literal bodies may exceed it
// only through wire::FieldReaderOptions::large_len_fields.
inline constexpr uint64_t kMaxLenSize = 0x7fffffff - 16;

}  // namespace decomposed::limits

#endif  // DECOMPOSED_LIMITS_H_
