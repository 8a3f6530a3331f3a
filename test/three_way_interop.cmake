# Interop: `decomposed compare --baseline` (the three-way comparison) and
# `compare --plot` against an independent NumPy computation of Neuron's
# definitions, the guidelines' pass and fail examples, and the SVG pictures
# parsed as XML and rendered by rsvg-convert (test/three_way_interop.py).
add_test(NAME three_way_interop
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/three_way_interop.py
                 $<TARGET_FILE:decomposed_cli>
                 ${CMAKE_BINARY_DIR}/three_way_interop_scratch)
set_tests_properties(three_way_interop PROPERTIES TIMEOUT 600 LABELS compare)
