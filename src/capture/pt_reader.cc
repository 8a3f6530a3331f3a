#include "decomposed/capture/pt_reader.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/capture/unpickler.h"
#include "decomposed/capture/zip_reader.h"
#include "decomposed/limits.h"
#include "decomposed/status.h"

namespace decomposed::capture {

namespace {

// What the pickle says: the tensor and its storage.
struct PickledTensor {
  const TorchDtype* dtype = nullptr;
  std::string key;             // the storage record's name under data/
  uint64_t storage_bytes = 0;
  int64_t offset = 0;          // in elements
  std::vector<int64_t> shape, stride;
};

absl::StatusOr<PickledTensor> InterpretTensorPickle(const PicklePtr& root,
                                                    std::string_view where) {
  auto bad = [&](std::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(
        Sv(where), ": expected torch.save's pickle of one tensor, found ",
        Sv(what)));
  };
  auto ints = [](const PicklePtr& t, std::vector<int64_t>* out) {
    if (t->kind != PickleValue::kTuple) return false;
    for (const PicklePtr& x : t->items) {
      if (x->kind != PickleValue::kInt) return false;
      out->push_back(x->i);
    }
    return true;
  };
  if (root->kind != PickleValue::kCall ||
      root->items[0]->kind != PickleValue::kGlobal ||
      root->items[0]->text != "torch._utils") {
    return bad("something other than a torch._utils rebuild call");
  }
  const std::string& fn = root->items[0]->name;
  const bool v3 = fn == "_rebuild_tensor_v3";
  if (fn != "_rebuild_tensor_v2" && !v3) return bad(fn);
  const PicklePtr& args = root->items[1];
  if (args->kind != PickleValue::kTuple ||
      args->items.size() < (v3 ? 7u : 4u)) {
    return bad("a rebuild call with too few arguments");
  }
  const PicklePtr& pid = args->items[0];
  if (pid->kind != PickleValue::kPersistentId ||
      pid->items[0]->kind != PickleValue::kTuple ||
      pid->items[0]->items.size() != 5) {
    return bad("a storage that is not a persistent id");
  }
  const auto& pv = pid->items[0]->items;
  if (pv[0]->kind != PickleValue::kStr || pv[0]->text != "storage" ||
      pv[1]->kind != PickleValue::kGlobal || pv[1]->text != "torch" ||
      pv[2]->kind != PickleValue::kStr || pv[4]->kind != PickleValue::kInt ||
      pv[4]->i < 0) {
    return bad("a malformed storage id");
  }
  PickledTensor t;
  t.key = pv[2]->text;
  if (pv[1]->name == "UntypedStorage") {
    const PicklePtr& dt = args->items[6];
    if (!v3 || dt->kind != PickleValue::kGlobal || dt->text != "torch") {
      return bad("an UntypedStorage without a dtype");
    }
    t.dtype = FindTorchDtype(dt->name);
    if (!t.dtype) return bad(absl::StrCat("unknown dtype torch.", dt->name));
    t.storage_bytes = static_cast<uint64_t>(pv[4]->i);
  } else {
    for (const TorchDtype& d : kTorchDtypes) {
      if (!d.legacy_storage.empty() && d.legacy_storage == pv[1]->name) {
        t.dtype = &d;
      }
    }
    if (!t.dtype) return bad(absl::StrCat("unknown storage torch.", pv[1]->name));
    uint64_t n = static_cast<uint64_t>(pv[4]->i);
    if (n > limits::kMaxElementCount) return bad("a huge storage");
    t.storage_bytes = n * t.dtype->element_bytes;
  }
  if (args->items[1]->kind != PickleValue::kInt || args->items[1]->i < 0 ||
      !ints(args->items[2], &t.shape) || !ints(args->items[3], &t.stride) ||
      t.shape.size() != t.stride.size()) {
    return bad("a malformed offset, size or stride");
  }
  t.offset = args->items[1]->i;
  return t;
}

absl::Status Bad(const RegularFile& f, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(f.path(), ": ", Sv(what)));
}

}  // namespace

absl::StatusOr<PtTensor> ReadPtTensor(const RegularFile& f) {
  absl::StatusOr<ZipDirectory> dir = ReadZipDirectory(f);
  if (!dir.ok()) return dir.status();
  // "<archive>/data.pkl", with no other '/'.
  std::string prefix;
  for (const auto& [name, e] : *dir) {
    if (name.size() >= 9 && name.substr(name.size() - 9) == "/data.pkl" &&
        name.find('/') == name.size() - 9) {
      prefix = name.substr(0, name.size() - 8);
    }
  }
  if (prefix.empty()) return Bad(f, "no <archive>/data.pkl entry");
  const ZipEntry& pe = dir->at(prefix + "data.pkl");
  if (pe.size > limits::kMaxPickleBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(f.path(), ": data.pkl of ", pe.size, " bytes (limit ",
                     limits::kMaxPickleBytes, ")"));
  }
  absl::StatusOr<uint64_t> po = ZipEntryDataOffset(f, prefix + "data.pkl", pe);
  if (!po.ok()) return po.status();
  std::string pkl;
  if (auto s = f.ReadAt(*po, pe.size, &pkl); !s.ok()) return s;
  const std::string where = f.path() + " data.pkl";
  absl::StatusOr<PicklePtr> root = Unpickle(pkl, where);
  if (!root.ok()) return root.status();
  absl::StatusOr<PickledTensor> p = InterpretTensorPickle(*root, where);
  if (!p.ok()) return p.status();

  PtTensor t;
  t.dtype = p->dtype;
  t.shape = p->shape;
  t.stride = p->stride;
  if (t.shape.size() > limits::kMaxRank) {
    return absl::ResourceExhaustedError(absl::StrCat(
        where, ": rank ", t.shape.size(), " (limit ", limits::kMaxRank, ")"));
  }
  uint64_t n = 1;
  for (int64_t d : t.shape) {
    if (d < 0) return Bad(f, absl::StrCat("a negative dimension ", d));
    if (d != 0 && n > limits::kMaxElementCount / static_cast<uint64_t>(d)) {
      return absl::ResourceExhaustedError(absl::StrCat(
          f.path(), ": shape (", absl::StrJoin(t.shape, ", "), ") holds more than ",
          limits::kMaxElementCount, " elements"));
    }
    n *= static_cast<uint64_t>(d);
  }
  t.element_count = n;
  t.byte_size = n * t.dtype->element_bytes;
  // C-contiguous. With more than one element no dim is 0, so the running
  // product stays within kMaxElementCount.
  if (n > 1) {
    int64_t contiguous = 1;
    for (size_t k = t.shape.size(); k-- > 0;) {
      if (t.shape[k] != 1 && t.stride[k] != contiguous) {
        return absl::UnimplementedError(
            absl::StrCat(f.path(), ": non-contiguous tensor (stride (",
                         absl::StrJoin(t.stride, ", "), "))"));
      }
      contiguous *= t.shape[k];
    }
  }
  auto de = dir->find(prefix + "data/" + p->key);
  if (de == dir->end()) {
    return Bad(f, absl::StrCat("no storage record data/", p->key));
  }
  if (de->second.size != p->storage_bytes) {
    return Bad(f, absl::StrCat("storage record holds ", de->second.size,
                               " bytes; the pickle declares ",
                               p->storage_bytes));
  }
  // Compare in elements first: offset * element_bytes may not fit 64 bits.
  if (static_cast<uint64_t>(p->offset) >
      p->storage_bytes / t.dtype->element_bytes) {
    return Bad(f, absl::StrCat("storage offset of ", p->offset,
                               " elements is past the storage's ",
                               p->storage_bytes, " bytes"));
  }
  uint64_t off = static_cast<uint64_t>(p->offset) * t.dtype->element_bytes;
  if (t.byte_size > p->storage_bytes - off) {
    return Bad(f, absl::StrCat("tensor of ", t.byte_size,
                               " bytes at storage offset ", off,
                               " exceeds the storage's ", p->storage_bytes));
  }
  absl::StatusOr<uint64_t> data = ZipEntryDataOffset(f, de->first, de->second);
  if (!data.ok()) return data.status();
  t.data_offset = *data + off;
  return t;
}

}  // namespace decomposed::capture
