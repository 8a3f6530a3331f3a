# The layer rule (docs/architecture.md), checked two ways:
#  1. layering: no header or source includes a layer above (or beside) it.
#  2. codec_headers_standalone: every header of the header-only codec layers
#     compiles on its own, linked against decomposed::codec (Abseil) only.
#     poison/ shadows nlohmann and protobuf with #error headers, so a codec
#     header that reaches for either fails to build.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME layering
  COMMAND Python3::Interpreter ${CMAKE_CURRENT_LIST_DIR}/layering/check_layers.py ${PROJECT_SOURCE_DIR})

set(_codec_dirs io wire xla container)
file(GLOB _codec_headers RELATIVE ${PROJECT_SOURCE_DIR}/include
     ${PROJECT_SOURCE_DIR}/include/decomposed/*.h)
foreach(d ${_codec_dirs})
  file(GLOB _h RELATIVE ${PROJECT_SOURCE_DIR}/include
       ${PROJECT_SOURCE_DIR}/include/decomposed/${d}/*.h)
  list(APPEND _codec_headers ${_h})
endforeach()
set(_standalone_srcs)
foreach(h ${_codec_headers})
  string(MAKE_C_IDENTIFIER ${h} id)
  set(f ${CMAKE_CURRENT_BINARY_DIR}/standalone/${id}.cc)
  file(CONFIGURE OUTPUT ${f} CONTENT "#include \"${h}\"  // compiled alone\n")
  list(APPEND _standalone_srcs ${f})
endforeach()
add_library(codec_headers_standalone OBJECT ${_standalone_srcs})
target_include_directories(codec_headers_standalone BEFORE PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/layering/poison)
target_link_libraries(codec_headers_standalone PRIVATE decomposed::codec)
target_compile_options(codec_headers_standalone PRIVATE -Wall -Wextra -Werror
  -Wno-missing-field-initializers)
