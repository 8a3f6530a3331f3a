// A .npy file as a literal to write (LiteralSource, xla/literal_source.h): the
// one adaptor between a .npy and the LiteralEncoder. The file is opened
// once, by the first Prepare(), and kept open: the header is read from it,
// the encoder's sizing pass (S32, S64, U32, U64 only) and every Write()
// seek back to the data and stream it (ForEachNpyDataChunk: little endian,
// big-endian descrs swapped on the fly). Fortran-order files get the
// column-major layout {0, 1, ..., rank-1}, which describes their bytes as
// they are, so no transpose is ever needed.
//
// The element type: `dtype` when given (required for void descrs |V1 |V2
// unless a sidecar names it; on other descrs it reinterprets the bytes and
// must have the descr's item size), else the `<file>.npy.meta` sidecar
// ({"ml_dtype": "bfloat16"}, ReadNpyMetaSidecar), else the descr's type.
//
// AsFileSpan(): for little-endian data of a fixed-width or bytes type the
// literal is the encoder's head followed by the file's data bytes unchanged,
// so a producer writing to a file lets the kernel copy them.
//
// Errors (prefixed with options.name and the path): the file cannot be
// opened or read; the header errors of ReadNpyArrayHeader (npy_reader.h);
// a sidecar that exists but is not valid; the encoder's errors
// (LiteralEncoder::Create / Write), e.g. a file that changed size.
//
// Example:
//   auto a = decomposed::NpyLiteral("a.npy", std::nullopt,
//                                   {.name = "input 0"});
//   absl::StatusOr<uint64_t> n = a->Prepare();   // exact size
#ifndef DECOMPOSED_NPY_NPY_LITERAL_H_
#define DECOMPOSED_NPY_NPY_LITERAL_H_

#include <memory>
#include <optional>
#include <string>

#include "decomposed/xla/literal_source.h"
#include "decomposed/xla/literal_encoder.h"
#include "decomposed/xla/primitive_type.h"

namespace decomposed {

// A literal from the .npy file at `path` (see the file comment).
std::unique_ptr<LiteralSource> NpyLiteral(std::string path,
                                          std::optional<PrimitiveType> dtype,
                                          LiteralEncodeOptions options = {});

}  // namespace decomposed

#endif  // DECOMPOSED_NPY_NPY_LITERAL_H_
