# Crash safety: SIGKILL unpack, unpack --to npz and pack mid-write (test/crash_safety.py).
foreach(cmd unpack unpack-npz pack)
  add_test(NAME crash_safety_${cmd}
           COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/test/crash_safety.py
                   --cli $<TARGET_FILE:decomposed_cli> --command ${cmd} --mib 32)
  set_tests_properties(crash_safety_${cmd} PROPERTIES TIMEOUT 900
                       LABELS crash_safety)
endforeach()
