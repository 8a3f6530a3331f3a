# python_wheel: `pip wheel .` (pyproject.toml's in-tree build backend),
# installed into a fresh venv and into Debian's interpreter with --user
# --break-system-packages, imported from outside the tree, and uninstalled
# (test/python_wheel.py). The wheel reuses this build tree's extension (the
# backend's build-dir setting: decomposed_python is brought up to date, so
# nothing compiles a second time); python_wheel.py without --build-dir uses
# the backend's own build folder, as a user's `pip install .` does (minutes
# of compiling the first time), by hand.
#
# Labelled python and wheel: `ctest -LE wheel` leaves it out. Without pip or
# venv it is skipped (exit 77) with the reason. Not in sanitizer builds: an
# ASan-instrumented extension is no wheel to install (python_package runs
# the extension under ASan there).
if(DECOMPOSED_BUILD_PYTHON AND NOT DECOMPOSED_SANITIZE)
  add_test(NAME python_wheel
           COMMAND ${Python_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/python_wheel.py
                   --source ${PROJECT_SOURCE_DIR} --python ${Python_EXECUTABLE}
                   --build-dir ${CMAKE_BINARY_DIR})
  set_tests_properties(python_wheel PROPERTIES
                       TIMEOUT 900 LABELS "python;wheel" SKIP_RETURN_CODE 77
                       # It may bring decomposed_python up to date in this
                       # tree: not while python_package imports it. Its
                       # backend reconfigures this tree (cmake -S -B), which
                       # rewrites the cmake_install.cmake files: not while
                       # install_downstream installs from them.
                       RESOURCE_LOCK "decomposed_python_extension;build_tree_configure")
  if(TEST python_package)
    set_tests_properties(python_package PROPERTIES
                         RESOURCE_LOCK decomposed_python_extension)
  endif()
endif()

