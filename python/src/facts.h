// The library's tables and listings in the Python package, so that the
// pure-Python half keeps no copy of them: the version, the element-type and
// PyTorch dtype tables (xla/primitive_type.h, capture/torch_dtype.h), the
// capture variables' prefix, and the capture plan and bundle listing that
// `decomposed capture plan` and `bundle ls` print (capture/plan.h,
// capture/bundle_reader.h).
#ifndef DECOMPOSED_PYTHON_SRC_FACTS_H_
#define DECOMPOSED_PYTHON_SRC_FACTS_H_

#include <pybind11/pybind11.h>

#include "three_way.h"  // ThrowStatusFn

namespace decomposed::python {

// Adds __version__, _element_types, _torch_dtypes, _ENV_PREFIX,
// _bundle_ls_json and _capture_plan_json to `m`.
void RegisterFacts(pybind11::module_& m, ThrowStatusFn throw_status);

}  // namespace decomposed::python

#endif  // DECOMPOSED_PYTHON_SRC_FACTS_H_
