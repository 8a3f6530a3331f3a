// The bundle logic: listing call directories, meta.json, and checking each
// tensor file against it (the .pt side is pt_reader.h).
#include "decomposed/capture/bundle_reader.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/capture/pt_reader.h"
#include "decomposed/capture/regular_file.h"
#include "decomposed/limits.h"
#include "decomposed/npy/npy.h"
#include "decomposed/status.h"

namespace decomposed::capture {

namespace {

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

absl::StatusOr<TensorData> LocateNpy(const Bundle& b, const BundleInput& in) {
  absl::StatusOr<RegularFile> f = RegularFile::Open(in.path);
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
  absl::StatusOr<RegularFile> f = RegularFile::Open(in.path);
  if (!f.ok()) return f.status();
  absl::StatusOr<PtTensor> t = ReadPtTensor(*f);
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
  return TensorData{t->data_offset, t->byte_size};
}

}  // namespace

absl::StatusOr<std::vector<BundleRef>> ListBundles(const std::string& root) {
  struct stat st;
  if (::stat(root.c_str(), &st) != 0) {
    return ErrnoError(errno, absl::StrCat("bundle root ", root));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bundle root ", root, " is not a directory"));
  }
  std::vector<BundleRef> out;
  // The names of `dir` and of its parents, for a root given below the top.
  std::string trimmed = root;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  auto base = [](const std::string& p) {
    const size_t slash = p.rfind('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
  };
  auto parent = [](const std::string& p) {
    const size_t slash = p.rfind('/');
    return slash == std::string::npos ? std::string(".")
                                      : slash == 0 ? std::string("/")
                                                   : p.substr(0, slash);
  };
  auto calls_of = [&](const std::string& rdir, const std::string& hash,
                      int64_t global_rank) {
    for (const std::string& call : ListDir(rdir, true)) {
      BundleRef r;
      if (!ParseNumbered(call, "call", &r.call_index)) continue;
      r.global_rank = global_rank;
      r.hash = hash;
      r.path = rdir + "/" + call;
      r.complete = FileExists(r.path + "/meta.json");
      out.push_back(r);
    }
  };
  auto ranks_of = [&](const std::string& hdir, const std::string& hash) {
    for (const std::string& rank : ListDir(hdir, true)) {
      int64_t g = 0;
      if (!ParseNumbered(rank, "rank", &g)) continue;
      calls_of(hdir + "/" + rank, hash, g);
    }
  };
  int64_t number = 0;
  if (FileExists(root + "/meta.json")) {
    // A call directory itself.
    BundleRef r;
    r.path = root;
    r.complete = true;
    const std::string up = parent(trimmed);
    if (ParseNumbered(base(trimmed), "call", &r.call_index) &&
        ParseNumbered(base(up), "rank", &r.global_rank)) {
      r.hash = base(parent(up));
    }
    absl::StatusOr<Bundle> b = OpenBundle(root);
    if (b.ok()) {
      const nlohmann::json& m = b->meta;
      if (m.contains("hash") && m["hash"].is_string()) {
        r.hash = m["hash"].get<std::string>();
      }
      if (m.contains("global_rank") && m["global_rank"].is_number_integer()) {
        r.global_rank = m["global_rank"].get<int64_t>();
      }
      if (m.contains("call_index") && m["call_index"].is_number_integer()) {
        r.call_index = m["call_index"].get<int64_t>();
      }
    }
    out.push_back(r);
  } else if (ParseNumbered(base(trimmed), "rank", &number)) {
    calls_of(trimmed, base(parent(trimmed)), number);
  } else {
    for (const std::string& hash : ListDir(trimmed, true)) {
      ranks_of(trimmed + "/" + hash, hash);
    }
    // A hash directory: rank<G>/call<N> right below it.
    if (out.empty()) ranks_of(trimmed, base(trimmed));
  }
  std::sort(out.begin(), out.end(), [](const BundleRef& a, const BundleRef& b) {
    return std::tie(a.hash, a.global_rank, a.call_index) <
           std::tie(b.hash, b.global_rank, b.call_index);
  });
  return out;
}

absl::StatusOr<nlohmann::json> ListBundlesJson(const std::string& root) {
  absl::StatusOr<std::vector<BundleRef>> refs = ListBundles(root);
  if (!refs.ok()) return refs.status();
  nlohmann::json out = nlohmann::json::array();
  for (const BundleRef& r : *refs) {
    nlohmann::json j{{"path", r.path},
                     {"hash", r.hash},
                     {"global_rank", r.global_rank},
                     {"call_index", r.call_index},
                     {"complete", r.complete}};
    if (r.complete) {
      absl::StatusOr<Bundle> b = OpenBundle(r.path);
      if (b.ok()) {
        j["format"] = std::string(BundleFormatName(b->format));
        j["inputs"] = b->inputs.size();
        if (b->meta.contains("selected_by")) {
          j["selected_by"] = b->meta["selected_by"];
        }
      } else {
        j["error"] = std::string(b.status().message());
      }
    }
    out.push_back(std::move(j));
  }
  return out;
}

absl::StatusOr<Bundle> OpenBundle(const std::string& call_dir) {
  Bundle b;
  b.path = call_dir;
  const std::string mp = call_dir + "/meta.json";
  // A directory that is not there is not an incomplete bundle: say why.
  struct stat st;
  if (::stat(call_dir.c_str(), &st) != 0) {
    return ErrnoError(errno, absl::StrCat("bundle ", call_dir));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("bundle ", call_dir, " is not a directory"));
  }
  if (!FileExists(mp)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "bundle ", call_dir, " is incomplete: no meta.json"));
  }
  absl::StatusOr<RegularFile> f = RegularFile::Open(mp);
  if (!f.ok()) return f.status();
  if (f->size() > limits::kMaxMetaJsonBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        mp, ": ", f->size(), " bytes (limit ", limits::kMaxMetaJsonBytes, ")"));
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
  if (std::optional<BundleFormat> f = ValueOf(kBundleFormatNames, fmt)) {
    b.format = *f;
  } else {
    return Bad(mp, absl::StrCat("format '", fmt, "' is not pt or npy"));
  }
  if (!m.contains("inputs") || !m["inputs"].is_array()) {
    return Bad(mp, "no inputs list");
  }
  if (m["inputs"].size() > limits::kMaxInputs) {
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
  absl::StatusOr<RegularFile> f = RegularFile::Open(b.inputs[i].path);
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
