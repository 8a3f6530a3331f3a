# The replay of several ranks as an MPI job (EvaluateRanksOverMpi), only in
# a build with DECOMPOSED_WITH_MPI (scripts/build.sh's): `mpirun -np 2`,
# `-np 3` and `-np 4` on loopback, one rank or a share of the ranks per
# process, give the same bytes as the in-process replay, and a rank that
# disagrees or stops early ends the job on every process
# (test/replicas_mpi.py).
if(DECOMPOSED_WITH_MPI)
  find_program(DECOMPOSED_MPIEXEC NAMES mpirun mpiexec REQUIRED)
  add_executable(replicas_mpi_tool ${CMAKE_CURRENT_LIST_DIR}/replicas_mpi_tool.cc)
  target_link_libraries(replicas_mpi_tool PRIVATE decomposed_lib decomposed_test_util MPI::MPI_CXX)
  target_compile_options(replicas_mpi_tool PRIVATE -Wall -Wextra -Wno-missing-field-initializers)
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  add_test(NAME replicas_mpi
    COMMAND Python3::Interpreter ${CMAKE_CURRENT_LIST_DIR}/replicas_mpi.py
            $<TARGET_FILE:replicas_mpi_tool> ${DECOMPOSED_MPIEXEC}
            $<TARGET_FILE:decomposed_cli>)
  set_tests_properties(replicas_mpi PROPERTIES TIMEOUT 600)
endif()
