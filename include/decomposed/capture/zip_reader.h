// The reading side of the stored zip, torch.save's container (the writer is
// npy/stored_zip.h): the central directory, ZIP64 included, and where a stored
// entry's bytes sit. Nothing is decompressed: torch.save stores every entry.
//
// ReadZipDirectory finds the end-of-central-directory record in the file's
// last 64 KiB + 22 bytes, follows the ZIP64 locator when a classic field is
// saturated (0xffff / 0xffffffff), checks the directory's offset and size
// against the file, and only then reads it whole: at most
// limits::kMaxZipEntries entries in at most limits::kMaxZipDirectoryBytes.
// Sizes and offsets come from the ZIP64 extra field where the classic field
// is saturated. A stored entry must have equal compressed and uncompressed
// sizes. Entries are keyed by name; a later duplicate replaces an earlier.
// The returned sizes and offsets are as declared: ZipEntryDataOffset checks
// them against the file.
//
// Errors: kInvalidArgument (no end record, a bad ZIP64 locator or record, a
// malformed or truncated directory entry, a directory past the end of the
// file, a stored entry whose sizes differ), kResourceExhausted (the limits),
// and RegularFile::ReadAt's errors. Messages name the file and, for an
// entry, its index and byte offset.
//
// Example:
//   absl::StatusOr<RegularFile> f = RegularFile::Open("tensor0.pt");
//   absl::StatusOr<ZipDirectory> dir = ReadZipDirectory(*f);
//   const ZipEntry& e = dir->at("tensor0/data.pkl");
//   absl::StatusOr<uint64_t> at = ZipEntryDataOffset(*f, "tensor0/data.pkl", e);
#ifndef DECOMPOSED_CAPTURE_ZIP_READER_H_
#define DECOMPOSED_CAPTURE_ZIP_READER_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "decomposed/capture/regular_file.h"

namespace decomposed::capture {

struct ZipEntry {
  uint64_t size = 0;          // uncompressed size
  uint16_t method = 0;        // 0: stored
  uint64_t local_offset = 0;  // of the entry's local header
};

using ZipDirectory = std::map<std::string, ZipEntry>;

absl::StatusOr<ZipDirectory> ReadZipDirectory(const RegularFile& f);

// The file offset of entry `name`'s data (past its local header), after
// checking that the entry is stored, that a local header is where the
// directory says, and that the entry's `size` bytes lie within the file.
// Errors: kUnimplemented (a compressed entry), kInvalidArgument (no local
// header), kOutOfRange (data past the end of the file), ReadAt's errors.
absl::StatusOr<uint64_t> ZipEntryDataOffset(const RegularFile& f,
                                            const std::string& name,
                                            const ZipEntry& e);

}  // namespace decomposed::capture

#endif  // DECOMPOSED_CAPTURE_ZIP_READER_H_
