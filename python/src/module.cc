// decomposed._decomposed: the compiled half of the Python package
// (python/decomposed/__init__.py is the other half and the public face).
//
// What lives here, and why in C++:
//   * Mapping: a read-only mmap of a whole file, shared (std::shared_ptr) by
//     the File that opened it and by every NumPy view into it. A view's
//     `base` is the Python object holding that shared_ptr, so the mapping
//     lives as long as any view does, File.close() or not.
//   * File / Literal / LiteralList: decomposed.open() opens and maps the
//     file once (SnapshotFile), walks it once with the library's snapshot
//     reader (SnapshotReader, both forms) and plans every literal (PlanLiteral +
//     ResolveArrayPlan: type, dims, layout, byte size; no array data read).
//     Literal.numpy() is then either a zero-copy view of the mapped payload
//     or a decode (DecodeLiteral into an ArrayBuffer over the new array's
//     memory). 20,000 literals must iterate in well under a second, so the
//     per-literal path has no Python code in it.
//   * write(): PackToFile over ArrayLiteral literals that point at the callers'
//     buffers (the same encoder `decomposed pack` uses for .npy inputs).
//   * FormatError: a ValueError subclass with .code, .frame and .offset,
//     raised for every malformed-input status; OS errors become OSError
//     (.errno, .filename). Both read the status's payloads (status.h), never
//     its text.
//
// The GIL is released around every walk, decode and write. A File is
// immutable after open() except for close(), which only drops its reference
// to the mapping (under a mutex), so several threads may read one File.
#include <fcntl.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/analysis/report.h"
#include "decomposed/analysis/tensor_set.h"
#include "decomposed/capture/bundle_reader.h"
#include "decomposed/capture/capturer.h"
#include "decomposed/capture/config.h"
#include "decomposed/container/framing.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/npy/json_text.h"
#include "decomposed/npy/npy_reader.h"
#include "decomposed/proto/hlo.pb.h"
#include "decomposed/snapshot/classic.h"
#include "decomposed/snapshot/convert.h"
#include "decomposed/snapshot/inspect.h"
#include "decomposed/snapshot/module_file.h"
#include "decomposed/snapshot/snapshot_type.h"
#include "decomposed/snapshot/producer.h"
#include "decomposed/snapshot/reader.h"
#include "decomposed/snapshot/unpack.h"
#include "decomposed/snapshot/verify.h"
#include "decomposed/status.h"
#include "decomposed/xla/array_buffer.h"
#include "decomposed/xla/element_value.h"
#include "decomposed/xla/literal_decoder.h"
#include "decomposed/xla/literal_encoder.h"
#include "decomposed/xla/literal_plan.h"
#include "decomposed/xla/primitive_type.h"
#include "decomposed/xla/shape.h"
#include "facts.h"
#include "hlo.h"
#include "run.h"
#include "three_way.h"

namespace py = pybind11;

namespace decomposed::python {
namespace {

// --- Errors --------------------------------------------------------------------

// Thrown by C++ code below; translated to FormatError or OSError.
struct StatusError {
  absl::Status status;
  std::string path;  // for OSError's filename, when known
};

[[noreturn]] void Throw(absl::Status s, std::string path = "") {
  throw StatusError{std::move(s), std::move(path)};
}

template <class T>
T Take(absl::StatusOr<T> v, const std::string& path = "") {
  if (!v.ok()) Throw(v.status(), path);
  return *std::move(v);
}
void Check(const absl::Status& s, const std::string& path = "") {
  if (!s.ok()) Throw(s, path);
}

PyObject* g_format_error = nullptr;  // decomposed.FormatError (owned)

// Whether a status describes the bytes (FormatError) rather than the system
// (OSError). status.h: malformed bytes are kInvalidArgument, truncation
// kOutOfRange, a named limit kResourceExhausted, valid input we cannot
// convert kUnimplemented. An operating-system error carries its errno as a
// payload (ErrnoError), whatever code errno maps to (ENOSPC is
// kResourceExhausted too): that payload, not the message, tells them apart.
bool IsFormatError(const absl::Status& s) {
  if (ErrnoOf(s)) return false;
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kUnimplemented:
      return true;
    default:
      return false;
  }
}

// The errno of an OS error: its payload, else one for the code.
int ErrnoFor(const absl::Status& s) {
  if (std::optional<int> e = ErrnoOf(s)) return *e;
  switch (s.code()) {
    case absl::StatusCode::kNotFound: return ENOENT;
    case absl::StatusCode::kPermissionDenied: return EACCES;
    case absl::StatusCode::kAlreadyExists: return EEXIST;
    case absl::StatusCode::kResourceExhausted: return ENOSPC;
    default: return EIO;
  }
}

void RaiseStatus(const StatusError& e) {
  const absl::Status& s = e.status;
  const std::string msg(s.message());
  if (IsFormatError(s)) {
    py::object cls = py::reinterpret_borrow<py::object>(g_format_error);
    py::object err = cls(msg);
    std::optional<std::string> frame = FrameOf(s);
    std::optional<uint64_t> offset = OffsetOf(s);
    err.attr("code") = py::str(absl::StatusCodeToString(s.code()));
    err.attr("frame") =
        frame ? py::object(py::str(*frame)) : py::object(py::none());
    err.attr("offset") =
        offset ? py::object(py::int_(*offset)) : py::object(py::none());
    PyErr_SetObject(g_format_error, err.ptr());
    return;
  }
  // OSError(errno, strerror, filename): "[Errno 2] No such file or
  // directory: 'x.dhs'", the path once, when the status names the file
  // that failed (kPathPayload). Otherwise the message says what failed and
  // names the file itself.
  const int en = ErrnoFor(s);
  const std::optional<std::string> path = PathOf(s);
  py::object os_error = py::reinterpret_borrow<py::object>(PyExc_OSError);
  py::object err = ErrnoOf(s) && path
                       ? os_error(en, std::string(std::strerror(en)), *path)
                       : os_error(en, msg);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(err.ptr())), err.ptr());
}

// --- The mapping ------------------------------------------------------------------

// A read-only map of a whole regular file: the SnapshotFile that opened it
// (its one open) and maps it. Never written through: views are flagged
// read-only, and the pages are PROT_READ.
class Mapping {
 public:
  explicit Mapping(std::unique_ptr<SnapshotFile> file)
      : file_(std::move(file)) {
    MmapSource& src = *file_->mapped();
    src.Seek(0);
    data_ = src.cursor();
    size_ = src.available();
  }
  std::string_view bytes() const { return {data_ ? data_ : "", size_}; }
  const std::string& path() const { return file_->path(); }
  SnapshotFile& file() { return *file_; }

 private:
  std::unique_ptr<SnapshotFile> file_;  // owns the map
  const char* data_ = nullptr;
  size_t size_ = 0;
};

// --- Literals ---------------------------------------------------------------------

enum class Kind { kDecomposed, kClassic };

// What open() learned about one literal: enough to describe it and to
// decode it, without the plan's per-field tables (20,000 literals).
struct LiteralMeta {
  std::vector<ByteRange> ranges;  // the LiteralProto (several: merged)
  std::string role;               // "input" / "output": error frames
  int64_t index = 0;
  const PrimitiveTypeInfo* type = nullptr;
  std::vector<int64_t> dims;
  std::vector<int64_t> minor_to_major;
  uint64_t element_count = 0;
  uint64_t nbytes = 0;
  // File offset of a payload that is the array as is (fixed width, little
  // endian, row-major, in one record); -1: decode.
  int64_t view_offset = -1;
  // Bytes of data the varint field really holds (bounds the allocation).
  uint64_t wire_data_bytes = 0;
};

std::string LowerName(const PrimitiveTypeInfo& t) {
  return absl::AsciiStrToLower(std::string(t.name));
}

// Plans a literal: type, dims, layout, size, and whether it can be viewed.
LiteralMeta PlanMeta(std::string_view file, std::vector<ByteRange> ranges,
                     std::string role, int64_t index) {
  LiteralMeta m;
  m.ranges = std::move(ranges);
  m.role = std::move(role);
  m.index = index;
  const Frame frame{m.role, m.index, "body"};
  MemorySource src(file);
  const uint64_t body_offset = m.ranges.empty() ? 0 : m.ranges[0].offset;
  absl::StatusOr<LiteralPlan> planned =
      PlanLiteral(src, std::span<const ByteRange>(m.ranges), frame);
  Check(planned.status());
  LiteralPlan& plan = *planned;
  Check(ResolveArrayPlan(plan, frame, body_offset));
  m.type = plan.type;
  m.dims = plan.shape.dimensions;
  m.minor_to_major = plan.shape.layout.minor_to_major;
  m.element_count = plan.element_count;
  m.nbytes = plan.data_bytes;
  const LiteralFieldStats& f = plan.fields[plan.type->proto_field];
  m.wire_data_bytes = f.bytes;
  const DataEncoding enc = plan.type->encoding;
  const bool row_major = plan.order == PhysicalOrder::kRowMajor;
  if (std::endian::native == std::endian::little && row_major &&
      plan.data_bytes > 0) {
    if (enc == DataEncoding::kBytes && f.last.length == plan.data_bytes) {
      m.view_offset = static_cast<int64_t>(f.last.offset);
    } else if ((enc == DataEncoding::kFixed32 ||
                enc == DataEncoding::kFixed64) &&
               f.records == 1 && f.len_records == 1 && !f.misaligned &&
               f.first.length == plan.data_bytes) {
      m.view_offset = static_cast<int64_t>(f.first.offset);
    }
  }
  return m;
}

// NumPy dtypes for the element types, set once by __init__.py
// (_set_dtypes): the storage dtype of every XLA type, using ml_dtypes where
// importable and unsigned bit patterns otherwise.
// Leaked on purpose: a static py::dict would be released after the
// interpreter is finalised.
PyObject* g_dtypes = nullptr;

py::dtype StorageDtype(const PrimitiveTypeInfo& t) {
  py::str key(LowerName(t));
  py::dict dtypes = g_dtypes ? py::reinterpret_borrow<py::dict>(g_dtypes)
                             : py::dict();
  if (!dtypes.contains(key)) {
    Throw(absl::UnimplementedError(absl::StrCat(
        Sv(t.name), ": no NumPy dtype for this element type")));
  }
  return py::reinterpret_borrow<py::dtype>(dtypes[key]);
}

// Strides of a C-order array.
std::vector<py::ssize_t> CStrides(const std::vector<int64_t>& dims,
                                  size_t item) {
  std::vector<py::ssize_t> s(dims.size());
  py::ssize_t acc = static_cast<py::ssize_t>(item);
  for (size_t i = dims.size(); i-- > 0;) {
    s[i] = acc;
    acc *= static_cast<py::ssize_t>(dims[i]);
  }
  return s;
}

void SetReadOnly(py::array& a) {
  py::detail::array_proxy(a.ptr())->flags &=
      ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
}

class FileState;

// One literal of a File. Holds the File's state (not the File object), so
// a Literal taken from a File keeps working as long as the File is open.
class Literal {
 public:
  Literal(std::shared_ptr<FileState> file, const LiteralMeta* meta)
      : file_(std::move(file)), meta_(meta) {}

  std::string dtype() const { return LowerName(*meta_->type); }
  py::tuple shape() const { return py::cast(meta_->dims); }
  py::tuple layout() const { return py::cast(meta_->minor_to_major); }
  uint64_t nbytes() const { return meta_->nbytes; }
  uint64_t offset() const {
    return meta_->ranges.empty() ? 0 : meta_->ranges[0].offset;
  }
  uint64_t size() const { return meta_->element_count; }
  bool is_view() const { return meta_->view_offset >= 0; }
  py::object numpy(bool upcast) const;
  py::bytes tobytes() const;
  std::string repr() const {
    return absl::StrCat("<decomposed.Literal ", Sv(meta_->role), " ",
                        meta_->index, ": ", dtype(), "[",
                        absl::StrJoin(meta_->dims, ","), "]",
                        meta_->minor_to_major.size() > 1
                            ? absl::StrCat("{", absl::StrJoin(
                                                    meta_->minor_to_major, ","),
                                           "}")
                            : "",
                        ">");
  }
  const LiteralMeta& meta() const { return *meta_; }

 private:
  py::array Raw() const;
  std::shared_ptr<FileState> file_;
  const LiteralMeta* meta_;
};

// Everything open() found. Immutable after construction, except that
// close() drops the mapping.
class FileState : public std::enable_shared_from_this<FileState> {
 public:
  std::string path;
  Kind kind = Kind::kDecomposed;
  std::vector<ByteRange> module_ranges;
  std::string module_name, entry, program_shape;
  bool has_program_shape = false;
  std::vector<std::string> parameter_names;
  std::vector<LiteralMeta> inputs;
  std::optional<std::vector<LiteralMeta>> outputs;

  // The mapping, or a ValueError when closed.
  std::shared_ptr<Mapping> map() const {
    std::lock_guard<std::mutex> l(mu_);
    if (!map_) throw py::value_error("I/O operation on closed file");
    return map_;
  }
  void set_map(std::shared_ptr<Mapping> m) {
    std::lock_guard<std::mutex> l(mu_);
    map_ = std::move(m);
  }
  void close() {
    std::shared_ptr<Mapping> drop;
    std::lock_guard<std::mutex> l(mu_);
    drop.swap(map_);
  }
  bool closed() const {
    std::lock_guard<std::mutex> l(mu_);
    return !map_;
  }
  // The Python object owning a shared_ptr to the mapping: the base of views.
  py::object map_object() const { return py::cast(map()); }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<Mapping> map_;
};

// Decodes `m` into `out` (exactly m.nbytes bytes, logical row-major
// order), GIL released.
void DecodeInto(const Mapping& map, const LiteralMeta& m, char* out) {
  py::gil_scoped_release nogil;
  MemorySource src(map.bytes());
  const Frame frame{m.role, m.index, "body"};
  ArrayBuffer buffer(std::span<char>(out, static_cast<size_t>(m.nbytes)));
  // The decoder's work buffer: no bigger than the array (small literals
  // are the common case: 20,000 of them must not each map 1 MiB).
  LiteralDecodeOptions options;
  options.buffer_bytes = static_cast<size_t>(std::clamp<uint64_t>(
      m.nbytes, 4096, options.buffer_bytes));
  Check(DecodeLiteral(src, std::span<const ByteRange>(m.ranges), frame,
                      buffer, options),
        map.path());
  if (buffer.size() != m.nbytes) {
    Throw(absl::InternalError("decoder wrote a different size than planned"));
  }
}

py::array Literal::Raw() const {
  const LiteralMeta& m = *meta_;
  std::shared_ptr<Mapping> map = file_->map();
  py::dtype dt = StorageDtype(*m.type);
  std::vector<py::ssize_t> shape(m.dims.begin(), m.dims.end());
  std::vector<py::ssize_t> strides =
      CStrides(m.dims, static_cast<size_t>(dt.itemsize()));
  if (m.view_offset >= 0) {
    py::array a(dt, shape, strides, map->bytes().data() + m.view_offset,
                py::cast(map));
    SetReadOnly(a);
    return a;
  }
  // A varint literal's count is only proven as it decodes: each value takes
  // at least one byte on the wire, so never allocate more than the field's
  // bytes allow (status.h: nothing is allocated from a declared size alone).
  if (IsVarintEncoding(m.type->encoding) &&
      m.element_count > m.wire_data_bytes) {
    Check(FrameError(absl::StatusCode::kInvalidArgument,
                     Frame{m.role, m.index, "body"}, offset(),
                     absl::StrCat(m.element_count, " values of ",
                                  Sv(m.type->name)),
                     absl::StrCat("at most ", m.wire_data_bytes,
                                  " in the field's ", m.wire_data_bytes,
                                  " bytes")),
          map->path());
  }
  py::array a(dt, shape, strides);
  if (m.nbytes > 0) {
    DecodeInto(*map, m, static_cast<char*>(a.mutable_data()));
  }
  return a;
}

// float32 values of a minifloat / bf16 / f16 array, or the sign-extended
// (s4, s2) / masked (u4, u2) values of a sub-byte integer one, as int8 /
// uint8. Other types are returned as they are.
py::array Upcast(const PrimitiveTypeInfo& t, py::array raw) {
  const PrimitiveType pt = t.type;
  const ElementKind kind = KindOf(pt);
  const int sub = SubByteBits(pt);
  const bool minifloat = kind == ElementKind::kReal &&
                         pt != PrimitiveType::kF32 &&
                         pt != PrimitiveType::kF64;
  if (!minifloat && sub == 0) return raw;
  std::vector<py::ssize_t> shape(raw.shape(), raw.shape() + raw.ndim());
  const size_t n = static_cast<size_t>(raw.size());
  const char* in = static_cast<const char*>(raw.data());
  const size_t eb = t.element_bytes;
  if (minifloat) {
    py::array_t<float> out(shape);
    float* o = out.mutable_data();
    {
      py::gil_scoped_release nogil;
      for (size_t i = 0; i < n; ++i) {
        o[i] = static_cast<float>(RealValue(pt, in + i * eb));
      }
    }
    return out;
  }
  if (kind == ElementKind::kSigned) {
    py::array_t<int8_t> out(shape);
    int8_t* o = out.mutable_data();
    for (size_t i = 0; i < n; ++i) {
      o[i] = static_cast<int8_t>(SignedValue(pt, in + i));
    }
    return out;
  }
  py::array_t<uint8_t> out(shape);
  uint8_t* o = out.mutable_data();
  for (size_t i = 0; i < n; ++i) {
    o[i] = static_cast<uint8_t>(UnsignedValue(pt, in + i));
  }
  return out;
}

py::object Literal::numpy(bool upcast) const {
  py::array raw = Raw();
  if (!upcast) return raw;
  return Upcast(*meta_->type, std::move(raw));
}

py::bytes Literal::tobytes() const {
  const LiteralMeta& m = *meta_;
  std::shared_ptr<Mapping> map = file_->map();
  if (m.view_offset >= 0) {
    // Copied without the GIL: reading the mapping may fault pages in.
    PyObject* b =
        PyBytes_FromStringAndSize(nullptr, static_cast<py::ssize_t>(m.nbytes));
    if (!b) throw py::error_already_set();
    {
      py::gil_scoped_release nogil;
      std::memcpy(PyBytes_AS_STRING(b), map->bytes().data() + m.view_offset,
                  static_cast<size_t>(m.nbytes));
    }
    return py::reinterpret_steal<py::bytes>(b);
  }
  py::array a = Raw();
  return py::bytes(static_cast<const char*>(a.data()),
                   static_cast<size_t>(m.nbytes));
}

// A sequence of Literals (File.inputs / File.outputs).
class LiteralList {
 public:
  LiteralList(std::shared_ptr<FileState> file,
              const std::vector<LiteralMeta>* items)
      : file_(std::move(file)), items_(items) {}
  size_t size() const { return items_->size(); }
  Literal at(int64_t i) const {
    const int64_t n = static_cast<int64_t>(items_->size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) throw py::index_error("literal index out of range");
    return Literal(file_, &(*items_)[static_cast<size_t>(i)]);
  }

 private:
  std::shared_ptr<FileState> file_;
  const std::vector<LiteralMeta>* items_;
};

// --- Opening ------------------------------------------------------------------------

// What open() reads, through the library's snapshot reader (SnapshotReader,
// snapshot/reader.h: the form, the framing, the classic mapping, region
// [2] presence and trailing bytes are its rules): the module's facts and
// ranges, then every literal, planned.
void ReadFile(SnapshotReader<MmapSource>& reader, std::string_view bytes,
              FileState* f) {
  const SnapshotHeader* header = Take(reader.ReadHeader());
  std::optional<ModuleFacts> facts = Take(reader.Facts());
  f->module_ranges = header->module;
  if (facts) {
    f->module_name = facts->name;
    f->entry = facts->entry_computation_name;
    f->has_program_shape = facts->program_shape.has_value();
    f->program_shape = facts->program_shape_text();
    f->parameter_names = facts->parameter_names();
  }
  SnapshotLiteral lit;
  while (Take(reader.Next(&lit))) {
    std::vector<LiteralMeta>* list = &f->inputs;
    if (lit.role == LiteralRole::kOutput) {
      if (!f->outputs) f->outputs.emplace();
      list = &*f->outputs;
    }
    list->push_back(PlanMeta(bytes, std::move(lit.ranges),
                             std::string(LiteralRoleName(lit.role)),
                             lit.index));
  }
  if (reader.outputs_present().value_or(false) && !f->outputs) {
    f->outputs.emplace();
  }
  Check(reader.Finish());
}

std::shared_ptr<FileState> OpenFile(const std::string& path,
                                    const std::string& kind,
                                    bool lenient_length_byte) {
  auto f = std::make_shared<FileState>();
  f->path = path;
  py::gil_scoped_release nogil;
  // A FIFO would block in open(); a directory cannot be mapped.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    Throw(WithFile(ErrnoError(errno, "opening"), path), path);
  }
  if (!S_ISREG(st.st_mode)) {
    Throw(WithFile(ErrnoError(S_ISDIR(st.st_mode) ? EISDIR : EINVAL,
                              "not a regular file"),
                   path),
          path);
  }
  SnapshotOpenOptions open;
  open.type = kind == "decomposed" ? SnapshotType::kDecomposed
              : kind == "classic" || kind == "snapshot" ? SnapshotType::kClassic
                                   : SnapshotType::kAuto;
  open.box.lenient_length_byte = lenient_length_byte;
  open.access = SnapshotAccess::kMapped;
  auto map = std::make_shared<Mapping>(
      Take(SnapshotFile::Open(path, open), path));
  SnapshotFile& file = map->file();
  f->kind = file.type() == SnapshotType::kDecomposed ? Kind::kDecomposed
                                                     : Kind::kClassic;
  SnapshotReadOptions read;
  read.box = open.box;
  try {
    file.Read(read, [&](auto& reader) {
      if constexpr (std::is_same_v<std::remove_reference_t<decltype(reader)>,
                                   SnapshotReader<MmapSource>>) {
        ReadFile(reader, map->bytes(), f.get());
      } else {
        Throw(absl::InternalError("open: the file is not mapped"));
      }
    });
  } catch (StatusError& e) {
    e.status = file.Annotate(e.status);
    if (e.path.empty()) e.path = path;
    throw;
  }
  f->set_map(std::move(map));
  return f;
}

// The module bytes: verbatim when given once, else the occurrences merged
// by protobuf (as unpack writes model.hlo).
py::bytes ModuleBytes(const FileState& f) {
  std::shared_ptr<Mapping> map = f.map();
  const std::string_view file = map->bytes();
  if (f.module_ranges.empty()) return py::bytes();  // no hlo.hlo_module
  if (f.module_ranges.size() == 1) {
    const ByteRange& r = f.module_ranges[0];
    return py::bytes(file.data() + r.offset, static_cast<size_t>(r.length));
  }
  std::string all;
  for (const ByteRange& r : f.module_ranges) {
    all.append(file.substr(r.offset, r.length));
  }
  xla::HloModuleProto m;
  if (!m.ParseFromString(all)) {
    Throw(FrameError(absl::StatusCode::kInvalidArgument, Frame{"hlo_module"},
                     f.module_ranges[0].offset,
                     "an HloModuleProto protobuf can parse",
                     "bytes it rejects"),
          f.path);
  }
  return py::bytes(m.SerializeAsString());
}

// --- Writing ------------------------------------------------------------------------

// One array to write: its memory (kept alive by the caller's Python
// objects), XLA type, dims and, for Fortran-ordered arrays, the
// column-major layout.
struct WriteArray {
  py::buffer_info buffer;
  PrimitiveType type;
  std::vector<int64_t> dims;
  bool column_major = false;
};

std::vector<std::unique_ptr<LiteralSource>> ArrayLiterals(
    const std::vector<WriteArray>& arrays, std::string_view role) {
  std::vector<std::unique_ptr<LiteralSource>> out;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const WriteArray& a = arrays[i];
    ArrayView v;
    v.data = a.buffer.ptr;
    v.type = a.type;
    v.dims = a.dims;
    if (a.column_major) {
      std::vector<int64_t> m2m(a.dims.size());
      for (size_t k = 0; k < m2m.size(); ++k) m2m[k] = static_cast<int64_t>(k);
      v.minor_to_major = m2m;
    }
    LiteralEncodeOptions o;
    o.name = absl::StrCat(Sv(role), " ", i);
    out.push_back(ArrayLiteral(v, o));
  }
  return out;
}

// `arrays`: (buffer object, xla type name, dims, column_major) tuples,
// prepared by __init__.py from NumPy arrays, tensors and buffers.
WriteArray ToWriteArray(const py::tuple& t) {
  WriteArray a{py::buffer(t[0]).request(), PrimitiveType::kInvalid, {},
               t[3].cast<bool>()};
  std::string name = t[1].cast<std::string>();
  std::optional<PrimitiveType> type = PrimitiveTypeFromName(name);
  if (!type || !Info(*type).loadable || Info(*type).element_bytes == 0) {
    throw py::value_error("unknown or unsupported XLA element type '" + name +
                          "'");
  }
  a.type = *type;
  a.dims = t[2].cast<std::vector<int64_t>>();
  uint64_t n = Info(a.type).element_bytes;
  for (int64_t d : a.dims) n *= static_cast<uint64_t>(d);
  if (static_cast<uint64_t>(a.buffer.size * a.buffer.itemsize) != n) {
    throw py::value_error(absl::StrCat(
        "array of ", a.buffer.size * a.buffer.itemsize, " bytes for ",
        name, "[", absl::StrJoin(a.dims, ","), "], which needs ", n));
  }
  return a;
}

void Write(const std::string& path, py::object module, py::list inputs,
           py::object outputs, const std::string& format,
           bool output_block) {
  PackRequest req;
  // The CLI's names (snapshot_type.h), and "classic" for the classic form.
  std::optional<SnapshotType> type = format == "classic"
                                         ? std::optional<SnapshotType>(SnapshotType::kClassic)
                                         : ValueOf(kOutputSnapshotTypeNames, format);
  if (!type) {
    throw py::value_error("format must be 'decomposed' or 'snapshot' ('classic' also "
                          "works), not '" + format + "'");
  }
  req.format = *type;
  req.write.write_output_count = output_block;
  std::vector<WriteArray> in, out;
  for (py::handle h : inputs) in.push_back(ToWriteArray(h.cast<py::tuple>()));
  if (!outputs.is_none()) {
    for (py::handle h : outputs.cast<py::list>()) {
      out.push_back(ToWriteArray(h.cast<py::tuple>()));
    }
  }
  std::string module_bytes;
  std::optional<std::string> module_path;
  if (py::isinstance<py::bytes>(module) ||
      py::isinstance<py::bytearray>(module) ||
      py::isinstance<py::memoryview>(module)) {
    py::buffer_info b = py::buffer(module).request();
    module_bytes.assign(static_cast<const char*>(b.ptr),
                        static_cast<size_t>(b.size * b.itemsize));
  } else {
    module_path = module.cast<std::string>();
  }
  py::gil_scoped_release nogil;
  // A module file as `pack --module` reads one (HLO text too); bytes are
  // a serialized HloModuleProto.
  absl::StatusOr<std::string> snap = module_path ? SnapshotFromModuleFile(*module_path)
                                                 : SnapshotFromModule(module_bytes);
  if (!snap.ok()) {
    Throw(module_path ? snap.status() : Prefix(snap.status(), "module"), module_path.value_or(""));
  }
  req.snapshot = *std::move(snap);
  req.inputs = ArrayLiterals(in, "input");
  req.outputs = ArrayLiterals(out, "output");
  Check(PackToFile(req, path), path);
}

// --- The rest of the library ------------------------------------------------------

// "auto", "decomposed", "classic" (or "snapshot", the CLI's name).
SnapshotType TypeOption(const std::string& name) {
  std::optional<SnapshotType> t =
      SnapshotTypeFromName(name == "classic" ? "snapshot" : name);
  if (!t) {
    throw py::value_error("kind must be 'auto', 'decomposed' or 'snapshot' ('classic' "
                          "also works)");
  }
  return *t;
}

py::list Unpack(const std::string& path, const std::string& prefix,
                const std::string& snapshot_type, bool dump_outputs,
                const std::string& module, bool ml_dtype_sidecar,
                const std::string& npz_path, bool manifest) {
  UnpackOptions o;
  if (!npz_path.empty()) {
    o.output_format = UnpackFormat::kNpz;
    o.npz_path = npz_path;
  }
  o.manifest = manifest;
  o.output_prefix = prefix;
  o.snapshot_type = TypeOption(snapshot_type);
  o.dump_snapshot_outputs = dump_outputs;
  o.module = module;
  o.ml_dtype_sidecar = ml_dtype_sidecar;
  std::vector<UnpackedFile> files;
  {
    py::gil_scoped_release nogil;
    Check(decomposed::Unpack(path, o, &files), path);
  }
  py::list out;
  for (const UnpackedFile& f : files) {
    py::dict d;
    // The spelling of manifest.json: kind "input" / "output" / "module" /
    // ..., no index (None) for the module, no entry (None) outside an .npz.
    d["path"] = f.path;
    d["kind"] = std::string(UnpackedKindRole(f.kind));
    d["index"] = f.index < 0 ? py::object(py::none()) : py::object(py::int_(f.index));
    // None where manifest.json has no value (the module, the manifest).
    d["shape"] = f.shape.empty() ? py::object(py::none()) : py::object(py::str(f.shape));
    d["descr"] = f.descr.empty() ? py::object(py::none()) : py::object(py::str(f.descr));
    d["fortran_order"] = f.fortran_order;
    d["bytes"] = f.bytes;
    d["entry"] = f.entry.empty() ? py::object(py::none()) : py::object(py::str(f.entry));
    out.append(d);
  }
  return out;
}

std::string VerifyJson(const std::string& path, const std::string& type) {
  VerifyOptions o;
  o.snapshot_type = TypeOption(type);
  py::gil_scoped_release nogil;
  absl::StatusOr<VerifyReport> r = VerifyFile(path, o);
  if (!r.ok()) Throw(WithFile(r.status(), path), path);
  return JsonText(VerifyReportJson(*r), kJsonLine);
}

std::string InspectJson(const std::string& path) {
  py::gil_scoped_release nogil;
  absl::StatusOr<InspectReport> r = InspectFile(path);
  if (!r.ok()) Throw(r.status(), path);
  return JsonText(InspectReportJson(*r), kJsonLine);
}

void Convert(const std::string& in, const std::string& out,
             const std::string& to) {
  py::gil_scoped_release nogil;
  // The input's form is detected, as `decomposed convert` does: the same
  // bad file gets the same error.
  if (to == "decomposed") {
    Check(ConvertSnapshot(in, out, SnapshotType::kDecomposed, SnapshotType::kAuto), in);
  } else if (to == "classic" || to == "snapshot") {
    Check(ConvertSnapshot(in, out, SnapshotType::kClassic, SnapshotType::kAuto), in);
  } else {
    Throw(absl::InvalidArgumentError(
        "convert: `to` must be 'decomposed' or 'snapshot' ('classic' also works)"));
  }
}

TensorSetOptions SetOptions(bool inputs, const py::dict& dtypes) {
  TensorSetOptions o;
  o.inputs = inputs;
  for (auto [k, v] : dtypes) {
    std::string name = v.cast<std::string>();
    std::optional<PrimitiveType> t = ParseDtypeName(name);
    if (!t) throw py::value_error("unknown element type '" + name + "'");
    o.dtypes[k.cast<size_t>()] = *t;
  }
  return o;
}

std::string CompareJson(const std::string& expected, const std::string& actual,
                        bool inputs, const std::string& mode,
                        std::optional<double> rtol, std::optional<double> atol,
                        bool equal_nan, bool allow_dtype_mismatch,
                        const py::dict& expected_dtypes,
                        const py::dict& actual_dtypes) {
  CompareOptions o;
  std::optional<CompareMode> m = CompareModeFromName(mode);
  if (!m) throw py::value_error("mode must be 'torch', 'numpy' or 'xla'");
  o.mode = *m;
  o.rtol = rtol;
  o.atol = atol;
  o.equal_nan = equal_nan;
  o.allow_dtype_mismatch = allow_dtype_mismatch;
  if (absl::Status s = ValidateCompareOptions(o); !s.ok()) {
    throw py::value_error(std::string(s.message()));
  }
  TensorSetOptions eo = SetOptions(inputs, expected_dtypes);
  TensorSetOptions ao = SetOptions(inputs, actual_dtypes);
  py::gil_scoped_release nogil;
  auto e = OpenTensorSet(expected, eo);
  if (!e.ok()) Throw(e.status(), expected);
  auto a = OpenTensorSet(actual, ao);
  if (!a.ok()) Throw(a.status(), actual);
  absl::StatusOr<CompareReport> r = CompareTensorSets(**e, **a, o);
  if (!r.ok()) Throw(r.status());
  return CompareReportJson(*r);
}

std::string StatsJson(const std::vector<std::string>& paths, bool inputs,
                      const py::dict& dtypes) {
  TensorSetOptions o = SetOptions(inputs, dtypes);
  py::gil_scoped_release nogil;
  std::vector<TensorStatsEntry> entries;
  for (const std::string& p : paths) {
    auto set = OpenTensorSet(p, o);
    if (!set.ok()) Throw(set.status(), p);
    Check(AppendTensorStats(**set, p, inputs ? "inputs" : "outputs",
                            &entries),
          p);
  }
  return StatsReportJson(entries);
}

// --- Bundles and capture ------------------------------------------------------------

py::dict BundleOpen(const std::string& call_dir) {
  capture::Bundle b;
  {
    py::gil_scoped_release nogil;
    b = Take(capture::OpenBundle(call_dir), call_dir);
  }
  py::dict d;
  d["path"] = b.path;
  d["format"] = std::string(capture::BundleFormatName(b.format));
  d["meta"] = JsonText(b.meta, kJsonLine);
  py::list inputs;
  for (const capture::BundleInput& in : b.inputs) {
    py::dict t;
    t["index"] = in.index;
    t["dtype"] = std::string(in.dtype->name);
    t["shape"] = py::tuple(py::cast(in.shape));
    t["nbytes"] = in.byte_size;
    t["path"] = in.path;
    inputs.append(t);
  }
  d["inputs"] = inputs;
  return d;
}

// (offset, size) of tensor i's bytes in its file, after checking the file
// header against meta.json.
py::tuple BundleLocate(const std::string& call_dir, size_t i) {
  py::gil_scoped_release nogil;
  capture::Bundle b = Take(capture::OpenBundle(call_dir), call_dir);
  if (i >= b.inputs.size()) {
    py::gil_scoped_acquire gil;
    throw py::index_error("tensor index out of range");
  }
  capture::TensorData t = Take(capture::LocateTensor(b, i), call_dir);
  py::gil_scoped_acquire gil;
  return py::make_tuple(t.offset, t.size);
}

py::dict ConfigDict(const capture::SnapshotConfig& c) {
  return py::module_::import("json").attr("loads")(
      JsonText(capture::SnapshotConfigJson(c), kJsonLine));
}

py::dict ConfigFromEnv(py::object env) {
  absl::StatusOr<capture::SnapshotConfig> c;
  if (env.is_none()) {
    c = capture::ResolveSnapshotConfigFromEnvironment();
  } else {
    c = capture::ResolveSnapshotConfig(
        env.cast<std::map<std::string, std::string>>());
  }
  if (!c.ok()) Throw(c.status());
  py::dict d = ConfigDict(*c);
  d["warnings"] = c->warnings;
  return d;
}

// A capturer bound to one NEFF (compilation hash) on one rank.
class Capturer {
 public:
  Capturer(py::object env, std::string hash, int64_t global_rank,
           int64_t tp_rank, int64_t dp_rank, std::optional<std::string> root,
           bool sync)
      : sync_(sync) {
    absl::StatusOr<capture::SnapshotConfig> c =
        env.is_none()
            ? capture::ResolveSnapshotConfigFromEnvironment()
            : capture::ResolveSnapshotConfig(
                  env.cast<std::map<std::string, std::string>>());
    if (!c.ok()) Throw(c.status());
    config_ = *c;
    capturer_ = std::make_unique<capture::SnapshotCapturer>(
        config_, std::move(hash),
        capture::RankInfo{global_rank, tp_rank, dp_rank},
        root ? *root : capture::DefaultSnapshotRoot());
  }

  // `forward`: None (no forward context) or the forward as JSON text, read
  // by ForwardInfoFromJson as `capture plan` reads its forwards (one set of
  // defaults); `tensors`: (data address, torch dtype name, shape, strides)
  // tuples.
  py::dict Capture(py::object forward, py::list tensors) {
    std::optional<capture::ForwardInfo> fwd;
    if (!forward.is_none()) {
      fwd = Take(capture::ForwardInfoFromJson(nlohmann::json::parse(
          forward.cast<std::string>(), nullptr, /*allow_exceptions=*/false)));
    }
    // The caller (capture.py) keeps each tensor alive across this call.
    std::vector<capture::HostTensor> host;
    for (py::handle h : tensors) {
      py::tuple t = h.cast<py::tuple>();
      capture::HostTensor ht;
      ht.data = reinterpret_cast<const void*>(t[0].cast<uintptr_t>());
      const std::string name = t[1].cast<std::string>();
      const capture::TorchDtype* dt = capture::FindTorchDtype(name);
      if (!dt) throw py::value_error("unknown torch dtype '" + name + "'");
      ht.dtype = dt->type;
      ht.shape = t[2].cast<std::vector<int64_t>>();
      ht.strides = t[3].cast<std::vector<int64_t>>();
      host.push_back(std::move(ht));
    }
    capture::BundleWriteOptions o;
    o.sync = sync_;
    absl::StatusOr<capture::CaptureDecision> d;
    {
      py::gil_scoped_release nogil;
      d = capturer_->Capture(fwd ? &*fwd : nullptr, host, o);
    }
    if (!d.ok()) Throw(d.status());
    py::dict out;
    out["has_context"] = d->has_context;
    out["call_index"] = d->call_index;
    out["rank_selected"] = d->rank_selected;
    out["budget_refused"] = d->budget_refused;
    out["capture"] = d->capture;
    out["call_dir"] = d->capture ? py::object(py::str(d->call_dir))
                                 : py::object(py::none());
    return out;
  }
  int64_t next_call_index() const { return capturer_->next_call_index(); }
  py::dict config() const { return ConfigDict(config_); }

 private:
  capture::SnapshotConfig config_;
  std::unique_ptr<capture::SnapshotCapturer> capturer_;
  bool sync_;
};

}  // namespace
}  // namespace decomposed::python

PYBIND11_MODULE(_decomposed, m) {
  using namespace decomposed::python;
  m.doc() = "decomposed's compiled core; use the `decomposed` package.";

  g_format_error = PyErr_NewExceptionWithDoc(
      "decomposed.FormatError",
      "Malformed or unsupported input. A ValueError whose message is the "
      "CLI's; .code is the absl status code name (\"INVALID_ARGUMENT\", "
      "\"OUT_OF_RANGE\", \"RESOURCE_EXHAUSTED\", \"UNIMPLEMENTED\"), .frame "
      "the frame named (\"input 3 body\") and .offset the byte offset, each "
      "None when unknown.",
      PyExc_ValueError, py::dict(py::arg("code") = py::none(),
                                 py::arg("frame") = py::none(),
                                 py::arg("offset") = py::none())
                            .ptr());
  m.attr("FormatError") = py::reinterpret_borrow<py::object>(g_format_error);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      RaiseStatus(e);
    }
  });

  m.def("_set_dtypes", [](py::dict d) {
    Py_XDECREF(g_dtypes);
    g_dtypes = d.release().ptr();
  });

  py::class_<Mapping, std::shared_ptr<Mapping>>(m, "_Mapping",
                                                py::buffer_protocol())
      .def_buffer([](Mapping& map) {
        std::string_view b = map.bytes();
        return py::buffer_info(const_cast<char*>(b.data()), 1, "B", 1,
                               {static_cast<py::ssize_t>(b.size())}, {1},
                               /*readonly=*/true);
      })
      .def_property_readonly("path", &Mapping::path)
      .def("__len__", [](const Mapping& map) { return map.bytes().size(); });

  py::class_<Literal>(m, "Literal",
                      "One array of a File: .dtype (XLA's lower-case name), "
                      ".shape, .layout (minor_to_major), .nbytes, .offset (of "
                      "the LiteralProto body in the file), .numpy(), .torch(), "
                      ".tobytes().")
      .def_property_readonly("dtype", &Literal::dtype)
      .def_property_readonly("shape", &Literal::shape)
      .def_property_readonly("layout", &Literal::layout)
      .def_property_readonly("nbytes", &Literal::nbytes)
      .def_property_readonly("offset", &Literal::offset)
      .def_property_readonly("size", &Literal::size)
      .def_property_readonly("is_view", &Literal::is_view,
                             "True when numpy() is a zero-copy view of the "
                             "mapped file")
      .def_property_readonly("ndim", [](const Literal& l) {
        return l.meta().dims.size();
      })
      .def("numpy", &Literal::numpy, py::arg("upcast") = false)
      .def("tobytes", &Literal::tobytes)
      .def("__repr__", &Literal::repr);

  py::class_<LiteralList>(m, "LiteralList")
      .def("__len__", &LiteralList::size)
      // Iteration: Python's sequence protocol over __getitem__.
      .def("__getitem__", &LiteralList::at);

  py::class_<FileState, std::shared_ptr<FileState>>(m, "_FileState")
      .def_readonly("path", &FileState::path)
      .def_property_readonly("kind", [](const FileState& f) {
        // The CLI's and the JSON's word for the classic form.
        return f.kind == Kind::kDecomposed ? "decomposed" : "snapshot";
      })
      // None when the snapshot has no module (an arguments-only snapshot,
      // as XLA writes some), rather than an empty name.
      .def_property_readonly("has_module", [](const FileState& f) {
        return !f.module_ranges.empty();
      })
      .def_property_readonly("module_name", [](const FileState& f) {
        return f.module_ranges.empty() ? py::object(py::none())
                                       : py::object(py::str(f.module_name));
      })
      .def_property_readonly("entry", [](const FileState& f) {
        return f.module_ranges.empty() ? py::object(py::none())
                                       : py::object(py::str(f.entry));
      })
      .def_property_readonly("program_shape", [](const FileState& f) {
        return f.has_program_shape ? py::object(py::str(f.program_shape))
                                   : py::object(py::none());
      })
      .def_property_readonly("parameter_names", [](const FileState& f) {
        return py::tuple(py::cast(f.parameter_names));
      })
      .def_property_readonly("module", &ModuleBytes)
      .def_property_readonly("inputs", [](std::shared_ptr<FileState> f) {
        return LiteralList(f, &f->inputs);
      })
      .def_property_readonly("outputs", [](std::shared_ptr<FileState> f) {
        return f->outputs ? py::cast(LiteralList(f, &*f->outputs))
                          : py::object(py::none());
      })
      .def_property_readonly("closed", &FileState::closed)
      .def_property_readonly("_mapping", &FileState::map)
      .def("close", &FileState::close);

  m.def("_open", &OpenFile, py::arg("path"), py::arg("kind"),
        py::arg("lenient_length_byte"));
  m.def("_write", &Write, py::arg("path"), py::arg("module"),
        py::arg("inputs"), py::arg("outputs"), py::arg("format"),
        py::arg("output_block"));
  m.def("_unpack", &Unpack);
  m.def("_verify_json", &VerifyJson);
  m.def("_inspect_json", &InspectJson);
  m.def("_convert", &Convert);
  m.def("_compare_json", &CompareJson);
  m.def("_stats_json", &StatsJson);
  decomposed::python::RegisterThreeWay(  // _three_way_json, _compare_plot_json
      m, [](absl::Status s, std::string path) { Throw(std::move(s), std::move(path)); });
  decomposed::python::RegisterFacts(  // __version__, dtype tables, plan, ls
      m, [](absl::Status s, std::string path) { Throw(std::move(s), std::move(path)); });
  decomposed::python::RegisterRun(  // _run
      m, [](absl::Status s, std::string path) { Throw(std::move(s), std::move(path)); });
  decomposed::python::RegisterHlo(  // _hlo_text, _hlo_parse, _hlo_load, ...
      m, [](absl::Status s, std::string path) { Throw(std::move(s), std::move(path)); });
  m.def("_bundle_open", &BundleOpen);
  m.def("_bundle_locate", &BundleLocate);
  m.def("_config_from_env", &ConfigFromEnv, py::arg("env") = py::none());
  py::class_<Capturer>(m, "_Capturer")
      .def(py::init<py::object, std::string, int64_t, int64_t, int64_t,
                    std::optional<std::string>, bool>())
      .def("capture", &Capturer::Capture)
      .def_property_readonly("next_call_index", &Capturer::next_call_index)
      .def_property_readonly("config", &Capturer::config);
}
