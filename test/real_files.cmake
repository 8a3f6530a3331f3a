# Every command over the files other people's tools wrote, in shared/real/
# beside the repository (test/real_files.py). Skipped, with a message, when
# that folder is absent. .ci/run also runs it after the suite.
add_test(NAME real_files
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/real_files.py
          $<TARGET_FILE:decomposed_cli>)
set_tests_properties(real_files PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 1200)
