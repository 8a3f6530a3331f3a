# The malformed-input corpus (test/corpus/), run through the CLI: one ctest
# per command in the manifest. Outside sanitizer builds every case also runs
# under a 256 MiB address-space limit (ASan needs terabytes of virtual
# address space).
set(DECOMPOSED_CORPUS_MEMLIMIT)
if(NOT DECOMPOSED_SANITIZE)
  set(DECOMPOSED_CORPUS_MEMLIMIT --memory-limit-mib 256)
endif()
foreach(cmd inspect verify unpack pack "bundle verify" compare "compare actual" stats)
  string(REPLACE " " "_" id "${cmd}")
  add_test(NAME corpus_${id}
           COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/test/corpus/run_corpus.py
                   --cli $<TARGET_FILE:decomposed_cli> --command "${cmd}"
                   ${DECOMPOSED_CORPUS_MEMLIMIT})
  set_tests_properties(corpus_${id} PROPERTIES TIMEOUT 900
                       LABELS corpus)
endforeach()
