# Every JSON the CLI writes (--json, capture plan, manifest.json, meta.json)
# with strings (paths, environment values) that are not UTF-8: no exception
# escapes, the output stays valid JSON.
add_test(NAME cli_json_utf8
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/cli_json_utf8.py
                 $<TARGET_FILE:decomposed_cli> ${PROJECT_SOURCE_DIR})
