# Interop: `decomposed compare --baseline` (the three-way comparison) and
# `compare --plot` against an independent NumPy computation of Neuron's
# definitions, the guidelines' pass and fail examples, and the SVG pictures
# parsed as XML and rendered by rsvg-convert (test/three_way_interop.py).
add_test(NAME three_way_interop
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/three_way_interop.py
                 $<TARGET_FILE:decomposed_cli>
                 ${CMAKE_BINARY_DIR}/three_way_interop_scratch)
set_tests_properties(three_way_interop PROPERTIES TIMEOUT 600 LABELS compare)

# The malformed-input corpus's compare files as the BASELINE and ACTUAL
# sides of the three-way comparison (test/three_way_corpus.py): exit 2 with
# compare's message, no crash; outside sanitizer builds also under a 256 MiB
# address-space limit, as test/corpus.cmake runs the corpus.
set(_three_way_memlimit)
if(NOT DECOMPOSED_SANITIZE)
  set(_three_way_memlimit --memory-limit-mib 256)
endif()
add_test(NAME corpus_compare_three_way
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/three_way_corpus.py
                 --cli $<TARGET_FILE:decomposed_cli> ${_three_way_memlimit})
set_tests_properties(corpus_compare_three_way PROPERTIES TIMEOUT 900 LABELS corpus)
