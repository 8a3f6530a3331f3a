# install_downstream: `cmake --install` this build into a temp prefix, then
# build and run test/downstream against the installed package (see
# test/downstream/run.cmake). Needs the whole build (the CLI is installed).
if(DECOMPOSED_INSTALL)
  add_test(NAME install_downstream
           COMMAND ${CMAKE_COMMAND}
                   -DBUILD_DIR=${CMAKE_BINARY_DIR}
                   -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                   -DWORK_DIR=${CMAKE_BINARY_DIR}/install_test
                   "-DPYTHON_INSTALL_DIR=${DECOMPOSED_PYTHON_INSTALL_DIR}"
                   "-DPYTHON=${Python_EXECUTABLE}"
                   -P ${PROJECT_SOURCE_DIR}/test/downstream/run.cmake)
  # python_wheel reconfigures this tree: not during the install.
  set_tests_properties(install_downstream PROPERTIES TIMEOUT 900
                       RESOURCE_LOCK build_tree_configure)
endif()
