# Interop: /usr/bin/python3 builds decomposed and classic snapshot files by
# hand from the spec, runs build/bin/snapshot-unpack, and np.load()s every
# output (test/unpack_interop.py).
add_test(NAME unpack_interop
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/unpack_interop.py
                 $<TARGET_FILE:snapshot_unpack>
                 ${CMAKE_BINARY_DIR}/unpack_interop_scratch
                 $<TARGET_FILE:decomposed_cli>
                 ${PROJECT_SOURCE_DIR}/examples/example.decomposed_hlo_snapshot)
set_tests_properties(unpack_interop PROPERTIES TIMEOUT 600)
