# The `decomposed capture plan` dry run against hand-worked plans.
add_test(NAME capture_plan
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/capture_plan.py
                 $<TARGET_FILE:decomposed_cli>)
