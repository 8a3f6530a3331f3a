#include "decomposed/capture/bundle_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/limits.h"
#include "decomposed/npy/npy.h"
#include "decomposed/status.h"

namespace decomposed::capture {

namespace {

// meta.json is a few KiB; a bound keeps a hostile file from being slurped.
constexpr uint64_t kMaxMetaJsonBytes = 64 << 20;
// torch.save's data.pkl for one tensor is a few hundred bytes.
constexpr uint64_t kMaxPickleBytes = 1 << 20;
// A one-tensor torch.save zip has 4-5 entries; be generous.
constexpr uint64_t kMaxZipEntries = 1 << 16;
// The central directory is read whole: at most kMaxZipEntries entries with
// short names (torch.save's is a few hundred bytes), never the file's size.
constexpr uint64_t kMaxZipDirectoryBytes = 16 << 20;
// Tensor inputs of one NEFF call.
constexpr size_t kMaxInputs = 1 << 20;
// Nesting of pickled values: torch.save's pickle of one tensor nests about 5
// deep. The bound keeps the recursive release of a hostile chain (one
// TUPLE1 per byte) off the end of the stack.
constexpr int kMaxPickleDepth = 100;

// ------------------------------------------------------------ file helpers

class File {
 public:
  static absl::StatusOr<File> Open(const std::string& path) {
    // Only regular files: opening a FIFO would block, and a device has no
    // size to check declared lengths against.
    struct stat pst;
    if (::stat(path.c_str(), &pst) == 0 && !S_ISREG(pst.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, ": not a regular file"));
    }
    OwnedFd fd;
    if (absl::Status s = OpenForReading(path, &fd); !s.ok()) return s;
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) {
      return absl::ErrnoToStatus(errno, absl::StrCat("stat ", path));
    }
    File f;
    f.fd_ = std::make_shared<OwnedFd>(std::move(fd));
    f.size_ = static_cast<uint64_t>(st.st_size);
    f.path_ = path;
    return f;
  }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Reads exactly n bytes at `offset`.
  absl::Status ReadAt(uint64_t offset, size_t n, std::string* out) const {
    if (offset > size_ || n > size_ - offset) {
      return absl::OutOfRangeError(absl::StrCat(
          path_, ": reading ", n, " bytes at byte ", offset, " but the file has ",
          size_));
    }
    out->resize(n);
    size_t got = 0;
    while (got < n) {
      ssize_t r = ::pread(fd_->get(), out->data() + got, n - got,
                          static_cast<off_t>(offset + got));
      if (r < 0) {
        if (errno == EINTR) continue;
        return absl::ErrnoToStatus(errno, absl::StrCat("reading ", path_));
      }
      if (r == 0) {
        return absl::OutOfRangeError(absl::StrCat(path_, ": file shrank"));
      }
      got += static_cast<size_t>(r);
    }
    return absl::OkStatus();
  }

 private:
  std::shared_ptr<OwnedFd> fd_;
  uint64_t size_ = 0;
  std::string path_;
};

uint64_t Le(std::string_view b, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) {
    v |= static_cast<uint64_t>(static_cast<uint8_t>(b[at + i])) << (8 * i);
  }
  return v;
}

absl::Status Bad(std::string_view path, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(Sv(path), ": ", Sv(what)));
}

bool ParseNumbered(std::string_view name, std::string_view prefix,
                   int64_t* out) {
  if (name.substr(0, prefix.size()) != prefix) return false;
  std::string_view digits = name.substr(prefix.size());
  if (digits.empty() || digits.size() > 18) return false;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  if (digits.size() > 1 && digits[0] == '0') return false;
  return absl::SimpleAtoi(Sv(digits), out);
}

std::vector<std::string> ListDir(const std::string& dir, bool dirs_only) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.empty() || n[0] == '.') continue;
    if (dirs_only) {
      struct stat st;
      if (::stat((dir + "/" + n).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        continue;
      }
    }
    out.push_back(std::move(n));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

bool FileExists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// ------------------------------------------------------------ stored zip

struct ZipEntry {
  uint64_t size = 0;
  uint16_t method = 0;
  uint64_t local_offset = 0;
};

absl::StatusOr<std::map<std::string, ZipEntry>> ReadZipDirectory(
    const File& f) {
  const std::string& p = f.path();
  if (f.size() < 22) return Bad(p, "too small to be a zip file");
  uint64_t tail = std::min<uint64_t>(f.size(), 22 + 65535);
  std::string t;
  if (auto s = f.ReadAt(f.size() - tail, tail, &t); !s.ok()) return s;
  size_t eocd = std::string::npos;
  for (size_t i = t.size() - 22 + 1; i-- > 0;) {
    if (Le(t, i, 4) == 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd == std::string::npos) {
    return Bad(p, "no zip end-of-central-directory record");
  }
  uint64_t entries = Le(t, eocd + 10, 2);
  uint64_t cd_size = Le(t, eocd + 12, 4);
  uint64_t cd_offset = Le(t, eocd + 16, 4);
  const uint64_t eocd_pos = f.size() - tail + eocd;
  if (entries == 0xffff || cd_size == 0xffffffff || cd_offset == 0xffffffff) {
    // ZIP64: the locator sits just before the classic record.
    if (eocd_pos < 20) return Bad(p, "ZIP64 locator missing");
    std::string loc;
    if (auto s = f.ReadAt(eocd_pos - 20, 20, &loc); !s.ok()) return s;
    if (Le(loc, 0, 4) != 0x07064b50) return Bad(p, "ZIP64 locator missing");
    uint64_t rec_at = Le(loc, 8, 8);
    std::string rec;
    if (auto s = f.ReadAt(rec_at, 56, &rec); !s.ok()) return s;
    if (Le(rec, 0, 4) != 0x06064b50) return Bad(p, "bad ZIP64 end record");
    entries = Le(rec, 32, 8);
    cd_size = Le(rec, 40, 8);
    cd_offset = Le(rec, 48, 8);
  }
  if (entries > kMaxZipEntries) {
    return absl::ResourceExhaustedError(
        absl::StrCat(p, ": ", entries, " zip entries (limit ", kMaxZipEntries, ")"));
  }
  if (cd_offset > f.size() || cd_size > f.size() - cd_offset) {
    return Bad(p, absl::StrCat("central directory at ", cd_offset, " size ",
                               cd_size, " is past the end of the file"));
  }
  if (cd_size > kMaxZipDirectoryBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        p, ": a zip central directory of ", cd_size, " bytes (limit ",
        kMaxZipDirectoryBytes, ")"));
  }
  std::string cd;
  if (auto s = f.ReadAt(cd_offset, cd_size, &cd); !s.ok()) return s;
  std::map<std::string, ZipEntry> out;
  size_t at = 0;
  for (uint64_t i = 0; i < entries; ++i) {
    if (at + 46 > cd.size() || Le(cd, at, 4) != 0x02014b50) {
      return Bad(p, absl::StrCat("central directory entry ", i, " malformed (at byte ",
                                 cd_offset + at, ")"));
    }
    ZipEntry e;
    e.method = static_cast<uint16_t>(Le(cd, at + 10, 2));
    uint64_t csize = Le(cd, at + 20, 4);
    uint64_t usize = Le(cd, at + 24, 4);
    size_t nlen = Le(cd, at + 28, 2), xlen = Le(cd, at + 30, 2),
           clen = Le(cd, at + 32, 2);
    e.local_offset = Le(cd, at + 42, 4);
    if (at + 46 + nlen + xlen + clen > cd.size()) {
      return Bad(p, absl::StrCat("central directory entry ", i, " truncated"));
    }
    std::string name = cd.substr(at + 46, nlen);
    // ZIP64 extra: the fields that are 0xffffffff, in order.
    std::string_view x = std::string_view(cd).substr(at + 46 + nlen, xlen);
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
      return Bad(p, absl::StrCat("zip entry ", name, ": stored but sizes differ"));
    }
    out[name] = e;
    at += 46 + nlen + xlen + clen;
  }
  return out;
}

// The data offset of a stored entry, checked against the file.
absl::StatusOr<uint64_t> ZipDataOffset(const File& f, const std::string& name,
                                       const ZipEntry& e) {
  if (e.method != 0) {
    return absl::UnimplementedError(absl::StrCat(
        f.path(), ": zip entry ", name, " is compressed (method ", e.method,
        "); torch.save stores entries uncompressed"));
  }
  std::string h;
  if (auto s = f.ReadAt(e.local_offset, 30, &h); !s.ok()) return s;
  if (Le(h, 0, 4) != 0x04034b50) {
    return Bad(f.path(), absl::StrCat("zip entry ", name,
                                      ": no local header at byte ",
                                      e.local_offset));
  }
  uint64_t data = e.local_offset + 30 + Le(h, 26, 2) + Le(h, 28, 2);
  if (data > f.size() || e.size > f.size() - data) {
    return absl::OutOfRangeError(absl::StrCat(
        f.path(), ": zip entry ", name, " declares ", e.size,
        " bytes at byte ", data, " but the file has ", f.size()));
  }
  return data;
}

// --------------------------------------------------------------- pickle

struct PVal;
using PPtr = std::shared_ptr<PVal>;
struct PVal {
  enum Kind { kNone, kBool, kInt, kStr, kTuple, kGlobal, kCall, kPid, kDict,
              kList, kMark } kind = kNone;
  int64_t i = 0;
  int depth = 1;             // 1 + the deepest item's depth
  std::string a, b;          // str; global module/name
  std::vector<PPtr> items;   // tuple items; call: {func, args}; pid: {tuple}
};

absl::StatusOr<PPtr> Unpickle(std::string_view d, std::string_view where) {
  auto bad = [&](size_t at, std::string_view what) {
    return FrameError(absl::StatusCode::kInvalidArgument, Frame{where}, at,
                      "torch.save's pickle of one tensor", what);
  };
  std::vector<PPtr> st;
  std::vector<size_t> marks;
  std::map<uint64_t, PPtr> memo;
  auto mk = [](PVal::Kind k) {
    auto p = std::make_shared<PVal>();
    p->kind = k;
    return p;
  };
  size_t i = 0;
  auto need = [&](size_t n) { return i + n <= d.size(); };
  // Items pushed since the innermost MARK: an opcode may pop only these (in
  // Python's unpickler the items below a MARK live on another stack).
  auto above_mark = [&] {
    return st.size() - (marks.empty() ? 0 : marks.back());
  };
  while (i < d.size()) {
    const size_t at = i;
    const uint8_t op = static_cast<uint8_t>(d[i++]);
    switch (op) {
      case 0x80:  // PROTO
        if (!need(1)) return bad(at, "truncated PROTO");
        ++i;
        break;
      case 0x95:  // FRAME
        if (!need(8)) return bad(at, "truncated FRAME");
        i += 8;
        break;
      case 'c': {  // GLOBAL
        size_t n1 = d.find('\n', i);
        if (n1 == std::string_view::npos) return bad(at, "truncated GLOBAL");
        size_t n2 = d.find('\n', n1 + 1);
        if (n2 == std::string_view::npos) return bad(at, "truncated GLOBAL");
        auto g = mk(PVal::kGlobal);
        g->a = std::string(d.substr(i, n1 - i));
        g->b = std::string(d.substr(n1 + 1, n2 - n1 - 1));
        st.push_back(g);
        i = n2 + 1;
        break;
      }
      case '(':
        marks.push_back(st.size());
        break;
      case 't': case 'l': {  // TUPLE, LIST
        if (marks.empty()) return bad(at, "TUPLE without MARK");
        if (marks.back() > st.size()) return bad(at, "MARK popped");
        auto t = mk(op == 't' ? PVal::kTuple : PVal::kList);
        t->items.assign(st.begin() + marks.back(), st.end());
        st.resize(marks.back());
        marks.pop_back();
        st.push_back(t);
        break;
      }
      case ')': st.push_back(mk(PVal::kTuple)); break;
      case ']': st.push_back(mk(PVal::kList)); break;
      case '}': st.push_back(mk(PVal::kDict)); break;
      case 0x85: case 0x86: case 0x87: {
        size_t n = op - 0x84;
        if (above_mark() < n) {
          return bad(at, "TUPLEn with too few items");
        }
        auto t = mk(PVal::kTuple);
        t->items.assign(st.end() - n, st.end());
        st.resize(st.size() - n);
        st.push_back(t);
        break;
      }
      case 'X': case 0x8c: case 0x8d: {  // BINUNICODE, SHORT_, 8
        int w = op == 'X' ? 4 : op == 0x8c ? 1 : 8;
        if (!need(w)) return bad(at, "truncated string length");
        uint64_t n = Le(d, i, w);
        i += w;
        if (n > d.size() - i) return bad(at, "string past the end");
        auto s = mk(PVal::kStr);
        s->a = std::string(d.substr(i, n));
        i += n;
        st.push_back(s);
        break;
      }
      case 'K': case 'M': case 'J': {
        int w = op == 'K' ? 1 : op == 'M' ? 2 : 4;
        if (!need(w)) return bad(at, "truncated int");
        auto v = mk(PVal::kInt);
        uint64_t u = Le(d, i, w);
        v->i = w == 4 ? static_cast<int32_t>(static_cast<uint32_t>(u))
                      : static_cast<int64_t>(u);
        i += w;
        st.push_back(v);
        break;
      }
      case 0x8a: {  // LONG1
        if (!need(1)) return bad(at, "truncated LONG1");
        size_t n = static_cast<uint8_t>(d[i++]);
        if (n > 8 || !need(n)) return bad(at, "LONG1 wider than 64 bits");
        uint64_t u = n ? Le(d, i, static_cast<int>(n)) : 0;
        if (n > 0 && n < 8 && (static_cast<uint8_t>(d[i + n - 1]) & 0x80)) {
          u |= ~uint64_t{0} << (8 * n);
        }
        auto v = mk(PVal::kInt);
        v->i = static_cast<int64_t>(u);
        i += n;
        st.push_back(v);
        break;
      }
      case 0x88: case 0x89: {
        auto v = mk(PVal::kBool);
        v->i = op == 0x88;
        st.push_back(v);
        break;
      }
      case 'N': st.push_back(mk(PVal::kNone)); break;
      case 'q': case 'r': case 0x94: {  // BINPUT, LONG_BINPUT, MEMOIZE
        if (above_mark() < 1) return bad(at, "memo of an empty stack");
        uint64_t key;
        if (op == 0x94) {
          key = memo.size();
        } else {
          int w = op == 'q' ? 1 : 4;
          if (!need(w)) return bad(at, "truncated memo key");
          key = Le(d, i, w);
          i += w;
        }
        memo[key] = st.back();
        break;
      }
      case 'h': case 'j': {  // BINGET, LONG_BINGET
        int w = op == 'h' ? 1 : 4;
        if (!need(w)) return bad(at, "truncated memo key");
        auto it = memo.find(Le(d, i, w));
        i += w;
        if (it == memo.end()) return bad(at, "unknown memo key");
        st.push_back(it->second);
        break;
      }
      case 'Q': {  // BINPERSID
        if (above_mark() < 1) return bad(at, "BINPERSID of an empty stack");
        auto p = mk(PVal::kPid);
        p->items = {st.back()};
        st.back() = p;
        break;
      }
      case 'R': {  // REDUCE
        if (above_mark() < 2) return bad(at, "REDUCE with too few items");
        auto c = mk(PVal::kCall);
        c->items = {st[st.size() - 2], st.back()};
        st.resize(st.size() - 2);
        st.push_back(c);
        break;
      }
      case '.':
        if (st.size() != 1 || !marks.empty()) return bad(at, "STOP with a stack");
        if (i != d.size()) return bad(i, "bytes after STOP");
        return st.back();
      default:
        return bad(at, absl::StrCat("unsupported opcode 0x",
                                    absl::Hex(op, absl::kZeroPad2)));
    }
    if (st.size() > 100000) return bad(at, "stack too deep");
    const bool built = op == 't' || op == 'l' || op == 0x85 || op == 0x86 ||
                       op == 0x87 || op == 'Q' || op == 'R';
    if (built) {  // a new container on top: its items are final
      PVal& top = *st.back();
      for (const PPtr& x : top.items) top.depth = std::max(top.depth, x->depth + 1);
      if (top.depth > kMaxPickleDepth) {
        return bad(at, absl::StrCat("values nested deeper than ", kMaxPickleDepth));
      }
    }
  }
  return bad(d.size(), "no STOP");
}

struct PtTensor {
  const TorchDtype* dtype = nullptr;
  std::string key;
  uint64_t storage_bytes = 0;
  int64_t offset = 0;
  std::vector<int64_t> shape, stride;
};

absl::StatusOr<PtTensor> InterpretTensorPickle(const PPtr& root,
                                               std::string_view where) {
  auto bad = [&](std::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(
        Sv(where), ": expected torch.save's pickle of one tensor, found ",
        Sv(what)));
  };
  auto ints = [](const PPtr& t, std::vector<int64_t>* out) {
    if (t->kind != PVal::kTuple) return false;
    for (const PPtr& x : t->items) {
      if (x->kind != PVal::kInt) return false;
      out->push_back(x->i);
    }
    return true;
  };
  if (root->kind != PVal::kCall || root->items[0]->kind != PVal::kGlobal ||
      root->items[0]->a != "torch._utils") {
    return bad("something other than a torch._utils rebuild call");
  }
  const std::string& fn = root->items[0]->b;
  const bool v3 = fn == "_rebuild_tensor_v3";
  if (fn != "_rebuild_tensor_v2" && !v3) return bad(fn);
  const PPtr& args = root->items[1];
  if (args->kind != PVal::kTuple || args->items.size() < (v3 ? 7u : 4u)) {
    return bad("a rebuild call with too few arguments");
  }
  const PPtr& pid = args->items[0];
  if (pid->kind != PVal::kPid || pid->items[0]->kind != PVal::kTuple ||
      pid->items[0]->items.size() != 5) {
    return bad("a storage that is not a persistent id");
  }
  const auto& pv = pid->items[0]->items;
  if (pv[0]->kind != PVal::kStr || pv[0]->a != "storage" ||
      pv[1]->kind != PVal::kGlobal || pv[1]->a != "torch" ||
      pv[2]->kind != PVal::kStr || pv[4]->kind != PVal::kInt || pv[4]->i < 0) {
    return bad("a malformed storage id");
  }
  PtTensor t;
  t.key = pv[2]->a;
  if (pv[1]->b == "UntypedStorage") {
    const PPtr& dt = args->items[6];
    if (!v3 || dt->kind != PVal::kGlobal || dt->a != "torch") {
      return bad("an UntypedStorage without a dtype");
    }
    t.dtype = FindTorchDtype(dt->b);
    if (!t.dtype) return bad(absl::StrCat("unknown dtype torch.", dt->b));
    t.storage_bytes = static_cast<uint64_t>(pv[4]->i);
  } else {
    for (const TorchDtype& d : kTorchDtypes) {
      if (!d.legacy_storage.empty() && d.legacy_storage == pv[1]->b) t.dtype = &d;
    }
    if (!t.dtype) return bad(absl::StrCat("unknown storage torch.", pv[1]->b));
    uint64_t n = static_cast<uint64_t>(pv[4]->i);
    if (n > limits::kMaxElementCount) return bad("a huge storage");
    t.storage_bytes = n * t.dtype->element_bytes;
  }
  if (args->items[1]->kind != PVal::kInt || args->items[1]->i < 0 ||
      !ints(args->items[2], &t.shape) || !ints(args->items[3], &t.stride) ||
      t.shape.size() != t.stride.size()) {
    return bad("a malformed offset, size or stride");
  }
  t.offset = args->items[1]->i;
  return t;
}

absl::StatusOr<TensorData> LocateNpy(const Bundle& b, const BundleInput& in) {
  absl::StatusOr<File> f = File::Open(in.path);
  if (!f.ok()) return f.status();
  std::string pre;
  if (auto s = f->ReadAt(0, std::min<uint64_t>(12, f->size()), &pre); !s.ok()) {
    return s;
  }
  absl::StatusOr<uint64_t> hs = NpyHeaderSize(pre);
  if (!hs.ok()) return WithFile(hs.status(), in.path);
  std::string head;
  if (auto s = f->ReadAt(0, *hs, &head); !s.ok()) return s;
  absl::StatusOr<NpyHeader> h = ParseNpyHeader(head);
  if (!h.ok()) return WithFile(h.status(), in.path);
  std::string_view want = in.dtype->npy_descr;
  if (h->descr != want) {
    // NumPy writes one-byte types with '|'; accept '<' for them too.
    bool same = h->descr.size() == want.size() && h->descr.substr(1) == want.substr(1) &&
                in.dtype->element_bytes == 1;
    if (!same) {
      return Bad(in.path, absl::StrCat("descr '", h->descr, "' does not match ",
                                       Sv(in.dtype->name), " ('", Sv(want),
                                       "') from meta.json"));
    }
  }
  if (h->fortran_order) {
    return absl::UnimplementedError(
        absl::StrCat(in.path, ": Fortran-order .npy is not supported"));
  }
  if (h->shape != in.shape) {
    return Bad(in.path, absl::StrCat("shape (", absl::StrJoin(h->shape, ", "),
                                     ") does not match meta.json's (",
                                     absl::StrJoin(in.shape, ", "), ")"));
  }
  if (f->size() - *hs != in.byte_size) {
    return Bad(in.path, absl::StrCat("holds ", f->size() - *hs,
                                     " data bytes; meta.json's dtype and shape "
                                     "make ", in.byte_size));
  }
  (void)b;
  return TensorData{*hs, in.byte_size};
}

absl::StatusOr<TensorData> LocatePt(const BundleInput& in) {
  absl::StatusOr<File> f = File::Open(in.path);
  if (!f.ok()) return f.status();
  auto dir = ReadZipDirectory(*f);
  if (!dir.ok()) return dir.status();
  std::string prefix;
  for (const auto& [name, e] : *dir) {
    if (name.size() >= 9 && name.substr(name.size() - 9) == "/data.pkl" &&
        name.find('/') == name.size() - 9) {
      prefix = name.substr(0, name.size() - 8);
    }
  }
  if (prefix.empty()) return Bad(in.path, "no <archive>/data.pkl entry");
  const ZipEntry& pe = dir->at(prefix + "data.pkl");
  if (pe.size > kMaxPickleBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        in.path, ": data.pkl of ", pe.size, " bytes (limit ", kMaxPickleBytes, ")"));
  }
  absl::StatusOr<uint64_t> po = ZipDataOffset(*f, prefix + "data.pkl", pe);
  if (!po.ok()) return po.status();
  std::string pkl;
  if (auto s = f->ReadAt(*po, pe.size, &pkl); !s.ok()) return s;
  std::string where = in.path + " data.pkl";
  absl::StatusOr<PPtr> root = Unpickle(pkl, where);
  if (!root.ok()) return root.status();
  absl::StatusOr<PtTensor> t = InterpretTensorPickle(*root, where);
  if (!t.ok()) return t.status();
  if (t->dtype != in.dtype) {
    return Bad(in.path, absl::StrCat("holds ", Sv(t->dtype->name),
                                     " but meta.json says ", Sv(in.dtype->name)));
  }
  if (t->shape != in.shape) {
    return Bad(in.path, absl::StrCat("shape (", absl::StrJoin(t->shape, ", "),
                                     ") does not match meta.json's (",
                                     absl::StrJoin(in.shape, ", "), ")"));
  }
  std::vector<int64_t> c(t->shape.size());
  {
    int64_t acc = 1;
    for (size_t k = c.size(); k-- > 0;) {
      c[k] = acc;
      acc *= std::max<int64_t>(t->shape[k], 1);
    }
  }
  for (size_t k = 0; k < c.size() && in.element_count > 1; ++k) {
    if (t->shape[k] != 1 && t->stride[k] != c[k]) {
      return absl::UnimplementedError(absl::StrCat(
          in.path, ": non-contiguous tensor (stride (",
          absl::StrJoin(t->stride, ", "), "))"));
    }
  }
  auto de = dir->find(prefix + "data/" + t->key);
  if (de == dir->end()) {
    return Bad(in.path, absl::StrCat("no storage record data/", t->key));
  }
  if (de->second.size != t->storage_bytes) {
    return Bad(in.path, absl::StrCat("storage record holds ", de->second.size,
                                     " bytes; the pickle declares ",
                                     t->storage_bytes));
  }
  // Compare in elements first: offset * element_bytes may not fit 64 bits.
  if (static_cast<uint64_t>(t->offset) >
      t->storage_bytes / in.dtype->element_bytes) {
    return Bad(in.path, absl::StrCat("storage offset of ", t->offset,
                                     " elements is past the storage's ",
                                     t->storage_bytes, " bytes"));
  }
  uint64_t off = static_cast<uint64_t>(t->offset) * in.dtype->element_bytes;
  if (off > t->storage_bytes || in.byte_size > t->storage_bytes - off) {
    return Bad(in.path, absl::StrCat("tensor of ", in.byte_size,
                                     " bytes at storage offset ", off,
                                     " exceeds the storage's ", t->storage_bytes));
  }
  absl::StatusOr<uint64_t> data = ZipDataOffset(*f, de->first, de->second);
  if (!data.ok()) return data.status();
  return TensorData{*data + off, in.byte_size};
}

}  // namespace

absl::StatusOr<std::vector<BundleRef>> ListBundles(const std::string& root) {
  struct stat st;
  if (::stat(root.c_str(), &st) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("bundle root ", root));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bundle root ", root, " is not a directory"));
  }
  std::vector<BundleRef> out;
  for (const std::string& hash : ListDir(root, true)) {
    std::string hdir = root + "/" + hash;
    for (const std::string& rank : ListDir(hdir, true)) {
      BundleRef r;
      if (!ParseNumbered(rank, "rank", &r.global_rank)) continue;
      std::string rdir = hdir + "/" + rank;
      for (const std::string& call : ListDir(rdir, true)) {
        if (!ParseNumbered(call, "call", &r.call_index)) continue;
        r.hash = hash;
        r.path = rdir + "/" + call;
        r.complete = FileExists(r.path + "/meta.json");
        out.push_back(r);
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const BundleRef& a, const BundleRef& b) {
    return std::tie(a.hash, a.global_rank, a.call_index) <
           std::tie(b.hash, b.global_rank, b.call_index);
  });
  return out;
}

absl::StatusOr<Bundle> OpenBundle(const std::string& call_dir) {
  Bundle b;
  b.path = call_dir;
  const std::string mp = call_dir + "/meta.json";
  if (!FileExists(mp)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "bundle ", call_dir, " is incomplete: no meta.json"));
  }
  absl::StatusOr<File> f = File::Open(mp);
  if (!f.ok()) return f.status();
  if (f->size() > kMaxMetaJsonBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        mp, ": ", f->size(), " bytes (limit ", kMaxMetaJsonBytes, ")"));
  }
  std::string text;
  if (auto s = f->ReadAt(0, f->size(), &text); !s.ok()) return s;
  b.meta = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (b.meta.is_discarded() || !b.meta.is_object()) {
    return Bad(mp, "not a JSON object");
  }
  const auto& m = b.meta;
  if (!m.contains("schema") || m["schema"] != 1) {
    return Bad(mp, "schema is not 1");
  }
  if (!m.contains("format") || !m["format"].is_string()) {
    return Bad(mp, "no format");
  }
  std::string fmt = m["format"].get<std::string>();
  if (fmt == "npy") {
    b.format = BundleFormat::kNpy;
  } else if (fmt == "pt") {
    b.format = BundleFormat::kPt;
  } else {
    return Bad(mp, absl::StrCat("format '", fmt, "' is not pt or npy"));
  }
  if (!m.contains("inputs") || !m["inputs"].is_array()) {
    return Bad(mp, "no inputs list");
  }
  if (m["inputs"].size() > kMaxInputs) {
    return absl::ResourceExhaustedError(absl::StrCat(mp, ": too many inputs"));
  }
  for (size_t i = 0; i < m["inputs"].size(); ++i) {
    const auto& x = m["inputs"][i];
    std::string what = absl::StrCat("inputs[", i, "]");
    if (!x.is_object() || !x.contains("index") || !x["index"].is_number_integer() ||
        x["index"].get<int64_t>() != static_cast<int64_t>(i)) {
      return Bad(mp, absl::StrCat(what, ": index is not ", i));
    }
    BundleInput in;
    in.index = static_cast<int64_t>(i);
    if (!x.contains("dtype") || !x["dtype"].is_string()) {
      return Bad(mp, absl::StrCat(what, ": no dtype"));
    }
    in.dtype = FindTorchDtype(x["dtype"].get<std::string>());
    if (!in.dtype) {
      return Bad(mp, absl::StrCat(what, ": unknown dtype '",
                                  x["dtype"].get<std::string>(), "'"));
    }
    if (!x.contains("shape") || !x["shape"].is_array() ||
        x["shape"].size() > limits::kMaxRank) {
      return Bad(mp, absl::StrCat(what, ": no shape (or rank > ", limits::kMaxRank, ")"));
    }
    uint64_t n = 1;
    for (const auto& d : x["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) {
        return Bad(mp, absl::StrCat(what, ": a dimension is not a non-negative integer"));
      }
      int64_t v = d.get<int64_t>();
      if (v != 0 && n > limits::kMaxElementCount / static_cast<uint64_t>(v)) {
        return Bad(mp, absl::StrCat(what, ": element count overflows"));
      }
      n *= static_cast<uint64_t>(v);
      in.shape.push_back(v);
    }
    in.element_count = n;
    in.byte_size = n * in.dtype->element_bytes;
    in.path = absl::StrCat(call_dir, "/tensor", i, ".", fmt);
    b.inputs.push_back(std::move(in));
  }
  return b;
}

absl::StatusOr<TensorData> LocateTensor(const Bundle& b, size_t i) {
  if (i >= b.inputs.size()) {
    return absl::OutOfRangeError(absl::StrCat(
        b.path, ": input ", i, " of ", b.inputs.size()));
  }
  const BundleInput& in = b.inputs[i];
  if (b.format == BundleFormat::kNpy) {
    if (in.dtype->npy_descr.empty()) {
      return Bad(b.path, absl::StrCat("input ", i, ": ", Sv(in.dtype->name),
                                      " cannot be stored as .npy"));
    }
    return LocateNpy(b, in);
  }
  return LocatePt(in);
}

absl::Status VerifyBundle(const Bundle& b) {
  for (size_t i = 0; i < b.inputs.size(); ++i) {
    absl::StatusOr<TensorData> t = LocateTensor(b, i);
    if (!t.ok()) return t.status();
  }
  // No tensor files beyond the listed inputs.
  for (const std::string& name : ListDir(b.path, false)) {
    int64_t k;
    std::string_view n = name;
    size_t dot = n.rfind('.');
    if (dot == std::string_view::npos) continue;
    std::string_view ext = n.substr(dot + 1);
    if ((ext == "npy" || ext == "pt") &&
        ParseNumbered(n.substr(0, dot), "tensor", &k)) {
      if (ext != BundleFormatName(b.format) ||
          k >= static_cast<int64_t>(b.inputs.size())) {
        return Bad(b.path, absl::StrCat(name, " is not listed in meta.json (",
                                        b.inputs.size(), " ",
                                        Sv(BundleFormatName(b.format)),
                                        " inputs)"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status StreamTensor(const Bundle& b, size_t i,
                          const std::function<bool(std::string_view)>& emit) {
  absl::StatusOr<TensorData> t = LocateTensor(b, i);
  if (!t.ok()) return t.status();
  absl::StatusOr<File> f = File::Open(b.inputs[i].path);
  if (!f.ok()) return f.status();
  std::string buf;
  constexpr uint64_t kChunk = 1 << 20;
  for (uint64_t done = 0; done < t->size;) {
    size_t n = static_cast<size_t>(std::min(kChunk, t->size - done));
    if (auto s = f->ReadAt(t->offset + done, n, &buf); !s.ok()) return s;
    if (!emit(buf)) return absl::CancelledError("stopped by the caller");
    done += n;
  }
  return absl::OkStatus();
}

absl::StatusOr<LoadedTensor> LoadTensor(const Bundle& b, size_t i) {
  LoadedTensor t;
  absl::Status s = StreamTensor(b, i, [&](std::string_view d) {
    t.bytes.append(d);
    return true;
  });
  if (!s.ok()) return s;
  t.dtype = b.inputs[i].dtype;
  t.shape = b.inputs[i].shape;
  return t;
}

}  // namespace decomposed::capture
