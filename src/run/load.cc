// LoadProgram and the input readers (run/run.h).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/analysis/snapshot_set.h"
#include "decomposed/analysis/tensor_set.h"
#include "decomposed/eval/literal.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/run/run.h"
#include "decomposed/snapshot/module_file.h"
#include "decomposed/snapshot/reader.h"
#include "decomposed/status.h"
#include "decomposed/xla/array_buffer.h"
#include "decomposed/xla/literal_decoder.h"
#include "decomposed/xla/literal_plan.h"
#include "run_internal.h"

namespace decomposed::run {
namespace {

namespace fs = std::filesystem;

// Types whose bytes Array::Copy normalises (PRED to 0/1, sub-byte integers
// extended from their low bits): never borrowed, always copied through it.
bool NeedsNormalising(PrimitiveType t) {
  return t == PrimitiveType::kPred || t == PrimitiveType::kS4 ||
         t == PrimitiveType::kU4 || t == PrimitiveType::kS2 ||
         t == PrimitiveType::kU2;
}

uint64_t EffectiveMax(uint64_t max_bytes) {
  return max_bytes == 0 ? PhysicalMemoryBytes() : max_bytes;
}

// A region of a file, mapped read-only; unmapped with the last array.
struct Mapping {
  void* base = MAP_FAILED;
  size_t length = 0;
  ~Mapping() {
    if (base != MAP_FAILED) ::munmap(base, length);
  }
};

// `bytes` bytes at `offset` of `fd` as an array: mapped without a copy when
// the data is aligned to its element size, else read with pread.
absl::StatusOr<eval::Array> ArrayOfRun(int fd, uint64_t offset, uint64_t bytes,
                                       PrimitiveType type,
                                       std::vector<int64_t> dims,
                                       uint64_t max_bytes, bool* borrowed,
                                       const std::string& what) {
  const size_t width = Info(type).element_bytes;
  *borrowed = false;
  if (bytes > 0 && width > 0 && offset % width == 0 && !NeedsNormalising(type)) {
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGE_SIZE));
    const uint64_t start = offset / page * page;
    auto m = std::make_shared<Mapping>();
    m->length = static_cast<size_t>(offset - start + bytes);
    m->base = ::mmap(nullptr, m->length, PROT_READ, MAP_SHARED, fd,
                     static_cast<off_t>(start));
    if (m->base != MAP_FAILED) {
      const char* data = static_cast<const char*>(m->base) + (offset - start);
      absl::StatusOr<eval::Array> a =
          eval::Array::Borrow(type, std::move(dims), data, bytes, m);
      if (a.ok()) *borrowed = true;
      return a;
    }
  }
  absl::StatusOr<eval::Array> a = eval::Array::Allocate(type, dims, max_bytes);
  if (!a.ok()) return Prefix(a.status(), what);
  char* out = a->mutable_data();
  uint64_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(fd, out + done, static_cast<size_t>(bytes - done),
                              static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(errno, absl::StrCat("reading ", what));
    if (n == 0) {
      return absl::OutOfRangeError(absl::StrCat(
          what, ": expected ", bytes, " bytes at byte ", offset, ", found ",
          done, " before the end of the file"));
    }
    done += static_cast<uint64_t>(n);
  }
  if (NeedsNormalising(type)) return eval::Array::Copy(type, a->dims(), a->bytes());
  return a;
}

// The kind OpenTensorSet would pick for `path` (only to route snapshots to
// the snapshot reader below).
bool IsSnapshotSide(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return false;
  return !absl::EndsWith(path, ".npy") && !absl::EndsWith(path, ".pt") &&
         !absl::EndsWith(path, ".npz");
}

std::string ShapeText(const xla::ShapeProto& s) {
  if (s.element_type() == static_cast<int>(PrimitiveType::kTuple)) {
    std::vector<std::string> parts;
    for (const xla::ShapeProto& e : s.tuple_shapes()) parts.push_back(ShapeText(e));
    return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
  }
  const PrimitiveTypeInfo* t = FindPrimitiveType(s.element_type());
  return absl::StrCat(t ? std::string(t->name) : absl::StrCat("<", s.element_type(), ">"),
                      "[", absl::StrJoin(s.dimensions(), ","), "]");
}

// Empty when `v` fits `shape` (exact element type, dims), else what it is.
std::string Misfit(const eval::Value& v, const xla::ShapeProto& shape) {
  const bool tuple = shape.element_type() == static_cast<int>(PrimitiveType::kTuple);
  if (tuple != v.is_tuple()) return v.ShapeString();
  if (tuple) {
    if (v.element_count() != static_cast<size_t>(shape.tuple_shapes_size())) {
      return v.ShapeString();
    }
    for (size_t i = 0; i < v.element_count(); ++i) {
      if (!Misfit(v.element(i), shape.tuple_shapes(static_cast<int>(i))).empty()) {
        return v.ShapeString();
      }
    }
    return "";
  }
  const eval::Array& a = v.array();
  const bool dims_equal =
      a.dims().size() == static_cast<size_t>(shape.dimensions_size()) &&
      std::equal(a.dims().begin(), a.dims().end(), shape.dimensions().begin());
  if (static_cast<int>(a.type()) != shape.element_type() || !dims_equal) {
    return a.ShapeString();
  }
  return "";
}

// --- Snapshots ----------------------------------------------------------------------

struct LoadedSnapshot {
  std::shared_ptr<SnapshotLists> lists;
  std::optional<xla::HloModuleProto> module;
  std::vector<eval::Value> inputs;
  std::vector<std::string> labels;
  size_t borrowed = 0;
};

// One input literal of a mapped snapshot as a value.
absl::StatusOr<eval::Value> LiteralValue(MmapSource& src, const LiteralRef& ref,
                                         const std::shared_ptr<const void>& keep,
                                         uint64_t max_bytes, bool* borrowed) {
  *borrowed = false;
  const Frame frame = ref.frame();
  const std::span<const ByteRange> ranges(ref.ranges);
  absl::StatusOr<LiteralPlan> plan = PlanLiteral(src, ranges, frame);
  if (!plan.ok()) return plan.status();
  if (plan->has_shape && plan->shape.is_tuple()) {
    // A tuple literal: parsed whole (it must be under protobuf's limit).
    std::string bytes;
    for (const ByteRange& r : ref.ranges) {
      if (!src.Seek(r.offset)) return src.status();
      std::optional<std::string_view> v = src.ReadView(static_cast<size_t>(r.length));
      if (!v) return src.status();
      bytes.append(*v);
    }
    xla::LiteralProto lit;
    if (!lit.ParseFromString(bytes)) {
      return FrameError(absl::StatusCode::kInvalidArgument, frame,
                        ref.ranges.empty() ? 0 : ref.ranges[0].offset,
                        "a LiteralProto protobuf can parse", "bytes it rejects");
    }
    absl::StatusOr<eval::Value> v = eval::ValueFromLiteral(lit, max_bytes);
    if (!v.ok()) return Prefix(v.status(), frame.str());
    return v;
  }
  const uint64_t body_offset = ref.ranges.empty() ? 0 : ref.ranges[0].offset;
  if (absl::Status s = ResolveArrayPlan(*plan, frame, body_offset); !s.ok()) return s;
  const PrimitiveType type = plan->type->type;
  std::vector<int64_t> dims = plan->shape.dimensions;
  if (std::optional<ByteRange> run = VerbatimRowMajorRun(*plan)) {
    if (run->length == 0) return eval::Value(*eval::Array::Allocate(type, dims));
    const size_t width = plan->type->element_bytes;
    if (run->offset % width == 0 && !NeedsNormalising(type)) {
      if (!src.Seek(run->offset)) return src.status();
      std::optional<std::string_view> view = src.ReadView(static_cast<size_t>(run->length));
      if (!view) return src.status();
      // The mapping lives as long as the file, the file as long as `keep`.
      absl::StatusOr<eval::Array> a = eval::Array::Borrow(
          type, std::move(dims), view->data(), view->size(), keep);
      if (!a.ok()) return a.status();
      *borrowed = true;
      return eval::Value(*std::move(a));
    }
  }
  // A varint literal's count is only proven as it decodes: each value takes
  // at least one byte on the wire, so never allocate more than the field's
  // bytes allow (nothing is allocated from a declared size alone).
  const LiteralFieldStats& f = plan->fields[plan->type->proto_field];
  if (IsVarintEncoding(plan->type->encoding) && plan->element_count > f.bytes) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame, body_offset,
                      absl::StrCat(plan->element_count, " values of ",
                                   Sv(plan->type->name)),
                      absl::StrCat("at most ", f.bytes, " in the field's ",
                                   f.bytes, " bytes"));
  }
  absl::StatusOr<eval::Array> a = eval::Array::Allocate(type, dims, max_bytes);
  if (!a.ok()) return Prefix(a.status(), frame.str());
  ArrayBuffer buffer(std::span<char>(a->mutable_data(), static_cast<size_t>(a->byte_size())));
  if (absl::Status s = DecodeLiteral(src, ranges, frame, buffer); !s.ok()) return s;
  if (buffer.size() != a->byte_size()) {
    return absl::InternalError(absl::StrCat(frame.str(), ": decoded ", buffer.size(),
                                            " bytes, planned ", a->byte_size()));
  }
  if (NeedsNormalising(type)) {
    absl::StatusOr<eval::Array> c = eval::Array::Copy(type, a->dims(), a->bytes());
    if (!c.ok()) return c.status();
    return eval::Value(*std::move(c));
  }
  return eval::Value(*std::move(a));
}

// Drops the pages of `ranges` of the mapping at `base` from the process
// (madvise MADV_DONTNEED on a read-only file mapping: a later access reads
// the page cache again). Only whole pages inside the ranges.
void ReleaseMapped(const char* base, const std::vector<ByteRange>& ranges) {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGE_SIZE));
  for (const ByteRange& r : ranges) {
    const uint64_t from = (r.offset + page - 1) / page * page;
    const uint64_t to = (r.offset + r.length) / page * page;
    if (to > from) {
      ::madvise(const_cast<char*>(base) + from, static_cast<size_t>(to - from), MADV_DONTNEED);
    }
  }
}

// Walks the snapshot at `path` once: its module (when asked), the literal
// lists, and (when asked) its inputs as values.
absl::StatusOr<LoadedSnapshot> LoadSnapshot(const std::string& path, SnapshotType type,
                                            bool want_module, bool want_inputs,
                                            uint64_t max_bytes) {
  SnapshotOpenOptions open;
  open.type = type;
  open.access = SnapshotAccess::kMapped;
  open.spill_streams = true;
  absl::StatusOr<std::unique_ptr<SnapshotFile>> opened = SnapshotFile::Open(path, open);
  if (!opened.ok()) return opened.status();
  std::shared_ptr<SnapshotFile> file = std::move(*opened);
  LoadedSnapshot out;
  out.lists = std::make_shared<SnapshotLists>();
  out.lists->path = path;
  out.lists->form = file->type() == SnapshotType::kDecomposed ? "decomposed file"
                                                              : "classic snapshot";
  absl::Status s = file->Read({}, [&](auto& reader) -> absl::Status {
    absl::StatusOr<const SnapshotHeader*> h = reader.ReadHeader();
    if (!h.ok()) return h.status();
    if (want_module) {
      absl::StatusOr<const xla::HloModuleProto*> m = reader.Module();
      if (!m.ok()) return m.status();
      if (*m == nullptr) {
        return absl::InvalidArgumentError(
            "hlo_module: expected a module in the snapshot (HloSnapshot.hlo."
            "hlo_module), found none: a snapshot of arguments only; give the "
            "module with --module");
      }
      out.module = **m;
    }
    SnapshotLiteral lit;
    for (;;) {
      absl::StatusOr<bool> more = reader.Next(&lit);
      if (!more.ok()) return more.status();
      if (!*more) break;
      const bool input = lit.role == LiteralRole::kInput;
      (input ? out.lists->inputs : out.lists->outputs)
          .push_back({LiteralRoleName(lit.role), lit.index, std::move(lit.ranges)});
    }
    return reader.Finish();
  });
  if (!s.ok()) return file->Annotate(s);
  out.lists->file = file;
  if (want_inputs) {
    MmapSource* src = file->mapped();
    if (src == nullptr) return absl::InternalError(absl::StrCat(path, ": not mapped"));
    const std::shared_ptr<const void> keep = out.lists;
    src->Seek(0);
    const char* base = src->cursor();
    for (const LiteralRef& ref : out.lists->inputs) {
      bool borrowed = false;
      absl::StatusOr<eval::Value> v = LiteralValue(*src, ref, keep, max_bytes, &borrowed);
      if (!v.ok()) return WithFile(v.status(), path);
      // A decoded literal's mapped pages are not needed any more: dropped
      // from this process (the page cache keeps them), so that an input
      // costs its decoded copy alone, not the copy and the mapping.
      if (!borrowed) ReleaseMapped(base, ref.ranges);
      out.inputs.push_back(*std::move(v));
      out.labels.push_back(absl::StrCat("input ", ref.index, " of ", path));
      out.borrowed += borrowed ? 1 : 0;
    }
  }
  return out;
}

std::function<absl::StatusOr<std::unique_ptr<TensorSet>>()> RecordedOutputsOf(
    std::shared_ptr<const SnapshotLists> lists) {
  if (lists->outputs.empty()) return nullptr;
  return [lists]() -> absl::StatusOr<std::unique_ptr<TensorSet>> {
    absl::StatusOr<std::unique_ptr<FdSource>> src = lists->file->NewFdSource();
    if (!src.ok()) return src.status();
    return std::unique_ptr<TensorSet>(
        std::make_unique<LiteralListSet>(lists, /*inputs=*/false, *std::move(src)));
  };
}

}  // namespace

uint64_t PhysicalMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page)
                               : eval::Array::kNoLimit;
}

absl::StatusOr<std::vector<eval::Array>> ReadTensorSetArrays(TensorSet& set,
                                                             uint64_t max_bytes,
                                                             size_t* borrowed) {
  std::vector<eval::Array> out;
  for (size_t i = 0; i < set.size(); ++i) {
    absl::StatusOr<TensorInfo> info = set.Describe(i);
    if (!info.ok()) return info.status();
    const std::string what = info->label.empty() ? absl::StrCat("tensor ", i) : info->label;
    absl::StatusOr<std::optional<TensorRun>> run = set.Run(i);
    if (!run.ok()) return run.status();
    if (*run) {
      bool b = false;
      absl::StatusOr<eval::Array> a =
          ArrayOfRun((*run)->fd.get(), (*run)->offset, (*run)->bytes, info->type,
                     info->dims, max_bytes, &b, what);
      if (!a.ok()) return a.status();
      if (borrowed && b) ++*borrowed;
      out.push_back(*std::move(a));
      continue;
    }
    absl::StatusOr<eval::Array> a = eval::Array::Allocate(info->type, info->dims, max_bytes);
    if (!a.ok()) return Prefix(a.status(), what);
    char* p = a->mutable_data();
    const uint64_t size = a->byte_size();
    uint64_t done = 0;
    absl::Status s = set.Stream(i, [&](std::string_view chunk) -> absl::Status {
      if (chunk.size() > size - done) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": expected ", size, " bytes of elements, found more"));
      }
      std::memcpy(p + done, chunk.data(), chunk.size());
      done += chunk.size();
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    if (done != size) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": expected ", size, " bytes of elements, found ", done));
    }
    if (NeedsNormalising(info->type)) {
      absl::StatusOr<eval::Array> c = eval::Array::Copy(info->type, a->dims(), a->bytes());
      if (!c.ok()) return c.status();
      a = *std::move(c);
    }
    out.push_back(*std::move(a));
  }
  return out;
}

absl::StatusOr<eval::Array> ReadNpyArray(const std::string& path,
                                         std::optional<PrimitiveType> dtype) {
  TensorSetOptions o;
  o.kind = TensorSetKind::kNpy;
  o.dtype = dtype;
  absl::StatusOr<std::unique_ptr<TensorSet>> set = OpenTensorSet(path, o);
  if (!set.ok()) return set.status();
  absl::StatusOr<std::vector<eval::Array>> a = ReadTensorSetArrays(**set);
  if (!a.ok()) return a.status();
  if (a->size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": expected one array"));
  }
  return std::move((*a)[0]);
}

absl::StatusOr<std::pair<std::string, std::string>> ParseSubstitute(std::string_view spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == spec.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--substitute: expected NAME=FILE.npy, found '", Sv(spec), "'"));
  }
  return std::make_pair(std::string(spec.substr(0, eq)), std::string(spec.substr(eq + 1)));
}

absl::Status FitInputs(const hlo::HloModule& module, std::vector<eval::Value>* inputs,
                       const std::vector<std::string>& labels) {
  const hlo::HloComputation* entry = module.entry();
  if (entry == nullptr) return absl::InvalidArgumentError("the module has no entry computation");
  const auto params = entry->parameters();
  auto label = [&](size_t i) {
    return i < labels.size() ? absl::StrCat(" (", labels[i], ")") : std::string();
  };
  auto param_names = [&]() {
    std::vector<std::string> names;
    for (const hlo::HloInstruction* p : params) names.push_back(p ? p->name() : "?");
    return absl::StrJoin(names, ", ");
  };
  // The classic mapping gives a single tuple parameter's elements one by
  // one: they make that tuple again.
  if (params.size() == 1 && params[0] != nullptr &&
      params[0]->shape().element_type() == static_cast<int>(PrimitiveType::kTuple) &&
      inputs->size() == static_cast<size_t>(params[0]->shape().tuple_shapes_size()) &&
      !(inputs->size() == 1 && (*inputs)[0].is_tuple())) {
    const xla::ShapeProto& tuple = params[0]->shape();
    for (size_t i = 0; i < inputs->size(); ++i) {
      const std::string m = Misfit((*inputs)[i], tuple.tuple_shapes(static_cast<int>(i)));
      if (!m.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", i, label(i), ": expected ",
            ShapeText(tuple.tuple_shapes(static_cast<int>(i))), " for element ", i,
            " of parameter 0 \"", params[0]->name(), "\" of computation \"",
            entry->name(), "\", found ", m));
      }
    }
    std::vector<eval::Value> elements = std::move(*inputs);
    inputs->clear();
    inputs->push_back(eval::Value::Tuple(std::move(elements)));
    return absl::OkStatus();
  }
  if (inputs->size() != params.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected ", params.size(), params.size() == 1 ? " input" : " inputs",
        " for computation \"", entry->name(), "\" (", param_names(), "), found ",
        inputs->size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "computation \"", entry->name(), "\": expected a parameter numbered ", i,
          ", found none"));
    }
    const std::string m = Misfit((*inputs)[i], params[i]->shape());
    if (!m.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", i, label(i), ": expected ", ShapeText(params[i]->shape()),
          " for parameter ", i, " \"", params[i]->name(), "\" of computation \"",
          entry->name(), "\", found ", m));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<RunProgram> LoadProgram(const RunSource& source, const LoadOptions& options) {
  const uint64_t max_bytes = EffectiveMax(options.max_array_bytes);
  RunProgram p;
  xla::HloModuleProto module;
  bool have_module = false;
  if (source.module_proto) {
    module = *source.module_proto;
    have_module = true;
    p.module_source = "a module in memory";
  } else if (!source.module.empty()) {
    absl::StatusOr<ModuleFile> m = ReadModuleFile(source.module);
    if (!m.ok()) return m.status();
    module = std::move(m->module);
    have_module = true;
    p.module_source = absl::StrCat(Sv(ModuleFileFormName(m->form)), " ", source.module);
  }
  const bool inputs_elsewhere = source.input_values.has_value() || !source.input_sides.empty();
  if (!source.snapshot.empty()) {
    absl::StatusOr<LoadedSnapshot> l =
        LoadSnapshot(source.snapshot, options.snapshot_type, !have_module,
                     !inputs_elsewhere, max_bytes);
    if (!l.ok()) return l.status();
    if (!have_module) {
      module = std::move(*l->module);
      have_module = true;
      p.module_source = absl::StrCat(
          l->lists->form == "decomposed file" ? "decomposed snapshot" : "classic snapshot",
          " ", source.snapshot);
    }
    if (!inputs_elsewhere) {
      p.inputs = std::move(l->inputs);
      p.input_labels = std::move(l->labels);
      p.borrowed_inputs = l->borrowed;
    }
    p.recorded_outputs = RecordedOutputsOf(l->lists);
  }
  if (!have_module) {
    return absl::InvalidArgumentError("no module: name a snapshot or a module file");
  }
  if (source.input_values) {
    p.inputs = *source.input_values;
    for (size_t i = 0; i < p.inputs.size(); ++i) {
      p.input_labels.push_back(absl::StrCat("input ", i));
    }
  } else if (!source.input_sides.empty()) {
    for (const std::string& side : source.input_sides) {
      if (IsSnapshotSide(side)) {
        absl::StatusOr<LoadedSnapshot> l =
            LoadSnapshot(side, options.snapshot_type, false, true, max_bytes);
        if (!l.ok()) return l.status();
          for (size_t i = 0; i < l->inputs.size(); ++i) {
          p.inputs.push_back(std::move(l->inputs[i]));
          p.input_labels.push_back(std::move(l->labels[i]));
        }
        p.borrowed_inputs += l->borrowed;
        continue;
      }
      TensorSetOptions so;
      so.inputs = true;
      // --dtype INDEX=TYPE counts the inputs across the sides (INDEX is
      // the parameter's number): this side's tensor k is input base + k.
      const size_t base = p.inputs.size();
      for (const auto& [index, type] : options.dtypes) {
        if (index >= base) so.dtypes[index - base] = type;
      }
      so.dtype = options.dtype;
      so.dtype_void_only = true;  // TYPE for the void files among the sides
      so.snapshot_type = options.snapshot_type;
      absl::StatusOr<std::unique_ptr<TensorSet>> set = OpenTensorSet(side, so);
      if (!set.ok()) return set.status();
      size_t borrowed = 0;
      absl::StatusOr<std::vector<eval::Array>> arrays =
          ReadTensorSetArrays(**set, max_bytes, &borrowed);
      if (!arrays.ok()) return arrays.status();
      for (size_t i = 0; i < arrays->size(); ++i) {
        absl::StatusOr<TensorInfo> info = (*set)->Describe(i);
        p.input_labels.push_back(info.ok() && !info->label.empty()
                                     ? info->label
                                     : absl::StrCat("tensor ", i, " of ", side));
        p.inputs.push_back(eval::Value(std::move((*arrays)[i])));
      }
      p.borrowed_inputs += borrowed;
    }
  } else if (source.snapshot.empty()) {
    return absl::InvalidArgumentError(
        "no inputs: name a snapshot or input sides (--inputs)");
  }
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> m = hlo::HloModule::Create(std::move(module));
  if (!m.ok()) return Prefix(m.status(), p.module_source);
  p.module = std::shared_ptr<const hlo::HloModule>(std::move(*m));
  if (absl::Status s = FitInputs(*p.module, &p.inputs, p.input_labels); !s.ok()) return s;
  return p;
}

}  // namespace decomposed::run
