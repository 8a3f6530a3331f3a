# decomposed run --bisect and the ranks of one step through the CLI
# (test/replay_cli.py).
add_test(NAME replay_cli
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/replay_cli.py
                 $<TARGET_FILE:decomposed_cli>
                 ${PROJECT_SOURCE_DIR}/examples/example.decomposed_hlo_snapshot)
set_tests_properties(replay_cli PROPERTIES TIMEOUT 300)
