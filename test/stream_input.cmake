# Valid snapshots read from a pipe and a FIFO give what the regular file
# gives (issue 12 §3; test/stream_input.py). The malformed inputs are the
# corpus runner's (test/corpus/run_corpus.py runs each case through both).
add_test(NAME stream_input
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/stream_input.py
                 $<TARGET_FILE:decomposed_cli> $<TARGET_FILE:snapshot_unpack>
                 ${PROJECT_SOURCE_DIR}/examples/example.decomposed_hlo_snapshot)
set_tests_properties(stream_input PROPERTIES TIMEOUT 900)
