# cli_version: `decomposed --version` prints DECOMPOSED_VERSION of
# include/decomposed/version.h (CMake's PROJECT_VERSION is read from it) and
# nothing else. test/python/test_package.py checks its exit code and that
# the Python package says the same.
add_test(NAME cli_version COMMAND decomposed_cli --version)
string(REPLACE "." "\\." _version_re "${PROJECT_VERSION}")
set_tests_properties(cli_version PROPERTIES
                     PASS_REGULAR_EXPRESSION "^decomposed ${_version_re}\n$")
