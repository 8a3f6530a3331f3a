// Little-endian integer loads from a byte string, for the zip and pickle
// readers (both formats store integers little-endian).
#ifndef DECOMPOSED_CAPTURE_LITTLE_ENDIAN_H_
#define DECOMPOSED_CAPTURE_LITTLE_ENDIAN_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace decomposed::capture {

// The `n`-byte (1..8) little-endian unsigned integer at b[at].
// Precondition: at + n <= b.size() (callers check it; nothing is read past).
inline uint64_t LoadLittleEndian(std::string_view b, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) {
    v |= static_cast<uint64_t>(static_cast<uint8_t>(b[at + i])) << (8 * i);
  }
  return v;
}

}  // namespace decomposed::capture

#endif  // DECOMPOSED_CAPTURE_LITTLE_ENDIAN_H_
