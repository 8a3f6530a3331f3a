# Installs the current build into a fresh prefix, then configures, builds and
# runs test/downstream against it. Run by ctest (see test/install.cmake):
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -P run.cmake
foreach(v BUILD_DIR SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "${v} not set")
  endif()
endforeach()
set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGV}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f include/decomposed/container/box.h include/decomposed/proto/hlo.pb.h
          lib/cmake/decomposed/decomposedConfig.cmake bin/decomposed)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "install did not produce ${f}")
  endif()
endforeach()

# The Python package, when built, lands in the interpreter's platlib (here
# relative to the prefix) and imports from there.
if(PYTHON_INSTALL_DIR AND EXISTS ${BUILD_DIR}/python/decomposed)
  if(IS_ABSOLUTE "${PYTHON_INSTALL_DIR}")
    message(FATAL_ERROR "DECOMPOSED_PYTHON_INSTALL_DIR ${PYTHON_INSTALL_DIR} is "
                        "outside the prefix: the install test would write there")
  endif()
  set(pkg ${prefix}/${PYTHON_INSTALL_DIR})
  # No ';' in the -c program: run() takes its arguments as a CMake list.
  run(${CMAKE_COMMAND} -E env PYTHONPATH=${pkg} ${PYTHON} -c
      "import decomposed, os\nassert decomposed.__file__.startswith('${pkg}'), decomposed.__file__\nprint(os.path.basename(decomposed._decomposed.__file__))")
  if(NOT last_output MATCHES "^_decomposed")
    message(FATAL_ERROR "installed Python package: ${last_output}")
  endif()
endif()

run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/test/downstream -B ${build} -G Ninja
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    "-DDECOMPOSED_DIRS_TO_AVOID=${SOURCE_DIR}/include\;${BUILD_DIR}/proto_gen")
run(${CMAKE_COMMAND} --build ${build} -j 2)

set(example ${SOURCE_DIR}/examples/example.decomposed_hlo_snapshot)
run(${build}/codec_only ${example})
if(NOT last_output STREQUAL "inputs=2 outputs=1 snapshot=403\n")
  message(FATAL_ERROR "codec_only printed: ${last_output}")
endif()
run(${build}/full ${example})
foreach(want "\"type\":\"decomposed\"" "\"element_type\":\"S32\"" "module=example")
  string(FIND "${last_output}" "${want}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "full did not print ${want}:\n${last_output}")
  endif()
endforeach()
# The installed CLI runs too.
run(${prefix}/bin/decomposed inspect ${example} --json)
message(STATUS "downstream project built and ran against ${prefix}")
