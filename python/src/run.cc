#include "run.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/eval/custom_call.h"
#include "decomposed/eval/numerics.h"
#include "decomposed/hlo/module.h"
#include "decomposed/analysis/divergence.h"
#include "decomposed/run/replay.h"
#include "decomposed/run/run.h"
#include "decomposed/snapshot/module_file.h"
#include "decomposed/status.h"

namespace py = pybind11;

namespace decomposed::python {
namespace {

ThrowStatusFn g_throw = nullptr;

[[noreturn]] void Raise(const absl::Status& s, const std::string& path = "") {
  g_throw(s, path);
  throw std::runtime_error(std::string(s.message()));  // g_throw always throws
}

template <class T>
T Take(absl::StatusOr<T> v, const std::string& path = "") {
  if (!v.ok()) Raise(v.status(), path);
  return *std::move(v);
}

std::string Lower(PrimitiveType t) { return absl::AsciiStrToLower(std::string(Info(t).name)); }

// Keeps a Python object alive for as long as an array borrows its memory;
// released with the GIL taken (the evaluator frees values on its own
// thread, without it).
std::shared_ptr<const void> KeepAlive(py::object o) {
  auto* held = new py::object(std::move(o));
  return std::shared_ptr<const void>(held, [](const void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<const py::object*>(p);
  });
}

// A C-contiguous NumPy array (prepared by __init__.py) as an array of
// `type` without a copy.
eval::Array FromNumpy(const py::array& a, PrimitiveType type, const std::string& what) {
  if (!(a.flags() & py::array::c_style)) {
    throw py::value_error(what + ": expected a C-contiguous array");
  }
  std::vector<int64_t> dims(a.shape(), a.shape() + a.ndim());
  const uint64_t bytes = static_cast<uint64_t>(a.nbytes());
  absl::StatusOr<eval::Array> out = eval::Array::Borrow(
      type, dims, static_cast<const char*>(a.data()), bytes, KeepAlive(a));
  if (!out.ok()) {
    throw py::value_error(absl::StrCat(what, ": ", a.dtype().itemsize(), "-byte elements for ",
                                       Sv(Info(type).name), " of ",
                                       static_cast<int>(Info(type).element_bytes), " bytes"));
  }
  return *std::move(out);
}

PrimitiveType TypeNamed(const py::handle& name, const std::string& what) {
  if (name.is_none()) {
    throw py::type_error(what + ": the NumPy dtype has no XLA type; name one (bf16, ...)");
  }
  const std::string n = name.cast<std::string>();
  std::optional<PrimitiveType> t = PrimitiveTypeFromName(n);
  if (!t) throw py::value_error(what + ": unknown XLA type '" + n + "'");
  return *t;
}

// A NumPy array of `storage`'s dtype over an array's memory (no copy): its
// base holds the array; writable only when the memory is the evaluator's
// own and nothing else shares it (a custom call's operands, outputs that
// alias an input or each other are read-only).
py::array ToNumpy(eval::Array in, const py::dict& storage) {
  eval::Array a = in.is_contiguous() ? std::move(in) : *in.Contiguous();
  const std::string key = Lower(a.type());
  if (!storage.contains(key)) {
    Raise(absl::UnimplementedError(absl::StrCat(key, ": no NumPy dtype for this element type")));
  }
  py::dtype dt = py::reinterpret_borrow<py::dtype>(storage[py::str(key)]);
  std::vector<py::ssize_t> shape(a.dims().begin(), a.dims().end());
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t acc = static_cast<py::ssize_t>(a.element_bytes());
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = acc;
    acc *= shape[i];
  }
  auto* holder = new eval::Array(std::move(a));
  const bool writable = holder->storage_unique();
  py::capsule base(holder, [](void* p) { delete static_cast<eval::Array*>(p); });
  py::array out(dt, shape, strides, holder->data(), base);
  if (!writable) {
    py::detail::array_proxy(out.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  }
  return out;
}

// A Python custom-call target's result as the instruction's value: arrays
// of the result's element type (as stored under the run's numerics), a
// sequence of them for a tuple result.
absl::StatusOr<eval::Value> ValueOfResult(py::handle result, const xla::ShapeProto& shape,
                                          const eval::NumericsPolicy& numerics,
                                          const py::dict& storage, const std::string& what) {
  if (shape.element_type() == static_cast<int>(PrimitiveType::kTuple)) {
    py::sequence seq = py::reinterpret_borrow<py::sequence>(result);
    if (static_cast<int>(seq.size()) != shape.tuple_shapes_size()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": expected a sequence of ",
                                                     shape.tuple_shapes_size(),
                                                     " arrays, found ", seq.size()));
    }
    std::vector<eval::Value> elements;
    for (int i = 0; i < shape.tuple_shapes_size(); ++i) {
      absl::StatusOr<eval::Value> e =
          ValueOfResult(seq[i], shape.tuple_shapes(i), numerics, storage, what);
      if (!e.ok()) return e.status();
      elements.push_back(*std::move(e));
    }
    return eval::Value::Tuple(std::move(elements));
  }
  const PrimitiveType type =
      numerics.StorageType(static_cast<PrimitiveType>(shape.element_type()));
  const std::string key = Lower(type);
  if (!storage.contains(key)) {
    return absl::UnimplementedError(absl::StrCat(what, ": no NumPy dtype for ", key));
  }
  py::object np = py::module_::import("numpy");
  py::array a = np.attr("ascontiguousarray")(result, storage[py::str(key)]);
  std::vector<int64_t> dims(a.shape(), a.shape() + a.ndim());
  const std::string_view bytes(static_cast<const char*>(a.data()),
                               static_cast<size_t>(a.nbytes()));
  absl::StatusOr<eval::Array> out = eval::Array::Copy(type, dims, bytes);
  if (!out.ok()) return out.status();
  return eval::Value(*std::move(out));
}

// Python's exception from a custom-call target, raised again once the run
// has returned.
struct Pending {
  std::optional<py::error_already_set> error;
};

// What run(), bisect and the ranks share: the source (module and inputs)
// and the options (numerics, threads, substitutes, Python custom calls),
// from the arguments __init__.py prepared.
struct Prepared {
  run::RunSource src;
  run::RunOptions options;
  std::unique_ptr<eval::CustomCallRegistry> registry;
  std::shared_ptr<Pending> pending = std::make_shared<Pending>();
};

std::unique_ptr<Prepared> Prepare(py::object snapshot, py::object module, py::object inputs,
                                  const std::string& numerics, int threads, py::object dump,
                                  const std::string& dump_filter, py::dict substitutes,
                                  py::dict custom_calls, py::dict storage) {
  auto prepared = std::make_unique<Prepared>();
  run::RunSource& src = prepared->src;
  if (!snapshot.is_none()) src.snapshot = snapshot.cast<std::string>();
  std::optional<std::string> module_path;
  if (!module.is_none()) {
    if (py::isinstance<py::bytes>(module) || py::isinstance<py::bytearray>(module) ||
        py::isinstance<py::memoryview>(module)) {
      py::buffer_info b = py::buffer(module).request();
      const std::string_view bytes(static_cast<const char*>(b.ptr),
                                   static_cast<size_t>(b.size * b.itemsize));
      src.module_proto = Take(ParseModuleBytes(bytes, "module")).module;
    } else {
      module_path = module.cast<std::string>();
    }
  }
  std::optional<eval::Numerics> mode = eval::NumericsFromName(numerics);
  if (!mode) throw py::value_error("numerics must be 'xla', 'f32' or 'neuron'");
  // Inputs as arrays: their types from the arrays, except that the bit
  // carriers of the types NumPy lacks (uint16 for bf16, uint8 for fp8 and
  // int4) take the parameter's type. That needs the module first.
  std::vector<py::tuple> arrays;
  if (!inputs.is_none()) {
    if (py::isinstance<py::str>(inputs)) {
      src.input_sides.push_back(inputs.cast<std::string>());
    } else {
      for (py::handle h : inputs) {
        if (py::isinstance<py::str>(h)) {
          src.input_sides.push_back(h.cast<std::string>());
        } else {
          arrays.push_back(h.cast<py::tuple>());
        }
      }
      if (!arrays.empty() && !src.input_sides.empty()) {
        throw py::value_error("inputs: either arrays or paths, not both");
      }
    }
  }
  if (!arrays.empty()) {
    if (!src.module_proto) {
      const std::string from = module_path ? *module_path : src.snapshot;
      if (from.empty()) throw py::value_error("run: no module (give a snapshot or module=)");
      absl::StatusOr<ModuleFile> m;
      {
        py::gil_scoped_release nogil;
        m = ReadModuleFile(from);
      }
      src.module_proto = Take(std::move(m), from).module;
      module_path.reset();
    }
    absl::StatusOr<std::unique_ptr<hlo::HloModule>> hm = hlo::HloModule::Create(*src.module_proto);
    if (!hm.ok()) Raise(hm.status());
    const hlo::HloComputation* entry = (*hm)->entry();
    std::vector<eval::Value> values;
    for (size_t i = 0; i < arrays.size(); ++i) {
      const std::string what = absl::StrCat("input ", i);
      py::array a = arrays[i][0].cast<py::array>();
      PrimitiveType t = TypeNamed(arrays[i][1], what);
      if (entry && i < entry->parameters().size() && entry->parameters()[i] != nullptr) {
        const int declared = entry->parameters()[i]->shape().element_type();
        const PrimitiveTypeInfo* d = FindPrimitiveType(declared);
        if (d && !d->ml_dtype.empty() && (t == PrimitiveType::kU16 || t == PrimitiveType::kU8) &&
            Info(t).element_bytes == d->element_bytes) {
          t = d->type;
        }
      }
      values.push_back(FromNumpy(a, t, what));
    }
    src.input_values = std::move(values);
    src.snapshot.clear();  // the module is read; the snapshot's inputs are not used
  }
  if (module_path) src.module = *module_path;

  run::RunOptions& options = prepared->options;
  options.numerics = *mode;
  options.threads = threads;
  if (!dump.is_none()) options.dump_dir = dump.cast<std::string>();
  options.dump_filter = dump_filter;
  for (auto [k, v] : substitutes) {
    const std::string name = k.cast<std::string>();
    if (py::isinstance<py::str>(v)) {
      const std::string path = v.cast<std::string>();
      absl::StatusOr<eval::Array> a;
      {
        py::gil_scoped_release nogil;
        a = run::ReadNpyArray(path);
      }
      options.substitutes[name] = eval::Value(Take(std::move(a), path));
    } else {
      py::tuple t = v.cast<py::tuple>();
      options.substitutes[name] =
          eval::Value(FromNumpy(t[0].cast<py::array>(), TypeNamed(t[1], "substitute " + name),
                                "substitute " + name));
    }
  }
  // Python targets: called with the GIL taken, on NumPy views of the
  // operands (read-only where the evaluator shares the memory).
  std::shared_ptr<Pending> pending = prepared->pending;
  prepared->registry = std::make_unique<eval::CustomCallRegistry>(eval::BuiltinCustomCalls());
  eval::CustomCallRegistry& registry = *prepared->registry;
  for (auto [k, v] : custom_calls) {
    const std::string target = k.cast<std::string>();
    auto held = std::shared_ptr<py::object>(
        new py::object(py::reinterpret_borrow<py::object>(v)), [](py::object* p) {
          py::gil_scoped_acquire gil;
          delete p;
        });
    auto dtypes = std::shared_ptr<py::dict>(new py::dict(storage), [](py::dict* d) {
      py::gil_scoped_acquire gil;
      delete d;
    });
    registry.Register(target, [held, dtypes, pending, target](
                                  const eval::CustomCallContext& c,
                                  std::span<const eval::Value> ops) -> absl::StatusOr<eval::Value> {
      py::gil_scoped_acquire gil;
      const std::string what = absl::StrCat("custom call ", target);
      try {
        py::list args;
        for (const eval::Value& o : ops) {
          if (!o.is_array()) {
            return absl::UnimplementedError(what + ": a tuple operand is not passed to Python");
          }
          args.append(ToNumpy(o.array(), *dtypes));
        }
        py::object result = (*held)(*args);
        return ValueOfResult(result, c.instruction.shape(), c.numerics, *dtypes, what);
      } catch (py::error_already_set& e) {
        const std::string msg = absl::StrCat(what, " raised ", e.what());
        if (!pending->error) pending->error.emplace(std::move(e));
        return absl::AbortedError(msg);
      } catch (const std::exception& e) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": ", e.what()));
      }
    });
  }
  options.custom_calls = &registry;
  return prepared;
}

// Outputs (arrays) as NumPy arrays, each let go as it is handed over.
py::list OutputsToNumpy(std::vector<eval::Value> outputs, const py::dict& storage) {
  py::list out;
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (!outputs[j].is_array()) {
      Raise(absl::InvalidArgumentError(absl::StrCat(
          "output ", j, ": expected an array, found the tuple ", outputs[j].ShapeString())));
    }
    eval::Array a = outputs[j].array();
    outputs[j] = eval::Value();
    out.append(ToNumpy(std::move(a), storage));
  }
  return out;
}

py::list Run(py::object snapshot, py::object module, py::object inputs,
             const std::string& numerics, int threads, py::object dump,
             const std::string& dump_filter, py::dict substitutes, py::dict custom_calls,
             py::dict storage) {
  std::unique_ptr<Prepared> p = Prepare(snapshot, module, inputs, numerics, threads, dump,
                                        dump_filter, substitutes, custom_calls, storage);
  absl::StatusOr<run::RunResult> result;
  {
    py::gil_scoped_release nogil;
    absl::StatusOr<run::RunProgram> program = run::LoadProgram(p->src);
    if (!program.ok()) {
      result = program.status();
    } else {
      // The program is not needed after the run: let each input go at its
      // last use.
      result = run::Execute(std::move(*program), p->options);
    }
  }
  if (p->pending->error) throw std::move(*p->pending->error);
  if (!result.ok()) Raise(result.status());
  std::vector<eval::Value> outputs = std::move(result->outputs);
  result = absl::StatusOr<run::RunResult>();  // nothing else holds the outputs
  return OutputsToNumpy(std::move(outputs), storage);
}

// run(..., bisect=True): the divergence origins, as BisectReportJson's text.
std::string Bisect(py::object snapshot, py::object module, py::object inputs,
                   const std::string& numerics, int threads, const std::string& against,
                   const std::string& mode, std::optional<double> rtol, std::optional<double> atol,
                   int64_t top, py::dict substitutes, py::dict custom_calls, py::dict storage) {
  std::unique_ptr<Prepared> p = Prepare(snapshot, module, inputs, numerics, threads, py::none(),
                                        "", substitutes, custom_calls, storage);
  std::optional<CompareMode> m = CompareModeFromName(mode);
  if (!m) throw py::value_error("mode must be 'torch', 'numpy' or 'xla'");
  if (top < 0) throw py::value_error("top must be 0 (all) or more");
  run::BisectRequest req;
  req.source = p->src;
  req.run = p->options;
  req.against = against;
  req.compare.mode = *m;
  req.compare.rtol = rtol;
  req.compare.atol = atol;
  if (absl::Status s = ValidateCompareOptions(req.compare); !s.ok()) {
    throw py::value_error(std::string(s.message()));
  }
  absl::StatusOr<BisectReport> r;
  {
    py::gil_scoped_release nogil;
    r = run::BisectSnapshot(req);
  }
  if (p->pending->error) throw std::move(*p->pending->error);
  if (!r.ok()) Raise(r.status());
  return BisectReportJson(*r, static_cast<size_t>(top));
}

// run([rank0, rank1, ...]): each rank's outputs, in rank order.
py::list RunRanks(std::vector<std::string> ranks, py::object module, const std::string& numerics,
                  int threads, int64_t replicas, int64_t partitions, py::dict substitutes,
                  py::dict custom_calls, py::dict storage) {
  std::unique_ptr<Prepared> p = Prepare(py::none(), py::none(), py::none(), numerics, threads,
                                        py::none(), "", substitutes, custom_calls, storage);
  run::RanksRequest req;
  req.ranks = std::move(ranks);
  if (!module.is_none()) req.module = module.cast<std::string>();
  req.run = p->options;
  req.replica_count = replicas;
  req.partition_count = partitions;
  absl::StatusOr<run::RanksReport> r;
  {
    py::gil_scoped_release nogil;
    r = run::RunRanks(req);
  }
  if (p->pending->error) throw std::move(*p->pending->error);
  if (!r.ok()) Raise(r.status());
  py::list out;
  for (run::RunReport& rank : r->ranks) {
    out.append(OutputsToNumpy(std::move(rank.result.outputs), storage));
  }
  return out;
}

}  // namespace

void RegisterRun(py::module_& m, ThrowStatusFn throw_status) {
  g_throw = throw_status;
  m.def("_run", &Run, py::arg("snapshot"), py::arg("module"), py::arg("inputs"),
        py::arg("numerics"), py::arg("threads"), py::arg("dump"), py::arg("dump_filter"),
        py::arg("substitutes"), py::arg("custom_calls"), py::arg("storage"));
  m.def("_bisect", &Bisect, py::arg("snapshot"), py::arg("module"), py::arg("inputs"),
        py::arg("numerics"), py::arg("threads"), py::arg("against"), py::arg("mode"),
        py::arg("rtol"), py::arg("atol"), py::arg("top"), py::arg("substitutes"),
        py::arg("custom_calls"), py::arg("storage"));
  m.def("_run_ranks", &RunRanks, py::arg("ranks"), py::arg("module"), py::arg("numerics"),
        py::arg("threads"), py::arg("replicas"), py::arg("partitions"), py::arg("substitutes"),
        py::arg("custom_calls"), py::arg("storage"));
}

}  // namespace decomposed::python
