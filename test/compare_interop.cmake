# Interop: `decomposed compare` and `decomposed stats` against
# torch.testing.assert_close / torch.isclose, numpy.isclose and NumPy
# evaluations of the metrics (test/compare_interop.py).
add_test(NAME compare_interop
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/compare_interop.py
                 $<TARGET_FILE:decomposed_cli>
                 ${CMAKE_BINARY_DIR}/compare_interop_scratch)
set_tests_properties(compare_interop PROPERTIES TIMEOUT 900)
