// decomposed.run in the Python package: decomposed._decomposed._run, a thin
// wrapper over run/run.h (LoadProgram, Execute) whose public face is
// decomposed.run in python/decomposed/__init__.py.
//
// The GIL is released while the program loads and runs; it is taken again
// inside a Python custom-call target and when a value borrowed from a NumPy
// array is released.
#ifndef DECOMPOSED_PYTHON_SRC_RUN_H_
#define DECOMPOSED_PYTHON_SRC_RUN_H_

#include <pybind11/pybind11.h>

#include "three_way.h"

namespace decomposed::python {

void RegisterRun(pybind11::module_& m, ThrowStatusFn throw_status);

}  // namespace decomposed::python

#endif  // DECOMPOSED_PYTHON_SRC_RUN_H_
