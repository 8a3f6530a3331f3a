#include "decomposed/capture/zip_reader.h"

#include <algorithm>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "decomposed/capture/little_endian.h"
#include "decomposed/limits.h"
#include "decomposed/status.h"

namespace decomposed::capture {

namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr size_t kEndOfDirectoryBytes = 22;
constexpr size_t kDirectoryEntryBytes = 46;
constexpr size_t kLocalHeaderBytes = 30;

absl::Status Bad(const RegularFile& f, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(f.path(), ": ", Sv(what)));
}

uint64_t Le(std::string_view b, size_t at, int n) {
  return LoadLittleEndian(b, at, n);
}

}  // namespace

absl::StatusOr<ZipDirectory> ReadZipDirectory(const RegularFile& f) {
  if (f.size() < kEndOfDirectoryBytes) {
    return Bad(f, "too small to be a zip file");
  }
  // The end record is last, followed by a comment of at most 65535 bytes.
  uint64_t tail = std::min<uint64_t>(f.size(), kEndOfDirectoryBytes + 65535);
  std::string t;
  if (auto s = f.ReadAt(f.size() - tail, tail, &t); !s.ok()) return s;
  size_t eocd = std::string::npos;
  for (size_t i = t.size() - kEndOfDirectoryBytes + 1; i-- > 0;) {
    if (Le(t, i, 4) == kEndOfDirectory) {
      eocd = i;
      break;
    }
  }
  if (eocd == std::string::npos) {
    return Bad(f, "no zip end-of-central-directory record");
  }
  uint64_t entries = Le(t, eocd + 10, 2);
  uint64_t cd_size = Le(t, eocd + 12, 4);
  uint64_t cd_offset = Le(t, eocd + 16, 4);
  const uint64_t eocd_pos = f.size() - tail + eocd;
  if (entries == 0xffff || cd_size == 0xffffffff || cd_offset == 0xffffffff) {
    // ZIP64: the locator sits just before the classic record.
    if (eocd_pos < 20) return Bad(f, "ZIP64 locator missing");
    std::string loc;
    if (auto s = f.ReadAt(eocd_pos - 20, 20, &loc); !s.ok()) return s;
    if (Le(loc, 0, 4) != kZip64Locator) return Bad(f, "ZIP64 locator missing");
    uint64_t rec_at = Le(loc, 8, 8);
    std::string rec;
    if (auto s = f.ReadAt(rec_at, 56, &rec); !s.ok()) return s;
    if (Le(rec, 0, 4) != kZip64EndOfDirectory) {
      return Bad(f, "bad ZIP64 end record");
    }
    entries = Le(rec, 32, 8);
    cd_size = Le(rec, 40, 8);
    cd_offset = Le(rec, 48, 8);
  }
  if (entries > limits::kMaxZipEntries) {
    return absl::ResourceExhaustedError(
        absl::StrCat(f.path(), ": ", entries, " zip entries (limit ",
                     limits::kMaxZipEntries, ")"));
  }
  if (cd_offset > f.size() || cd_size > f.size() - cd_offset) {
    return Bad(f, absl::StrCat("central directory at ", cd_offset, " size ",
                               cd_size, " is past the end of the file"));
  }
  if (cd_size > limits::kMaxZipDirectoryBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        f.path(), ": a zip central directory of ", cd_size, " bytes (limit ",
        limits::kMaxZipDirectoryBytes, ")"));
  }
  std::string cd;
  if (auto s = f.ReadAt(cd_offset, cd_size, &cd); !s.ok()) return s;
  ZipDirectory out;
  size_t at = 0;
  for (uint64_t i = 0; i < entries; ++i) {
    if (at + kDirectoryEntryBytes > cd.size() ||
        Le(cd, at, 4) != kDirectoryEntry) {
      return Bad(f, absl::StrCat("central directory entry ", i,
                                 " malformed (at byte ", cd_offset + at, ")"));
    }
    ZipEntry e;
    e.method = static_cast<uint16_t>(Le(cd, at + 10, 2));
    uint64_t csize = Le(cd, at + 20, 4);
    uint64_t usize = Le(cd, at + 24, 4);
    size_t nlen = Le(cd, at + 28, 2), xlen = Le(cd, at + 30, 2),
           clen = Le(cd, at + 32, 2);
    e.local_offset = Le(cd, at + 42, 4);
    if (at + kDirectoryEntryBytes + nlen + xlen + clen > cd.size()) {
      return Bad(f, absl::StrCat("central directory entry ", i, " truncated"));
    }
    std::string name = cd.substr(at + kDirectoryEntryBytes, nlen);
    // ZIP64 extra: the fields that are 0xffffffff, in order.
    std::string_view x =
        std::string_view(cd).substr(at + kDirectoryEntryBytes + nlen, xlen);
    for (size_t k = 0; k + 4 <= x.size();) {
      uint16_t id = static_cast<uint16_t>(Le(x, k, 2));
      uint16_t len = static_cast<uint16_t>(Le(x, k + 2, 2));
      if (k + 4 + len > x.size()) break;
      if (id == 0x0001) {
        size_t q = k + 4;
        auto take = [&](uint64_t* v) {
          if (*v == 0xffffffff && q + 8 <= k + 4 + len) {
            *v = Le(x, q, 8);
            q += 8;
          }
        };
        take(&usize);
        take(&csize);
        take(&e.local_offset);
      }
      k += 4 + len;
    }
    e.size = usize;
    if (e.method == 0 && csize != usize) {
      return Bad(f, absl::StrCat("zip entry ", name, ": stored but sizes differ"));
    }
    out[name] = e;
    at += kDirectoryEntryBytes + nlen + xlen + clen;
  }
  return out;
}

absl::StatusOr<uint64_t> ZipEntryDataOffset(const RegularFile& f,
                                            const std::string& name,
                                            const ZipEntry& e) {
  if (e.method != 0) {
    return absl::UnimplementedError(absl::StrCat(
        f.path(), ": zip entry ", name, " is compressed (method ", e.method,
        "); torch.save stores entries uncompressed"));
  }
  std::string h;
  if (auto s = f.ReadAt(e.local_offset, kLocalHeaderBytes, &h); !s.ok()) {
    return s;
  }
  if (Le(h, 0, 4) != kLocalHeader) {
    return Bad(f, absl::StrCat("zip entry ", name, ": no local header at byte ",
                               e.local_offset));
  }
  uint64_t data =
      e.local_offset + kLocalHeaderBytes + Le(h, 26, 2) + Le(h, 28, 2);
  if (data > f.size() || e.size > f.size() - data) {
    return absl::OutOfRangeError(absl::StrCat(
        f.path(), ": zip entry ", name, " declares ", e.size,
        " bytes at byte ", data, " but the file has ", f.size()));
  }
  return data;
}

}  // namespace decomposed::capture
