// NpzWriter: a NumPy .npz archive (a zip of .npy entries, as np.savez
// writes, but stored, never compressed) streamed through one ByteSink, in
// bounded memory whatever the arrays' sizes.
//
//   NpzWriter<K>      the archive: AddEntry(name, bytes) for small entries
//                     (model.hlo, a .npy.meta, manifest.json), or
//                     BeginEntry(name, size) / Append() / EndEntry() for a
//                     streamed one; Finish() writes the central directory.
//   NpzArraySink<K>   the ArraySink (xla/array_sink.h) that streams one
//                     decoded literal into an entry `<name>` as a .npy
//                     (header from NpyHeaderFor, then the payload): the
//                     literal decoder feeds it as it feeds NpyArraySink.
//
// How an entry streams: a zip's local header holds the entry's size and
// CRC-32 before its data. The size is known before the data (the .npy
// header's length plus the plan's payload bytes, ArrayHeader::byte_size);
// the CRC-32 is computed on the fly as bytes pass and written back into
// the local header by K::Rewrite() at EndEntry() (in the sink's buffer when
// the header is still there, else with pwrite). So K must be able to
// rewrite: StringSink, FdSink or AtomicFileSink. The central directory
// (written at Finish) holds one small record per entry; nothing else is
// kept. Entries are laid out by StoredZipWriter (npy/stored_zip.h): data
// 64-byte aligned, ZIP64 when a size, offset or the entry count needs it.
// Since the .npy header is padded to 64 bytes too, every array's payload
// starts at a multiple of 64 in the archive.
//
// No kernel copy: NpzArraySink::PayloadFd() is null, because every payload
// byte must pass through the CRC. (One file per literal, NpyArraySink over
// an AtomicFileSink, may use copy_file_range instead.)
//
// Errors: the sink's, prefixed with the entry name; kFailedPrecondition
// when an entry gets more or fewer bytes than it declared, or when the CRC
// cannot be rewritten. On error the archive is incomplete: write it
// through AtomicFileSink and drop it (Unpack does).
//
// Example (two arrays decoded from literal bodies, atomically):
//   decomposed::AtomicFileSink file;
//   if (auto s = file.Open("out.npz"); !s.ok()) return s;
//   decomposed::NpzWriter<decomposed::AtomicFileSink> npz(file);
//   decomposed::NpzArraySink<decomposed::AtomicFileSink> a(npz, "x.npy");
//   if (auto s = decomposed::DecodeLiteral(src, length, frame, a); !s.ok())
//     return s;
//   if (auto s = npz.Finish(); !s.ok()) return s;
//   return file.Commit();
#ifndef DECOMPOSED_NPY_NPZ_WRITER_H_
#define DECOMPOSED_NPY_NPZ_WRITER_H_

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/npy/literal_to_npy.h"
#include "decomposed/npy/npy.h"
#include "decomposed/npy/stored_zip.h"
#include "decomposed/status.h"
#include "decomposed/xla/array_sink.h"

namespace decomposed {

// A ByteSink that can overwrite bytes it already took.
template <class K>
concept RewritableSink =
    ByteSink<K> && requires(K& k, uint64_t offset, std::string_view d) {
      { k.Rewrite(offset, d) } -> std::same_as<bool>;
    };

template <RewritableSink K>
class NpzWriter {
 public:
  explicit NpzWriter(K& sink, StoredZipOptions options = {})
      : sink_(sink), zip_(sink, options) {}

  // A whole entry from memory.
  absl::Status AddEntry(std::string_view name, std::string_view data) {
    return zip_.AddEntry(name, data);
  }

  // A streamed entry of exactly `size` bytes.
  absl::Status BeginEntry(std::string_view name, uint64_t size) {
    crc_ = 0;
    name_ = std::string(name);
    return zip_.BeginEntry(name, size, 0);
  }
  bool Append(std::string_view d) {
    crc_ = Crc32(crc_, d);
    return zip_.Append(d);
  }
  // Checks the size, records the entry and writes its CRC-32 back into its
  // local header.
  absl::Status EndEntry() {
    if (absl::Status s = zip_.EndEntry(crc_); !s.ok()) return s;
    char le[4];
    for (int i = 0; i < 4; ++i) le[i] = static_cast<char>(crc_ >> (8 * i));
    if (!sink_.Rewrite(zip_.base() + zip_.crc_offset(),
                       std::string_view(le, 4))) {
      return Prefix(sink_.status().ok()
                        ? absl::FailedPreconditionError(
                              "the CRC-32 could not be written back")
                        : sink_.status(),
                    absl::StrCat("npz entry ", name_));
    }
    return absl::OkStatus();
  }
  // Where the streamed (or last) entry's data starts, from the archive's
  // first byte.
  uint64_t data_offset() const { return zip_.data_offset(); }

  // The central directory and end records: the archive is complete.
  absl::Status Finish() { return zip_.Finish(); }

  absl::Status status() const {
    return sink_.status().ok() ? absl::OkStatus() : sink_.status();
  }

 private:
  K& sink_;
  StoredZipWriter<K> zip_;
  uint32_t crc_ = 0;
  std::string name_;
};

// Streams one decoded array into entry `name` of `npz` as a .npy.
template <RewritableSink K>
class NpzArraySink final : public ArraySink {
 public:
  NpzArraySink(NpzWriter<K>& npz, std::string name)
      : npz_(npz), name_(std::move(name)) {}

  bool AcceptsColumnMajor() const override { return true; }
  absl::Status Begin(const ArrayHeader& h) override {
    header_ = NpyHeaderFor(h);
    const std::string text = FormatNpyHeader(header_);
    remaining_ = h.byte_size;
    if (absl::Status s = npz_.BeginEntry(name_, text.size() + h.byte_size);
        !s.ok()) {
      return s;
    }
    return Put(text);
  }
  absl::Status Write(std::string_view chunk) override {
    if (chunk.size() > remaining_) {
      return absl::FailedPreconditionError(
          absl::StrCat("npz entry ", name_, ": more payload than declared"));
    }
    remaining_ -= chunk.size();
    return Put(chunk);
  }
  absl::Status Finish() override {
    if (remaining_ != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "npz entry ", name_, ": ", remaining_, " payload bytes missing"));
    }
    return npz_.EndEntry();
  }

  // The .npy header written (valid after Begin).
  const NpyHeader& header() const { return header_; }

 private:
  absl::Status Put(std::string_view d) {
    if (npz_.Append(d)) return absl::OkStatus();
    absl::Status s = npz_.status();
    if (s.ok()) s = absl::DataLossError("write failed");
    return Prefix(s, absl::StrCat("writing npz entry ", name_));
  }

  NpzWriter<K>& npz_;
  std::string name_;
  NpyHeader header_;
  uint64_t remaining_ = 0;
};

}  // namespace decomposed

#endif  // DECOMPOSED_NPY_NPZ_WRITER_H_
