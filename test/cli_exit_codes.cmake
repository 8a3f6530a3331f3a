# The `decomposed` CLI's exit-code rule (0 success, 1 bad input or I/O,
# 2 usage), run for every command (test/cli_exit_codes.py).
add_test(NAME cli_exit_codes
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/cli_exit_codes.py
                 $<TARGET_FILE:decomposed_cli>
                 ${PROJECT_SOURCE_DIR}/examples/example.decomposed_hlo_snapshot)
set_tests_properties(cli_exit_codes PROPERTIES TIMEOUT 300)
