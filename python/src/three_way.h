// The three-way comparison and the pictures in the Python package:
// decomposed._decomposed._three_way_json and ._compare_plot_json, thin
// wrappers over analysis/three_way.h, analysis/scatter.h and
// analysis/plots.h (python/decomposed/_three_way.py is their public face).
#ifndef DECOMPOSED_PYTHON_SRC_THREE_WAY_H_
#define DECOMPOSED_PYTHON_SRC_THREE_WAY_H_

#include <pybind11/pybind11.h>

#include <string>

#include "absl/status/status.h"

namespace decomposed::python {

// Raises a status as the package's FormatError or OSError (module.cc's
// translation); `path` names the file, when known.
using ThrowStatusFn = void (*)(absl::Status status, std::string path);

void RegisterThreeWay(pybind11::module_& m, ThrowStatusFn throw_status);

}  // namespace decomposed::python

#endif  // DECOMPOSED_PYTHON_SRC_THREE_WAY_H_
