# One open per input file, for every command that reads a snapshot and for
# the Python package's open() (test/open_count.py, under strace). Skipped,
# visibly, where strace is missing or tracing is not allowed.
set(_open_count_python)
if(DECOMPOSED_BUILD_PYTHON)
  set(_open_count_python --python-path ${CMAKE_BINARY_DIR}/python)
  if(DECOMPOSED_SANITIZE)
    # The interpreter preloads the ASan runtime, as python_package's does.
    list(APPEND _open_count_python --python-preload ${DECOMPOSED_TEST_PRELOAD})
  endif()
endif()
add_test(NAME open_count
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/open_count.py
                 $<TARGET_FILE:decomposed_cli> $<TARGET_FILE:snapshot_unpack>
                 ${PROJECT_SOURCE_DIR}/examples/example.decomposed_hlo_snapshot
                 ${_open_count_python})
set_tests_properties(open_count PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77)
