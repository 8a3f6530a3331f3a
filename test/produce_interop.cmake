# NumPy -> `decomposed pack` -> a reader written in Python from the spec
# (unsigned length byte, exactly one u64s, region [2] always read).
# Needs Debian's /usr/bin/python3 with numpy (scripts/setup-debian.sh).
add_test(NAME produce_interop
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/produce_interop.py
                 $<TARGET_FILE:decomposed_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/produce_interop)
set_tests_properties(produce_interop PROPERTIES TIMEOUT 120)
