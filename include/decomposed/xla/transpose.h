// The transposing store: a literal whose layout is not the order its sink
// takes (any permutation other than row-major, and column-major for sinks
// that do not accept it) is collected in physical order, then gathered in
// logical row-major order.
//
//   PhysicalStore  collects the physical-order payload: in memory up to a
//                  threshold, beyond it in an unlinked temp file that is
//                  mapped when complete (file-backed, reclaimable pages, so
//                  anonymous memory stays bounded). Memory grows with the
//                  data that arrives, never with the declared size alone.
//   Gather()       walks a physical-order payload (a zero-copy view of the
//                  source, or a PhysicalStore's view) in logical row-major
//                  order, writing whole elements through a reused buffer.
//   GatherTiled()  the same walk over a payload read by position (pread on
//                  the source file, or on a PhysicalStore's temp file), in
//                  tiles of at most `budget` bytes: memory, RSS included,
//                  stays bounded whatever the payload size, where Gather
//                  over a mapping would make every page resident.
//
// Errors: OS errors creating, writing or mapping the temp file; more bytes
// than declared (kFailedPrecondition); the output's own errors.
//
// Example (F32[2,3]{0,1}: column-major physical data to row-major):
//   decomposed::internal::PhysicalStore store;
//   if (auto s = store.Init(24, 32 << 20, ""); !s.ok()) return s;
//   store.Put(physical_bytes);                 // 24 bytes, column-major
//   absl::StatusOr<std::string_view> v = store.View();
//   char buf[256];
//   absl::Status s = decomposed::internal::Gather(*v, shape, 4, out, buf,
//                                                 sizeof(buf));
#ifndef DECOMPOSED_XLA_TRANSPOSE_H_
#define DECOMPOSED_XLA_TRANSPOSE_H_

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>
#include <algorithm>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/bounded.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/fd.h"
#include "decomposed/status.h"
#include "decomposed/xla/shape.h"

namespace decomposed::internal {

inline absl::Status Errno(std::string_view what) {
  return ErrnoError(errno, std::string(what));
}

// pread(2) of exactly `n` bytes at file offset `offset`, retrying short
// reads and EINTR. kOutOfRange when the file ends first.
inline absl::Status PreadFully(int fd, uint64_t offset, char* dst, size_t n,
                               std::string_view what) {
  while (n > 0) {
    ssize_t got = ::pread(fd, dst, n, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      return Errno(absl::StrCat("reading ", Sv(what), " at byte ", offset));
    }
    if (got == 0) {
      return absl::OutOfRangeError(absl::StrCat(
          Sv(what), ": expected ", n, " more bytes at byte ", offset,
          ", found the end of the file"));
    }
    dst += got;
    offset += static_cast<uint64_t>(got);
    n -= static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

// Collects physical-order payload for a transpose: in memory, or in an
// unlinked temp file that is mapped when complete.
class PhysicalStore {
 public:
  PhysicalStore() = default;
  PhysicalStore(const PhysicalStore&) = delete;
  PhysicalStore& operator=(const PhysicalStore&) = delete;
  ~PhysicalStore() {
    if (map_) ::munmap(map_, size_);
  }

  // Prepares for `bytes` bytes: kept in memory when bytes <= max_in_memory,
  // else in a temp file in `temp_dir` (empty: $TMPDIR, else /tmp).
  absl::Status Init(uint64_t bytes, uint64_t max_in_memory,
                    const std::string& temp_dir) {
    size_ = bytes;
    if (bytes <= max_in_memory) {
      // No reserve: memory grows with the data that arrives, never with
      // the declared size alone (varint counts are only checked at the end).
      return absl::OkStatus();
    }
    std::string dir = temp_dir;
    if (dir.empty()) {
      const char* t = std::getenv("TMPDIR");
      dir = t && *t ? t : "/tmp";
    }
    int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
      std::string tmpl = dir + "/.decomposed-transpose.XXXXXX";
      fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
      if (fd < 0) {
        return Errno(absl::StrCat("creating a transpose temp file in ", dir));
      }
      ::unlink(tmpl.c_str());
    }
    file_ = std::make_unique<FdSink>(OwnedFd(fd));
    return absl::OkStatus();
  }

  uint64_t remaining() const { return size_ - written_; }

  absl::Status Put(std::string_view d) {
    if (d.size() > size_ - written_) {
      return absl::FailedPreconditionError("transpose: more than declared");
    }
    written_ += d.size();
    if (file_) {
      if (!file_->Write(d)) return file_->status();
    } else {
      mem_.append(d);
    }
    return absl::OkStatus();
  }

  template <ByteSource S>
  absl::Status Raw(S& src, uint64_t n, const Frame& frame) {
    return ForEachChunk(src, n, frame,
                        [&](std::string_view c) { return Put(c); });
  }

  // True when the data went to a temp file (ReadAt then reads it back).
  bool in_file() const { return file_ != nullptr; }

  // Copies `n` bytes at payload offset `offset` of the complete data to
  // `dst` (pread on the temp file; a copy from memory otherwise).
  absl::Status ReadAt(uint64_t offset, char* dst, size_t n) {
    if (offset > written_ || n > written_ - offset) {
      return absl::OutOfRangeError("transpose: read past the stored data");
    }
    if (!file_) {
      std::memcpy(dst, mem_.data() + offset, n);
      return absl::OkStatus();
    }
    if (!flushed_) {
      if (!file_->Flush()) return file_->status();
      flushed_ = true;
    }
    return PreadFully(file_->fd(), offset, dst, n, "the transpose temp file");
  }

  // The complete physical data.
  absl::StatusOr<std::string_view> View() {
    if (!file_) return std::string_view(mem_);
    if (!file_->Flush()) return file_->status();
    if (size_ == 0) return std::string_view();
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, file_->fd(), 0);
    if (p == MAP_FAILED) return Errno("mapping the transpose temp file");
    map_ = p;
    return std::string_view(static_cast<const char*>(p), size_);
  }

 private:
  uint64_t size_ = 0;
  uint64_t written_ = 0;
  std::string mem_;
  std::unique_ptr<FdSink> file_;
  bool flushed_ = false;
  void* map_ = nullptr;
};

// Writes `phys` (elements of `eb` bytes in `shape`'s physical order) to
// `out` in logical C order, through `buf`.
template <class Out>
absl::Status Gather(std::string_view phys, const Shape& shape, size_t eb,
                    Out& out, char* buf, size_t cap) {
  const size_t r = shape.dimensions.size();
  const std::vector<int64_t>& dims = shape.dimensions;
  std::vector<uint64_t> stride(r, 0);
  uint64_t acc = 1;
  for (int64_t d : shape.layout.minor_to_major) {
    stride[static_cast<size_t>(d)] = acc;
    acc *= static_cast<uint64_t>(dims[static_cast<size_t>(d)]);
  }
  uint64_t total = acc;
  if (total == 0 || r == 0) return out.Put(phys);
  const uint64_t inner = static_cast<uint64_t>(dims[r - 1]);
  const uint64_t s_in = stride[r - 1] * eb;
  std::vector<uint64_t> idx(r, 0);
  uint64_t base = 0;  // byte offset of idx with idx[r-1] = 0
  size_t ob = 0;
  const size_t cap_e = cap / eb * eb;
  const char* p = phys.data();
  for (uint64_t row = 0; row < total / inner; ++row) {
    const char* q = p + base;
    for (uint64_t j = 0; j < inner; ++j, q += s_in) {
      if (ob + eb > cap_e) {
        if (absl::Status s = out.Put(std::string_view(buf, ob)); !s.ok()) {
          return s;
        }
        ob = 0;
      }
      switch (eb) {
        case 1: buf[ob] = *q; break;
        case 2: std::memcpy(buf + ob, q, 2); break;
        case 4: std::memcpy(buf + ob, q, 4); break;
        case 8: std::memcpy(buf + ob, q, 8); break;
        default: std::memcpy(buf + ob, q, eb);
      }
      ob += eb;
    }
    for (size_t d = r - 1; d-- > 0;) {
      base += stride[d] * eb;
      if (++idx[d] < static_cast<uint64_t>(dims[d])) break;
      base -= stride[d] * eb * static_cast<uint64_t>(dims[d]);
      idx[d] = 0;
    }
  }
  if (ob) return out.Put(std::string_view(buf, ob));
  return absl::OkStatus();
}

// --- GatherTiled ---------------------------------------------------------
//
// The walk. Dims of size 1 are dropped and dims adjacent both logically and
// physically are merged. When the logically innermost dim is physically
// contiguous its rows become the unit (one read each, never split per
// element). What remains has a physically innermost dim m (stride one unit)
// that is not the logically innermost one. The output is produced as tiles:
// for each index of the dims before m, T consecutive values of dim m times
// every index of the Q units of the dims after m, which is a contiguous
// range of the output. A tile is read as Q runs of T units each (runs close
// together in the file are read with one pread and split: RunReader), then
// written out row by row through a small, cache-sized buffer. T is the
// largest count whose tile fits in `budget` bytes; when not even one value
// of m fits (Q units > budget), the units of that value are read one by one
// (still coalesced) and written out as they come.
//
// Reads: with N payload bytes, about N * Q * unit / budget preads of
// T units each, plus whatever coalescing saves; every payload byte is read
// once, except in the last case, where a coalesced read may also fetch
// neighbours that a later pass reads again.

// Queued positional reads, merged when close in the source.
template <class ReadAt>
class RunReader {
 public:
  // Runs within this many bytes of each other are read with one call.
  static constexpr uint64_t kGap = 4 << 10;
  static constexpr size_t kMaxPieces = 4096;

  RunReader(ReadAt& read, char* window, size_t cap)
      : read_(read), window_(window), cap_(cap) {}

  // Reads `n` bytes at `offset` to `dst`, now or at the next Flush().
  absl::Status Add(uint64_t offset, char* dst, size_t n) {
    if (!pieces_.empty() && offset >= end_ && offset - end_ <= kGap &&
        offset + n - start_ <= cap_ && pieces_.size() < kMaxPieces) {
      pieces_.push_back({offset, dst, n});
      end_ = offset + n;
      return absl::OkStatus();
    }
    if (absl::Status s = Flush(); !s.ok()) return s;
    if (n > cap_ / 2) return read_(offset, dst, n);
    pieces_.push_back({offset, dst, n});
    start_ = offset;
    end_ = offset + n;
    return absl::OkStatus();
  }

  absl::Status Flush() {
    if (pieces_.empty()) return absl::OkStatus();
    absl::Status s;
    if (pieces_.size() == 1) {
      s = read_(pieces_[0].offset, pieces_[0].dst, pieces_[0].n);
    } else {
      s = read_(start_, window_, static_cast<size_t>(end_ - start_));
      if (s.ok()) {
        for (const Piece& p : pieces_) {
          std::memcpy(p.dst, window_ + (p.offset - start_), p.n);
        }
      }
    }
    pieces_.clear();
    return s;
  }

 private:
  struct Piece {
    uint64_t offset;
    char* dst;
    size_t n;
  };
  ReadAt& read_;
  char* window_;
  size_t cap_;
  std::vector<Piece> pieces_;
  uint64_t start_ = 0, end_ = 0;
};

inline void CopyUnit(char* dst, const char* src, size_t unit) {
  switch (unit) {
    case 1: *dst = *src; return;
    case 2: std::memcpy(dst, src, 2); return;
    case 4: std::memcpy(dst, src, 4); return;
    case 8: std::memcpy(dst, src, 8); return;
    case 16: std::memcpy(dst, src, 16); return;
    default: std::memcpy(dst, src, unit);
  }
}

// Copies `n` units of `unit` bytes from `src` (units `step` bytes apart) to
// consecutive units at `dst`; the common widths get their own loops.
inline void CopyStrided(char* dst, const char* src, uint64_t step, uint64_t n,
                        size_t unit) {
  auto loop = [&](auto width) {
    constexpr size_t w = decltype(width)::value;
    for (uint64_t q = 0; q < n; ++q, src += step, dst += w) std::memcpy(dst, src, w);
  };
  switch (unit) {
    case 1: return loop(std::integral_constant<size_t, 1>());
    case 2: return loop(std::integral_constant<size_t, 2>());
    case 4: return loop(std::integral_constant<size_t, 4>());
    case 8: return loop(std::integral_constant<size_t, 8>());
    case 16: return loop(std::integral_constant<size_t, 16>());
    default:
      for (uint64_t q = 0; q < n; ++q, src += step, dst += unit) std::memcpy(dst, src, unit);
  }
}

// Writes the payload that `read(offset, dst, n) -> absl::Status` gives (n
// bytes at payload offset `offset`; elements of `eb` bytes in `shape`'s
// physical order) to `out` (Put(std::string_view) -> absl::Status) in
// logical row-major order, in pieces of whole elements, using at most about
// `budget` bytes. `eb` is at most 64. Errors: those of `read` and `out`.
template <class ReadAt, class Out>
absl::Status GatherTiled(ReadAt&& read, const Shape& shape, size_t eb, Out& out,
                         uint64_t budget) {
  const size_t r = shape.dimensions.size();
  std::vector<uint64_t> stride(r, 0);
  uint64_t total = 1;
  for (int64_t d : shape.layout.minor_to_major) {
    stride[static_cast<size_t>(d)] = total;
    total *= static_cast<uint64_t>(shape.dimensions[static_cast<size_t>(d)]);
  }
  if (total == 0) return absl::OkStatus();
  // Canonical dims: no 1s, logically-and-physically adjacent dims merged.
  std::vector<uint64_t> dim, str;
  for (size_t k = 0; k < r; ++k) {
    const uint64_t n = static_cast<uint64_t>(shape.dimensions[k]);
    if (n == 1) continue;
    if (!dim.empty() && str.back() == stride[k] * n) {
      dim.back() *= n;
      str.back() = stride[k];
    } else {
      dim.push_back(n);
      str.push_back(stride[k]);
    }
  }
  uint64_t unit = eb;
  if (!dim.empty() && str.back() == 1) {  // contiguous rows: the unit
    const uint64_t f = dim.back();
    unit *= f;
    dim.pop_back();
    str.pop_back();
    for (uint64_t& s : str) s /= f;
  }
  // An eighth each for coalesced reads and for rows on their way out (up to
  // 256 KiB and 1 MiB), the rest for the tile.
  const size_t kWindow =
      static_cast<size_t>(std::clamp<uint64_t>(budget / 8, 64, 256 << 10));
  // Whole elements only, so that every Put holds whole elements.
  const size_t kOutBuf =
      static_cast<size_t>(std::clamp<uint64_t>(budget / 8, 64, 1 << 20)) / eb * eb;
  const uint64_t tile_budget =
      budget > kWindow + kOutBuf ? budget - kWindow - kOutBuf : 0;
  std::unique_ptr<char[]> window(new char[kWindow]);
  RunReader<std::remove_reference_t<ReadAt>> reader(read, window.get(), kWindow);

  // Units bigger than the output buffer go out in pieces.
  auto copy_through = [&](uint64_t offset, uint64_t n, char* buf,
                          size_t cap) -> absl::Status {
    while (n > 0) {
      const size_t k = static_cast<size_t>(std::min<uint64_t>(n, cap));
      if (absl::Status s = read(offset, buf, k); !s.ok()) return s;
      if (absl::Status s = out.Put(std::string_view(buf, k)); !s.ok()) return s;
      offset += k;
      n -= k;
    }
    return absl::OkStatus();
  };
  if (dim.empty()) {  // row-major after all: one run
    std::unique_ptr<char[]> buf(new char[kOutBuf]);
    return copy_through(0, unit, buf.get(), kOutBuf);
  }
  const size_t rank = dim.size();
  size_t m = 0;
  for (size_t k = 0; k < rank; ++k) {
    if (str[k] == 1) m = k;
  }
  uint64_t q_count = 1;
  for (size_t k = m + 1; k < rank; ++k) q_count *= dim[k];
  // Iterates the indices of dims [from, rank) other than m in row-major
  // order, calling fn(unit offset) for each.
  auto for_each_inner = [&](uint64_t base, auto&& fn) -> absl::Status {
    std::vector<uint64_t> idx(rank, 0);
    uint64_t off = base;
    for (uint64_t q = 0; q < q_count; ++q) {
      if (absl::Status s = fn(q, off); !s.ok()) return s;
      for (size_t d = rank; d-- > m + 1;) {
        off += str[d];
        if (++idx[d] < dim[d]) break;
        off -= str[d] * dim[d];
        idx[d] = 0;
      }
    }
    return absl::OkStatus();
  };
  std::unique_ptr<char[]> obuf(new char[kOutBuf]);
  const bool fits = unit <= tile_budget && q_count <= tile_budget / unit;
  const uint64_t t_max =
      fits ? std::min<uint64_t>(dim[m], tile_budget / (q_count * unit)) : 1;
  std::unique_ptr<char[]> tile;
  if (fits) tile.reset(new char[t_max * q_count * unit]);
  // Outer dims [0, m).
  uint64_t outer_count = 1;
  for (size_t k = 0; k < m; ++k) outer_count *= dim[k];
  std::vector<uint64_t> oidx(m, 0);
  uint64_t obase = 0;
  for (uint64_t o = 0; o < outer_count; ++o) {
    for (uint64_t a = 0; a < dim[m]; a += t_max) {
      const uint64_t t = std::min(t_max, dim[m] - a);
      if (fits) {
        // Run q: t units at (obase + a + inner offset), to tile[q * t].
        char* tp = tile.get();
        absl::Status s = for_each_inner(obase + a, [&](uint64_t q, uint64_t off) {
          return reader.Add(off * unit, tp + q * t * unit,
                            static_cast<size_t>(t * unit));
        });
        if (s.ok()) s = reader.Flush();
        if (!s.ok()) return s;
        // Rows a..a+t-1, in blocks of `ib` rows through obuf.
        const uint64_t row = q_count * unit;
        if (row > kOutBuf) {  // one row does not fit: unit by unit
          size_t ob = 0;
          for (uint64_t i = 0; i < t; ++i) {
            for (uint64_t q = 0; q < q_count; ++q) {
              const char* src = tp + (q * t + i) * unit;
              if (unit > kOutBuf) {
                if (ob) {
                  if (absl::Status e = out.Put(std::string_view(obuf.get(), ob)); !e.ok()) return e;
                  ob = 0;
                }
                if (absl::Status e = out.Put(std::string_view(src, unit)); !e.ok()) return e;
                continue;
              }
              if (ob + unit > kOutBuf) {
                if (absl::Status e = out.Put(std::string_view(obuf.get(), ob)); !e.ok()) return e;
                ob = 0;
              }
              CopyUnit(obuf.get() + ob, src, unit);
              ob += unit;
            }
          }
          if (ob) {
            if (absl::Status e = out.Put(std::string_view(obuf.get(), ob)); !e.ok()) return e;
          }
        } else {
          // Blocked: for a block of kQBlock runs, rows i0.. of each are
          // read (one cache line of each run serves several rows) and
          // written as contiguous pieces of the output rows. (Walking one
          // run down all rows would write lines a row apart, which for
          // power-of-two rows all map to the same cache sets.)
          constexpr uint64_t kQBlock = 64;
          const uint64_t ib = std::max<uint64_t>(1, kOutBuf / row);
          const uint64_t src_step = t * unit;
          for (uint64_t i0 = 0; i0 < t; i0 += ib) {
            const uint64_t n = std::min(ib, t - i0);
            for (uint64_t qb = 0; qb < q_count; qb += kQBlock) {
              const uint64_t qe = std::min(q_count, qb + kQBlock);
              for (uint64_t i = 0; i < n; ++i) {
                const char* src = tp + (qb * t + i0 + i) * unit;
                char* dst = obuf.get() + i * row + qb * unit;
                CopyStrided(dst, src, src_step, qe - qb, unit);
              }
            }
            if (absl::Status e = out.Put(std::string_view(obuf.get(), n * row)); !e.ok()) return e;
          }
        }
      } else {
        // One value of m: its Q units in order, read (coalesced) into obuf.
        size_t ob = 0;
        auto drain = [&]() -> absl::Status {
          if (absl::Status s = reader.Flush(); !s.ok()) return s;
          if (ob == 0) return absl::OkStatus();
          absl::Status s = out.Put(std::string_view(obuf.get(), ob));
          ob = 0;
          return s;
        };
        absl::Status s = for_each_inner(obase + a, [&](uint64_t, uint64_t off) -> absl::Status {
          if (unit > kOutBuf) {
            if (absl::Status e = drain(); !e.ok()) return e;
            return copy_through(off * unit, unit, obuf.get(), kOutBuf);
          }
          if (ob + unit > kOutBuf) {
            if (absl::Status e = drain(); !e.ok()) return e;
          }
          absl::Status e = reader.Add(off * unit, obuf.get() + ob, static_cast<size_t>(unit));
          ob += unit;
          return e;
        });
        if (s.ok()) s = drain();
        if (!s.ok()) return s;
      }
    }
    for (size_t d = m; d-- > 0;) {
      obase += str[d];
      if (++oidx[d] < dim[d]) break;
      obase -= str[d] * dim[d];
      oidx[d] = 0;
    }
  }
  return absl::OkStatus();
}

}  // namespace decomposed::internal

#endif  // DECOMPOSED_XLA_TRANSPOSE_H_
