// A minimal ZIP writer for "stored" (uncompressed) entries: the container of
// PyTorch's torch.save format (capture/bundle_writer.h) and of NumPy's .npz
// (npy/npz_writer.h, `unpack --to npz`). Streams to any ByteSink; the caller supplies
// each entry's size up front and its CRC-32 either up front or, for a
// stream, at the end, writing it back into the local header itself (no data
// descriptors, which PyTorch's writer never uses).
//
// Like PyTorch's own writer, each entry's data starts at a multiple of
// `alignment` bytes (64 by default), padded with an extra field with id
// "FB" (0x4246). ZIP64 extra fields and end records are written when a size,
// offset or entry count does not fit the classic fields, or always with
// `force_zip64` (used to test the ZIP64 path with small files).
//
// Errors: the sink's status, prefixed with the entry name; kFailedPrecondition
// when the promised size does not match what was written.
//
// Example:
//   StoredZipWriter<StringSink> zip(sink);
//   zip.AddEntry("archive/version", "3\n");
//   zip.Finish();
#ifndef DECOMPOSED_NPY_STORED_ZIP_H_
#define DECOMPOSED_NPY_STORED_ZIP_H_

#include <zlib.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/status.h"

namespace decomposed {

// CRC-32 (ZIP / zlib polynomial), incremental: Crc32(Crc32(0, a), b).
inline uint32_t Crc32(uint32_t crc, std::string_view data) {
  return static_cast<uint32_t>(
      ::crc32_z(crc, reinterpret_cast<const Bytef*>(data.data()), data.size()));
}

struct StoredZipOptions {
  uint32_t alignment = 64;
  bool force_zip64 = false;
};

template <ByteSink S>
class StoredZipWriter {
 public:
  // Feeds the entry's bytes to `emit`, which returns false to stop.
  using Producer = std::function<bool(const std::function<bool(std::string_view)>& emit)>;

  explicit StoredZipWriter(S& sink, StoredZipOptions options = {})
      : sink_(sink), options_(options), base_(sink.position()) {}

  // Adds an entry whose bytes `produce` writes; `size` and `crc` must be
  // those bytes' length and CRC-32.
  absl::Status AddEntry(std::string_view name, uint64_t size, uint32_t crc,
                        const Producer& produce) {
    if (absl::Status s = BeginEntry(name, size, crc); !s.ok()) return s;
    bool ok = produce([this](std::string_view d) { return sink_.Write(d); });
    if (!ok || !sink_.status().ok()) return SinkError(open_.name);
    return EndEntry(crc);
  }

  // The same, pushed: BeginEntry writes the local header, then the entry's
  // bytes go through Append(), then EndEntry checks that exactly `size`
  // bytes arrived. When the CRC is only known at the end (a stream), pass 0
  // to BeginEntry and the real one to EndEntry: the central directory gets
  // it, and the caller must write it (4 bytes, little endian) at
  // crc_offset() of the local header, relative to where the zip started
  // in the sink, for the archive to be valid (a file sink can pwrite it).
  absl::Status BeginEntry(std::string_view name, uint64_t size, uint32_t crc) {
    open_ = Entry{std::string(name), size, crc, Pos()};
    const Entry& e = open_;
    const bool zip64 = options_.force_zip64 || size >= kMax32;
    std::string extra;
    if (zip64) {
      Put16(&extra, 0x0001);
      Put16(&extra, 16);
      Put64(&extra, size);
      Put64(&extra, size);
    }
    // Pad so the data begins on an alignment boundary.
    uint64_t data_at = e.offset + 30 + e.name.size() + extra.size();
    if (options_.alignment > 1) {
      uint64_t a = options_.alignment;
      uint64_t pad = (a - (data_at + 4) % a) % a;
      Put16(&extra, 0x4246);  // "FB", as PyTorch's writer uses
      Put16(&extra, static_cast<uint16_t>(pad));
      extra.append(pad, 'Z');
    }
    std::string h;
    Put32(&h, 0x04034b50);
    Put16(&h, zip64 ? 45 : 20);  // version needed
    Put16(&h, 0);                // flags
    Put16(&h, 0);                // method: stored
    Put16(&h, 0);                // time
    Put16(&h, kDosDate);         // date
    Put32(&h, crc);
    Put32(&h, zip64 ? kMax32 : static_cast<uint32_t>(size));
    Put32(&h, zip64 ? kMax32 : static_cast<uint32_t>(size));
    Put16(&h, static_cast<uint16_t>(e.name.size()));
    Put16(&h, static_cast<uint16_t>(extra.size()));
    h += e.name;
    h += extra;
    if (!sink_.Write(h)) return SinkError(e.name);
    data_start_ = Pos();
    return absl::OkStatus();
  }
  bool Append(std::string_view d) { return sink_.Write(d); }
  absl::Status EndEntry(uint32_t crc) {
    if (!sink_.status().ok()) return SinkError(open_.name);
    if (Pos() - data_start_ != open_.size) {
      return absl::FailedPreconditionError(
          absl::StrCat("zip entry ", open_.name, ": promised ", open_.size,
                       " bytes, wrote ", Pos() - data_start_));
    }
    open_.crc = crc;
    entries_.push_back(open_);
    return absl::OkStatus();
  }
  // Offset of the open (or last begun) entry's CRC field in its local
  // header, relative to the zip's start.
  uint64_t crc_offset() const { return open_.offset + 14; }
  // Where the zip started in the sink (sink position at construction).
  uint64_t base() const { return base_; }
  // Where the open (or last begun) entry's data starts, relative to the
  // zip's start.
  uint64_t data_offset() const { return data_start_; }

  absl::Status AddEntry(std::string_view name, std::string_view data) {
    return AddEntry(name, data.size(), Crc32(0, data),
                    [data](const std::function<bool(std::string_view)>& emit) {
                      return emit(data);
                    });
  }

  // Writes the central directory and end records.
  absl::Status Finish() {
    const uint64_t cd_offset = Pos();
    for (const Entry& e : entries_) {
      const bool big_size = options_.force_zip64 || e.size >= kMax32;
      const bool big_off = options_.force_zip64 || e.offset >= kMax32;
      std::string extra;
      if (big_size || big_off) {
        Put16(&extra, 0x0001);
        Put16(&extra, static_cast<uint16_t>((big_size ? 16 : 0) + (big_off ? 8 : 0)));
        if (big_size) {
          Put64(&extra, e.size);
          Put64(&extra, e.size);
        }
        if (big_off) Put64(&extra, e.offset);
      }
      const bool z = big_size || big_off;
      std::string h;
      Put32(&h, 0x02014b50);
      Put16(&h, z ? 45 : 20);  // version made by (MS-DOS attributes)
      Put16(&h, z ? 45 : 20);  // version needed
      Put16(&h, 0);
      Put16(&h, 0);
      Put16(&h, 0);
      Put16(&h, kDosDate);
      Put32(&h, e.crc);
      Put32(&h, big_size ? kMax32 : static_cast<uint32_t>(e.size));
      Put32(&h, big_size ? kMax32 : static_cast<uint32_t>(e.size));
      Put16(&h, static_cast<uint16_t>(e.name.size()));
      Put16(&h, static_cast<uint16_t>(extra.size()));
      Put16(&h, 0);  // comment
      Put16(&h, 0);  // disk
      Put16(&h, 0);  // internal attributes
      Put32(&h, 0);  // external attributes
      Put32(&h, big_off ? kMax32 : static_cast<uint32_t>(e.offset));
      h += e.name;
      h += extra;
      if (!sink_.Write(h)) return SinkError("central directory");
    }
    const uint64_t cd_size = Pos() - cd_offset;
    const uint64_t n = entries_.size();
    const bool z = options_.force_zip64 || n >= 0xffff ||
                   cd_offset >= kMax32 || cd_size >= kMax32;
    std::string t;
    if (z) {
      const uint64_t eocd64 = Pos();
      Put32(&t, 0x06064b50);
      Put64(&t, 44);
      Put16(&t, 45);
      Put16(&t, 45);
      Put32(&t, 0);
      Put32(&t, 0);
      Put64(&t, n);
      Put64(&t, n);
      Put64(&t, cd_size);
      Put64(&t, cd_offset);
      Put32(&t, 0x07064b50);
      Put32(&t, 0);
      Put64(&t, eocd64);
      Put32(&t, 1);
    }
    Put32(&t, 0x06054b50);
    Put16(&t, 0);
    Put16(&t, 0);
    Put16(&t, z ? 0xffff : static_cast<uint16_t>(n));
    Put16(&t, z ? 0xffff : static_cast<uint16_t>(n));
    Put32(&t, z ? kMax32 : static_cast<uint32_t>(cd_size));
    Put32(&t, z ? kMax32 : static_cast<uint32_t>(cd_offset));
    Put16(&t, 0);
    if (!sink_.Write(t)) return SinkError("end of central directory");
    return absl::OkStatus();
  }

 private:
  static constexpr uint32_t kMax32 = 0xffffffffu;
  // 1980-01-01, the DOS epoch: a fixed date keeps output reproducible.
  static constexpr uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;

  struct Entry {
    std::string name;
    uint64_t size;
    uint32_t crc;
    uint64_t offset;
  };
  uint64_t Pos() const { return sink_.position() - base_; }
  absl::Status SinkError(std::string_view what) {
    absl::Status s = sink_.status();
    if (s.ok()) s = absl::DataLossError("write failed");
    return Prefix(s, absl::StrCat("writing zip entry ", Sv(what)));
  }
  static void Put16(std::string* s, uint16_t v) {
    s->push_back(static_cast<char>(v & 0xff));
    s->push_back(static_cast<char>(v >> 8));
  }
  static void Put32(std::string* s, uint32_t v) {
    for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  static void Put64(std::string* s, uint64_t v) {
    for (int i = 0; i < 8; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }

  S& sink_;
  Entry open_;
  uint64_t data_start_ = 0;
  StoredZipOptions options_;
  uint64_t base_;
  std::vector<Entry> entries_;
};

}  // namespace decomposed

#endif  // DECOMPOSED_NPY_STORED_ZIP_H_
