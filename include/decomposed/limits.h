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
// Largest box EncodeBox writes: 1 length byte + (2 + 4) shape + (2 + 10)
// value. Callers size encode buffers by it.
inline constexpr size_t kMaxBoxBytes = 19;

// Protobuf cannot parse a message of 2 GiB or more. Bounds every message
// that is materialised to be parsed or must stay parseable by protobuf:
// region [0] (the header), a module, a classic file written, a literal
// given to a literal pass.
inline constexpr uint64_t kMaxMessageBytes = (uint64_t{1} << 31) - 1;

// Occurrences of one message field merged when unpacking a classic
// snapshot (a repeated `hlo_module` or `result`); each costs 16 bytes.
inline constexpr size_t kMaxMergedOccurrences = size_t{1} << 16;

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

// Tuple elements a literal plan keeps (each occurrence costs 16 bytes).
inline constexpr size_t kMaxTupleLiterals = size_t{1} << 20;

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

// A <file>.npy.meta sidecar holds one dtype name; it is read whole.
inline constexpr uint64_t kMaxSidecarBytes = 1 << 20;

// Largest read requested through ByteSource::Pull. Buffered sources keep at
// least this much buffer.
inline constexpr size_t kMaxPull = 4096;

// --- Streaming input (io/spool_source.h) ------------------------------------

// Bytes of a pipe that SpoolSource keeps in memory so that a reader can go
// back (a literal is planned, then read; detection reads region [0] and the
// first element, then starts over). Past it the retained bytes go to an
// unlinked temp file under $TMPDIR (else /tmp): memory stays bounded
// whatever the element sizes, and 64 MiB keeps every literal of a typical
// capture (and region [0], bounded by kMaxMessageBytes) off the disk.
inline constexpr size_t kSpoolMemoryBytes = size_t{64} << 20;

// --- capture: input-snapshot bundles and torch.save (.pt) files ---

// meta.json is a few KiB and is read whole.
inline constexpr uint64_t kMaxMetaJsonBytes = 64 << 20;
// Tensor inputs listed in one meta.json (one NEFF call's inputs).
inline constexpr size_t kMaxInputs = 1 << 20;
// Entries of a .pt zip: torch.save writes 4-5 for one tensor.
inline constexpr uint64_t kMaxZipEntries = 1 << 16;
// The zip central directory is read whole: kMaxZipEntries entries with short
// names (torch.save's is a few hundred bytes), never the file's size.
inline constexpr uint64_t kMaxZipDirectoryBytes = 16 << 20;
// A .pt's data.pkl is read whole: torch.save's for one tensor is a few
// hundred bytes.
inline constexpr uint64_t kMaxPickleBytes = 1 << 20;
// Values an unpickled data.pkl may create (torch.save's for one tensor makes
// about 20); bounds the unpickler's memory at about 10 MiB whatever the
// pickle holds.
inline constexpr size_t kMaxPickleValues = size_t{1} << 16;
// Nesting of pickled values: torch.save's pickle of one tensor nests about
// 5 deep; the bound keeps the recursive release of a hostile chain (one
// TUPLE1 per byte) off the end of the stack.
inline constexpr int kMaxPickleDepth = 100;

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
