# The documents name only what exists (test/docs/check_docs.py): paths,
# identifiers, links and anchors in README.md and docs/*.md, and the
# docs/format.md sections the code cites. docs_check_selftest shows that the
# check reports each kind of defect.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME docs_check
  COMMAND Python3::Interpreter ${CMAKE_CURRENT_LIST_DIR}/docs/check_docs.py ${PROJECT_SOURCE_DIR})
add_test(NAME docs_check_selftest
  COMMAND Python3::Interpreter ${CMAKE_CURRENT_LIST_DIR}/docs/check_docs.py --self-test)
