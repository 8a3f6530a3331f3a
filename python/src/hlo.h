// The module in the Python package: decomposed._decomposed._hlo_* (thin
// wrappers over hlo/print.h, hlo/parse.h, hlo/summary.h and
// snapshot/module_file.h); python/decomposed/hlo.py is their public face
// (decomposed.hlo.Module, .parse, .load, File.module).
#ifndef DECOMPOSED_PYTHON_SRC_HLO_H_
#define DECOMPOSED_PYTHON_SRC_HLO_H_

#include <pybind11/pybind11.h>

#include "three_way.h"  // ThrowStatusFn

namespace decomposed::python {

// Adds _hlo_text, _hlo_summary_json, _hlo_instructions, _hlo_parse and
// _hlo_load to `m`.
void RegisterHlo(pybind11::module_& m, ThrowStatusFn throw_status);

}  // namespace decomposed::python

#endif  // DECOMPOSED_PYTHON_SRC_HLO_H_
