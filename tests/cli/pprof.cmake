# --format pprof (issue 12): the profile decoded by a small protobuf reader in Python and
# compared with CPython's figures; read back by `go tool pprof`; every real snapshot.
foreach(part fixtures go real)
  add_test(NAME pprof_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_pprof.py ${SNAPDIFF_BIN} ${part})
  set_tests_properties(pprof_${part} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)
endforeach()
