# fuzz_plan: every row of test/fuzz/plan.tsv names a fuzz target that
# exists, and every target has a committed seed corpus
# (test/fuzz_plan.py). A row naming no target would silently give its time
# to nothing; a target without seeds used to make libFuzzer exit 1 at start,
# which CI read as a finding.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME fuzz_plan
         COMMAND Python3::Interpreter ${CMAKE_CURRENT_LIST_DIR}/fuzz_plan.py
                 ${PROJECT_SOURCE_DIR})
