# The evaluator against NumPy and PyTorch (test/eval_interop.py): random
# inputs in every element type an op takes, and whole graphs (an MLP,
# layer norm, softmax, attention, an embedding gather, a KV-cache update,
# a while loop, a conditional, top-k, a transformer decoder layer) in the
# three numerics modes. The script builds each module with the Python
# classes protoc generates from proto/ and runs it with eval_npy_tool.
add_executable(eval_npy_tool ${CMAKE_CURRENT_SOURCE_DIR}/eval_npy_tool.cc)
target_link_libraries(eval_npy_tool PRIVATE decomposed_lib)
target_compile_options(eval_npy_tool PRIVATE -Wall -Wextra -Wno-missing-field-initializers)
add_test(NAME eval_interop
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/eval_interop.py
                 $<TARGET_FILE:eval_npy_tool> $<TARGET_FILE:protobuf::protoc>
                 ${PROJECT_SOURCE_DIR}/proto ${CMAKE_BINARY_DIR}/eval_interop_scratch)
set_tests_properties(eval_interop PROPERTIES TIMEOUT 600)
