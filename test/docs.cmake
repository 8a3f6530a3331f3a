# The documents name only what exists (test/docs/check_docs.py): paths,
# identifiers, links and anchors in README.md and docs/*.md, and the
# docs/format.md sections the code cites. docs_check_selftest shows that the
# check reports each kind of defect.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME docs_check
  COMMAND Python3::Interpreter ${CMAKE_CURRENT_LIST_DIR}/docs/check_docs.py ${PROJECT_SOURCE_DIR})
add_test(NAME docs_check_selftest
  COMMAND Python3::Interpreter ${CMAKE_CURRENT_LIST_DIR}/docs/check_docs.py --self-test)
# The counts the README quotes (tests, corpus files and rows, fuzz seconds)
# are the tree's (test/docs/readme_counts.py).
# The count is the README's build's (scripts/test.sh): not registered in the
# sanitizer tree, which leaves out install_downstream and the benchmarks.
if(DECOMPOSED_INSTALL AND NOT DECOMPOSED_SANITIZE)
  add_test(NAME readme_counts
    COMMAND Python3::Interpreter ${CMAKE_CURRENT_LIST_DIR}/docs/readme_counts.py
            ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR} ${CMAKE_CTEST_COMMAND})
endif()
