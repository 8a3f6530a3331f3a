#include "decomposed/capture/bundle_writer.h"

#include "decomposed/io/dirs.h"
#include "decomposed/npy/json_text.h"
#include "decomposed/status.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

namespace decomposed::capture {

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= std::max<int64_t>(shape[i], 1);
  }
  return s;
}

absl::StatusOr<TensorLayout> ValidateHostTensor(const HostTensor& t,
                                                std::string_view what) {
  TensorLayout l;
  l.dtype = FindTorchDtype(t.dtype);
  if (l.dtype == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        Sv(what), ": unknown dtype ", static_cast<int>(t.dtype),
        " (expected a TorchType enumerator)"));
  }
  if (t.shape.size() > limits::kMaxRank) {
    return absl::InvalidArgumentError(absl::StrCat(
        Sv(what), ": rank ", t.shape.size(), " exceeds ", limits::kMaxRank));
  }
  if (!t.strides.empty() && t.strides.size() != t.shape.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Sv(what), ": ", t.strides.size(), " strides for rank ",
                     t.shape.size()));
  }
  uint64_t n = 1;
  for (int64_t d : t.shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(Sv(what), ": negative dimension ", d));
    }
    if (d != 0 && n > limits::kMaxElementCount / static_cast<uint64_t>(d)) {
      return absl::InvalidArgumentError(
          absl::StrCat(Sv(what), ": element count overflows"));
    }
    n *= static_cast<uint64_t>(d);
  }
  l.element_count = n;
  l.byte_size = n * l.dtype->element_bytes;
  if (n > 0 && t.data == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(Sv(what), ": null data pointer"));
  }
  if (!t.strides.empty() && n > 1) {
    std::vector<int64_t> c = ContiguousStrides(t.shape);
    for (size_t i = 0; i < c.size(); ++i) {
      if (t.shape[i] != 1 && t.strides[i] != c[i]) l.contiguous = false;
    }
  }
  return l;
}

bool ForEachTensorChunk(const HostTensor& t, const TensorLayout& l,
                        const std::function<bool(std::string_view)>& emit,
                        size_t chunk_bytes) {
  const char* base = static_cast<const char*>(t.data);
  const size_t es = l.dtype->element_bytes;
  if (l.byte_size == 0) return true;
  if (l.contiguous) {
    for (uint64_t off = 0; off < l.byte_size; off += chunk_bytes) {
      size_t n = static_cast<size_t>(
          std::min<uint64_t>(chunk_bytes, l.byte_size - off));
      if (!emit(std::string_view(base + off, n))) return false;
    }
    return true;
  }
  // Strided gather: walk the index space in C order.
  const size_t rank = t.shape.size();
  chunk_bytes = std::max(chunk_bytes, es);
  std::vector<char> buf(chunk_bytes / es * es);
  size_t used = 0;
  std::vector<int64_t> idx(rank, 0);
  const int64_t inner = t.shape[rank - 1];
  const int64_t inner_stride = t.strides[rank - 1];
  // Copies `count` elements of width W with stride `stride` (elements).
  auto gather = [](char* dst, const char* src, int64_t count, int64_t stride,
                   size_t w) {
    auto typed = [&](auto tag) {
      using T = decltype(tag);
      for (int64_t j = 0; j < count; ++j) {
        T v;
        std::memcpy(&v, src + j * stride * static_cast<int64_t>(sizeof(T)),
                    sizeof(T));
        std::memcpy(dst + j * sizeof(T), &v, sizeof(T));
      }
    };
    switch (w) {
      case 1: typed(uint8_t{}); break;
      case 2: typed(uint16_t{}); break;
      case 4: typed(uint32_t{}); break;
      case 8: typed(uint64_t{}); break;
      default:
        for (int64_t j = 0; j < count; ++j) {
          std::memcpy(dst + j * w, src + j * stride * static_cast<int64_t>(w), w);
        }
    }
  };
  const int64_t per_buf = static_cast<int64_t>(buf.size() / es);
  for (uint64_t done = 0; done < l.element_count;) {
    int64_t off = 0;
    for (size_t i = 0; i + 1 < rank; ++i) off += idx[i] * t.strides[i];
    const char* row = base + off * static_cast<int64_t>(es);
    for (int64_t j = 0; j < inner;) {
      int64_t room = per_buf - static_cast<int64_t>(used / es);
      if (room == 0) {
        if (!emit(std::string_view(buf.data(), used))) return false;
        used = 0;
        continue;
      }
      int64_t n = std::min(room, inner - j);
      const char* src = row + j * inner_stride * static_cast<int64_t>(es);
      if (inner_stride == 1) {
        std::memcpy(buf.data() + used, src, static_cast<size_t>(n) * es);
      } else {
        gather(buf.data() + used, src, n, inner_stride, es);
      }
      used += static_cast<size_t>(n) * es;
      j += n;
    }
    done += static_cast<uint64_t>(inner);
    for (size_t i = rank - 1; i-- > 0;) {
      if (++idx[i] < t.shape[i]) break;
      idx[i] = 0;
    }
  }
  return used == 0 || emit(std::string_view(buf.data(), used));
}

namespace {

// Pickle protocol 2 opcodes used by torch.save for a tensor.
void PickleString(std::string* p, std::string_view s) {
  p->push_back('X');  // BINUNICODE
  uint32_t n = static_cast<uint32_t>(s.size());
  for (int i = 0; i < 4; ++i) p->push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  p->append(s);
}
void PickleGlobal(std::string* p, std::string_view module,
                  std::string_view name) {
  absl::StrAppend(p, "c", Sv(module), "\n", Sv(name), "\n");
}
void PickleInt(std::string* p, int64_t v) {
  if (v >= 0 && v < 256) {
    p->push_back('K');
    p->push_back(static_cast<char>(v));
  } else if (v >= 0 && v < 65536) {
    p->push_back('M');
    p->push_back(static_cast<char>(v & 0xff));
    p->push_back(static_cast<char>(v >> 8));
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    p->push_back('J');
    uint32_t u = static_cast<uint32_t>(static_cast<int32_t>(v));
    for (int i = 0; i < 4; ++i) p->push_back(static_cast<char>((u >> (8 * i)) & 0xff));
  } else {
    // LONG1: minimal little-endian two's complement, as pickle.encode_long.
    std::string bytes;
    int64_t x = v;
    while (true) {
      uint8_t b = static_cast<uint8_t>(x & 0xff);
      bytes.push_back(static_cast<char>(b));
      x >>= 8;  // arithmetic
      if ((x == 0 && !(b & 0x80)) || (x == -1 && (b & 0x80))) break;
    }
    p->push_back('\x8a');
    p->push_back(static_cast<char>(bytes.size()));
    p->append(bytes);
  }
}
void PickleIntTuple(std::string* p, const std::vector<int64_t>& v) {
  if (v.size() > 3) p->push_back('(');  // MARK
  for (int64_t x : v) PickleInt(p, x);
  switch (v.size()) {
    case 0: p->push_back(')'); break;     // EMPTY_TUPLE
    case 1: p->push_back('\x85'); break;  // TUPLE1
    case 2: p->push_back('\x86'); break;  // TUPLE2
    case 3: p->push_back('\x87'); break;  // TUPLE3
    default: p->push_back('t'); break;    // TUPLE
  }
}

}  // namespace

std::string TorchTensorPickle(const TorchDtype& dtype,
                              const std::vector<int64_t>& shape,
                              std::string_view key) {
  const bool legacy = !dtype.legacy_storage.empty();
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  std::string p = "\x80\x02";  // PROTO 2
  PickleGlobal(&p, "torch._utils",
               legacy ? "_rebuild_tensor_v2" : "_rebuild_tensor_v3");
  p.push_back('(');  // MARK: the argument tuple
  // persistent id ('storage', StorageType, key, location, numel)
  p.push_back('(');
  PickleString(&p, "storage");
  PickleGlobal(&p, "torch", legacy ? dtype.legacy_storage : "UntypedStorage");
  PickleString(&p, key);
  PickleString(&p, "cpu");
  // Typed storages count elements, UntypedStorage counts bytes.
  PickleInt(&p, legacy ? numel : numel * dtype.element_bytes);
  p.push_back('t');
  p.push_back('Q');  // BINPERSID
  PickleInt(&p, 0);  // storage offset
  PickleIntTuple(&p, shape);
  PickleIntTuple(&p, ContiguousStrides(shape));
  p.push_back('\x89');  // NEWFALSE: requires_grad
  PickleGlobal(&p, "collections", "OrderedDict");
  p.push_back(')');
  p.push_back('R');  // OrderedDict(): backward hooks
  if (!legacy) PickleGlobal(&p, "torch", dtype.attr);
  p.push_back('t');
  p.push_back('R');  // REDUCE
  p.push_back('.');  // STOP
  return p;
}

nlohmann::json MetaJson(const CallMeta& m, std::span<const TensorMeta> inputs) {
  using nlohmann::json;
  json j;
  j["schema"] = 1;
  j["hash"] = m.hash;
  j["format"] = std::string(BundleFormatName(m.format));
  j["global_rank"] = m.global_rank;
  j["tp_rank"] = m.tp_rank;
  j["dp_rank"] = m.dp_rank;
  j["call_index"] = m.call_index;
  std::vector<std::string> sel = m.selected_by;
  std::sort(sel.begin(), sel.end());
  j["selected_by"] = sel;
  json ins = json::array();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TorchDtype* d = FindTorchDtype(inputs[i].dtype);
    ins.push_back({{"index", i},
                   {"dtype", d ? std::string(d->name) : std::string("?")},
                   {"shape", inputs[i].shape}});
  }
  j["inputs"] = std::move(ins);
  json matches = json::array();
  for (const Match& x : m.matches) matches.push_back(MatchJson(x));
  j["matches"] = std::move(matches);
  if (m.forward) {
    j["global_step"] = m.forward->global_step
                           ? json(*m.forward->global_step)
                           : json(nullptr);
    j["is_prompt"] = m.forward->is_prompt;
    j["req_ids"] = m.forward->req_ids;
    j["positions"] = m.forward->positions;
  } else {
    j["global_step"] = nullptr;
    j["is_prompt"] = nullptr;
    j["req_ids"] = json::array();
    j["positions"] = json::array();
  }
  return j;
}

std::string FormatMetaJson(const CallMeta& m,
                           std::span<const TensorMeta> inputs) {
  // nlohmann's object is a std::map: keys come out sorted like sort_keys.
  // Python's json.dump escapes non-ASCII characters and ends with no newline.
  return JsonText(MetaJson(m, inputs),
                  {.indent = 2, .ensure_ascii = true, .final_newline = false});
}

std::string FormatMetaJson(const CallMeta& m,
                           std::span<const HostTensor> inputs) {
  std::vector<TensorMeta> metas;
  for (const HostTensor& t : inputs) metas.push_back({t.dtype, t.shape});
  return FormatMetaJson(m, metas);
}

namespace {


absl::Status SyncPath(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, absl::StrCat("opening ", path));
  int r = ::fsync(fd);
  int e = errno;
  ::close(fd);
  if (r != 0) return ErrnoError(e, absl::StrCat("fsync ", path));
  return absl::OkStatus();
}

// Creates `path` (never over an existing file) as an FdSink.
absl::StatusOr<std::unique_ptr<FdSink>> CreateFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError(errno, absl::StrCat("creating ", path));
  return std::make_unique<FdSink>(OwnedFd(fd));
}

// Flushes, optionally fsyncs, and closes a file written through `sink`.
absl::Status CloseFile(FdSink& sink, bool sync) {
  if (!sink.Flush()) return sink.status();
  if (sync && ::fsync(sink.fd()) != 0) return ErrnoError(errno, "fsync");
  return sink.Close();
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

// One tensor file, written as the literal decoder streams it.
class BundleWriter::TensorSink final : public ArraySink {
 public:
  TensorSink(BundleWriter& w, std::string what) : w_(w), what_(std::move(what)) {}

  absl::Status Begin(const ArrayHeader& h) override {
    dtype_ = TorchDtypeForXla(h.element_type());
    std::string array = absl::StrCat(
        Sv(h.type->name), "[", absl::StrJoin(h.dims, ","), "]");
    if (dtype_ == nullptr) {
      return absl::UnimplementedError(absl::StrCat(
          what_, " (", array, "): XLA type ", Sv(h.type->name),
          " has no PyTorch dtype"));
    }
    if (w_.format_ == BundleFormat::kNpy && dtype_->npy_descr.empty()) {
      return absl::UnimplementedError(absl::StrCat(
          what_, " (", array, "): ", Sv(dtype_->name),
          " has no NumPy representation; use the pt format"));
    }
    shape_ = h.dims;
    std::string stem;
    path_ = w_.FilePath(w_.tensors_.size(), &stem);
    absl::StatusOr<std::unique_ptr<FdSink>> f = CreateFile(path_);
    if (!f.ok()) return f.status();
    file_ = *std::move(f);
    if (w_.format_ == BundleFormat::kNpy) {
      npy_.emplace(*file_);
      NpyHeader nh;
      nh.descr = std::string(dtype_->npy_descr);
      nh.shape = h.dims;
      return Where(npy_->Begin(nh, h.byte_size));
    }
    PtWriteOptions po;
    po.archive_name = stem;
    pt_.emplace(*file_, po);
    return Where(pt_->Begin(*dtype_, h.dims, h.byte_size, std::nullopt));
  }
  absl::Status Write(std::string_view chunk) override {
    bool ok = npy_ ? npy_->Write(chunk) : pt_->Write(chunk);
    if (ok) return absl::OkStatus();
    absl::Status s = npy_ ? npy_->status() : file_->status();
    return Where(s.ok() ? absl::DataLossError("write failed") : s);
  }
  // .npy payloads go to the file unchanged: the kernel may copy them. (A
  // .pt needs the bytes for its CRC.)
  FdSink* PayloadFd() override { return npy_ ? file_.get() : nullptr; }
  absl::Status WroteToFd(uint64_t n) override {
    if (!npy_ || n > npy_->remaining()) {
      return absl::FailedPreconditionError("tensor payload: more than declared");
    }
    file_->Wrote(n);
    npy_->Wrote(n);
    return absl::OkStatus();
  }
  absl::Status Finish() override {
    if (npy_) {
      if (absl::Status s = npy_->Finish(); !s.ok()) return Where(s);
    } else {
      absl::StatusOr<uint32_t> crc = pt_->Finish();
      if (!crc.ok()) return Where(crc.status());
      // The stream's CRC goes into data/0's local header.
      char b[4];
      for (int i = 0; i < 4; ++i) b[i] = static_cast<char>(*crc >> (8 * i));
      if (::pwrite(file_->fd(), b, 4, static_cast<off_t>(pt_->crc_position())) != 4) {
        return Where(ErrnoError(errno, "writing the data CRC"));
      }
    }
    if (absl::Status s = CloseFile(*file_, w_.options_.sync); !s.ok()) {
      return Where(s);
    }
    w_.tensors_.push_back({dtype_->type, std::move(shape_)});
    return absl::OkStatus();
  }

 private:
  absl::Status Where(absl::Status s) const {
    return Prefix(s, absl::StrCat("writing ", path_));
  }

  BundleWriter& w_;
  std::string what_;
  const TorchDtype* dtype_ = nullptr;
  std::vector<int64_t> shape_;
  std::string path_;
  std::unique_ptr<FdSink> file_;
  std::optional<NpySink<FdSink>> npy_;
  std::optional<PtTensorWriter<FdSink>> pt_;
};

absl::StatusOr<std::unique_ptr<BundleWriter>> BundleWriter::Create(
    const std::string& call_dir_in, BundleFormat format,
    const BundleWriteOptions& options) {
  std::unique_ptr<BundleWriter> w(new BundleWriter());
  std::string call_dir = call_dir_in;
  while (call_dir.size() > 1 && call_dir.back() == '/') call_dir.pop_back();
  size_t slash = call_dir.find_last_of('/');
  w->parent_ = slash == std::string::npos ? std::string(".")
               : slash == 0                 ? std::string("/")
                                            : call_dir.substr(0, slash);
  std::string name = slash == std::string::npos ? call_dir : call_dir.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") {
    return absl::InvalidArgumentError(
        absl::StrCat("bundle directory '", call_dir_in, "' has no name"));
  }
  if (absl::Status s = decomposed::internal::MakeDirectories(w->parent_); !s.ok()) {
    return s;
  }
  if (Exists(call_dir)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "bundle directory ", call_dir, " already exists; not overwriting it"));
  }
  w->tmp_ = std::make_unique<decomposed::internal::TempDirectory>();
  if (absl::Status s = w->tmp_->Create(absl::StrCat(w->parent_, "/.", name, ".tmp."));
      !s.ok()) {
    return s;
  }
  w->call_dir_ = std::move(call_dir);
  w->format_ = format;
  w->options_ = options;
  return w;
}

BundleWriter::~BundleWriter() = default;

const std::string& BundleWriter::temp_path() const { return tmp_->path(); }

std::string BundleWriter::FilePath(size_t i, std::string* stem) const {
  *stem = absl::StrCat("tensor", i);
  return absl::StrCat(tmp_->path(), "/", *stem, ".", Sv(BundleFormatName(format_)));
}

absl::Status BundleWriter::AddTensor(const HostTensor& t) {
  const std::string what = absl::StrCat("input ", tensors_.size());
  absl::StatusOr<TensorLayout> l = ValidateHostTensor(t, what);
  if (!l.ok()) return l.status();
  std::string stem;
  const std::string path = FilePath(tensors_.size(), &stem);
  absl::StatusOr<std::unique_ptr<FdSink>> f = CreateFile(path);
  if (!f.ok()) return Prefix(f.status(), what);
  absl::Status s;
  if (format_ == BundleFormat::kNpy) {
    s = WriteNpyTensor(t, **f);
  } else {
    PtWriteOptions po;
    po.archive_name = stem;
    s = WritePtTensor(t, **f, po);
  }
  if (s.ok()) s = CloseFile(**f, options_.sync);
  if (!s.ok()) return Prefix(Prefix(s, absl::StrCat("writing ", path)), what);
  tensors_.push_back({t.dtype, t.shape});
  return absl::OkStatus();
}

ArraySink& BundleWriter::NextTensor(std::string what) {
  sink_ = std::make_unique<TensorSink>(*this, std::move(what));
  return *sink_;
}

absl::Status BundleWriter::Commit(const CallMeta& meta) {
  sink_.reset();
  const std::string tmp = tmp_->path();
  std::string json = FormatMetaJson(meta, tensors_);
  {
    absl::StatusOr<std::unique_ptr<FdSink>> f = CreateFile(tmp + "/meta.json");
    if (!f.ok()) return f.status();
    (*f)->Write(json);
    if (absl::Status s = CloseFile(**f, options_.sync); !s.ok()) {
      return Prefix(s, absl::StrCat("writing ", tmp, "/meta.json"));
    }
  }
  if (options_.sync) {
    if (absl::Status s = SyncPath(tmp); !s.ok()) return s;
  }
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, call_dir_.c_str(),
                  RENAME_NOREPLACE) != 0) {
    int e = errno;
    if (e == EINVAL || e == ENOSYS) {
      // File system without RENAME_NOREPLACE: check, then rename (a
      // non-empty existing directory still makes rename fail).
      if (Exists(call_dir_)) e = EEXIST;
      else if (::rename(tmp.c_str(), call_dir_.c_str()) == 0) e = 0;
      else e = errno;
    }
    if (e == EEXIST || e == ENOTEMPTY) {
      return absl::FailedPreconditionError(absl::StrCat(
          "bundle directory ", call_dir_, " already exists; not overwriting it"));
    }
    if (e != 0) {
      return ErrnoError(
          e, absl::StrCat("renaming ", tmp, " to ", call_dir_));
    }
  }
  tmp_->Release();
  committed_ = true;
  if (options_.sync) {
    if (absl::Status s = SyncPath(parent_); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status WriteBundle(const std::string& call_dir,
                         std::span<const HostTensor> inputs,
                         const CallMeta& meta,
                         const BundleWriteOptions& options) {
  // Validate everything before touching the file system.
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string what = absl::StrCat("input ", i);
    absl::StatusOr<TensorLayout> l = ValidateHostTensor(inputs[i], what);
    if (!l.ok()) return l.status();
    if (meta.format == BundleFormat::kNpy && l->dtype->npy_descr.empty()) {
      return absl::UnimplementedError(absl::StrCat(
          what, ": ", Sv(l->dtype->name),
          " has no NumPy representation; re-run with "
          "VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_FORMAT=pt"));
    }
  }
  absl::StatusOr<std::unique_ptr<BundleWriter>> w =
      BundleWriter::Create(call_dir, meta.format, options);
  if (!w.ok()) return w.status();
  for (const HostTensor& t : inputs) {
    if (absl::Status s = (*w)->AddTensor(t); !s.ok()) return s;
  }
  return (*w)->Commit(meta);
}

}  // namespace decomposed::capture
