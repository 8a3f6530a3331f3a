# Every public header's Example compiles (test/header_examples.py): each
# Example block becomes a function body in one translation unit that
# includes every header, compiled with -fsyntax-only.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME header_examples
  COMMAND Python3::Interpreter ${CMAKE_CURRENT_LIST_DIR}/header_examples.py
          ${PROJECT_SOURCE_DIR} ${CMAKE_CXX_COMPILER}
          -I ${CMAKE_BINARY_DIR}/proto_gen
          -I ${CMAKE_BINARY_DIR}/proto_gen/decomposed/proto)
