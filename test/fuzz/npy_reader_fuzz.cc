// libFuzzer target: the streaming .npy reader (ReadNpyArrayHeader +
// ForEachNpyDataChunk). Byte 0 picks options (big-endian allowed, trailing
// data rejected, a true dtype BF16 for void descrs). Read from a sized
// MemorySource and an unsized TrickleSource: when both succeed they give
// the same header and the same data bytes, and the data is exactly
// element_count x item_bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "decomposed/npy/npy_reader.h"
#include "fuzz_util.h"

using namespace decomposed;

namespace {

template <ByteSource S>
absl::Status Read(S& src, const NpyReadOptions& o, NpyArrayInfo* info,
                  std::string* data) {
  absl::StatusOr<NpyArrayInfo> i = ReadNpyArrayHeader(src, o);
  fuzz::CheckErrorShape(i.status());
  if (!i.ok()) return i.status();
  *info = *i;
  FUZZ_CHECK(i->data_bytes == i->element_count * i->item_bytes);
  absl::Status s = ForEachNpyDataChunk(src, *i, [&](std::string_view c) {
    // Never more than the header declared.
    FUZZ_CHECK(data->size() + c.size() <= i->data_bytes);
    data->append(c);
    return absl::OkStatus();
  });
  fuzz::CheckErrorShape(s);
  if (s.ok()) FUZZ_CHECK(data->size() == i->data_bytes);
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  NpyReadOptions o;
  o.allow_big_endian = data[0] & 1;
  o.reject_trailing_data = data[0] & 2;
  if (data[0] & 4) o.dtype = PrimitiveType::kBF16;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  NpyArrayInfo a, b;
  std::string da, db;
  MemorySource mem(in);
  absl::Status sa = Read(mem, o, &a, &da);
  fuzz::TrickleSource tri(in, data[0] >> 3);
  absl::Status sb = Read(tri, o, &b, &db);
  if (sa.ok() && sb.ok()) {
    FUZZ_CHECK(a.type == b.type && a.data_bytes == b.data_bytes);
    FUZZ_CHECK(a.header.shape == b.header.shape);
    FUZZ_CHECK(da == db);
  }
  // The sized source checks sizes up front; whatever it accepts, the
  // unsized one must accept too.
  if (sa.ok()) FUZZ_CHECK(sb.ok());
  return 0;
}
