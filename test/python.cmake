# The Python package's pytest suite (test/python/), with the package from
# the build tree and the CLI it checks against. pytest exits 5 when it
# collected no test: that is a failure here, never a pass (nor a skip).
if(DECOMPOSED_BUILD_PYTHON AND TARGET decomposed_cli)
  add_test(NAME python_package
           COMMAND ${CMAKE_COMMAND} -E env
                   PYTHONPATH=${CMAKE_BINARY_DIR}/python
                   DECOMPOSED_CLI=$<TARGET_FILE:decomposed_cli>
                   PYTHONDONTWRITEBYTECODE=1
                   ${Python_EXECUTABLE} -m pytest -q -p no:cacheprovider
                   ${PROJECT_SOURCE_DIR}/test/python)
  set_tests_properties(python_package PROPERTIES TIMEOUT 1200 LABELS python)
endif()
