# Bundle round trips checked by NumPy and PyTorch (Debian's python3-numpy and
# python3-torch, at /usr/bin/python3).
add_executable(capture_interop_writer ${CMAKE_CURRENT_SOURCE_DIR}/capture_interop_writer.cc)
target_link_libraries(capture_interop_writer PRIVATE decomposed_lib)
target_compile_options(capture_interop_writer PRIVATE -Wall -Wextra -Wno-missing-field-initializers)
add_test(NAME capture_interop
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/capture_interop.py
                 --writer $<TARGET_FILE:capture_interop_writer>
                 --cli $<TARGET_FILE:decomposed_cli>
                 --workdir ${CMAKE_CURRENT_BINARY_DIR}/capture_interop
                 --unpack $<TARGET_FILE:snapshot_unpack>)
set_tests_properties(capture_interop PROPERTIES TIMEOUT 600)
