# `decomposed run` against PyTorch (test/run_interop.py): a torch MLP's
# inputs and outputs packed with `decomposed pack`, its module built with
# the Python classes protoc generates from proto/; run --compare passes,
# and fails naming the tensor when one output is perturbed.
add_test(NAME run_interop
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/run_interop.py
                 $<TARGET_FILE:decomposed_cli> $<TARGET_FILE:protobuf::protoc>
                 ${PROJECT_SOURCE_DIR}/proto ${CMAKE_BINARY_DIR}/run_interop_scratch)
set_tests_properties(run_interop PROPERTIES TIMEOUT 600)
