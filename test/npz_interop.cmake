# Interop: `decomposed unpack --to npz` for every element type, opened with
# numpy.load and compared with the .npy files unpack writes
# (test/npz_interop.py, on unpack_interop.py's case builders).
add_test(NAME npz_interop
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/npz_interop.py
                 $<TARGET_FILE:decomposed_cli>
                 ${CMAKE_BINARY_DIR}/npz_interop_scratch)
set_tests_properties(npz_interop PROPERTIES TIMEOUT 600)
