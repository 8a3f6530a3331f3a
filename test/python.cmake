# The Python package's pytest suite (test/python/), with the package from
# the build tree and the CLI it checks against. pytest exits 5 when it
# collected no test: that is a failure here, never a pass (nor a skip).
#
# Sanitizer builds (scripts/sanitize.sh): the extension is instrumented but
# the interpreter is not, so the ASan runtime is preloaded, and libstdc++
# with it: ASan intercepts __cxa_throw when it starts, and an interpreter
# that is not linked to libstdc++ would otherwise leave the interceptor
# unresolved ("CHECK failed: asan_interceptors.cpp ... real___cxa_throw")
# at the first C++ exception the module throws into Python. Leak detection
# is off for this one test because CPython keeps its interned objects and
# module state until exit, which LeakSanitizer would report.
if(DECOMPOSED_BUILD_PYTHON AND TARGET decomposed_cli)
  set(_python_env
      PYTHONPATH=${CMAKE_BINARY_DIR}/python
      DECOMPOSED_CLI=$<TARGET_FILE:decomposed_cli>
      PYTHONDONTWRITEBYTECODE=1)
  if(DECOMPOSED_SANITIZE)
    # DECOMPOSED_TEST_PRELOAD: the ASan runtime and libstdc++
    # (test/CMakeLists.txt).
    list(APPEND _python_env "LD_PRELOAD=${DECOMPOSED_TEST_PRELOAD}"
         ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0)
  endif()
  add_test(NAME python_package
           COMMAND ${CMAKE_COMMAND} -E env ${_python_env}
                   ${Python_EXECUTABLE} -m pytest -q -rs -p no:cacheprovider
                   ${PROJECT_SOURCE_DIR}/test/python)
  set_tests_properties(python_package PROPERTIES TIMEOUT 1800 LABELS python)
endif()
