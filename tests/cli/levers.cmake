# The levers at each peak and oom (issue 36, docs/levers.md): `snapdiff top --json` and
# `snapdiff frag --json` against tests/truth/truth_levers.py on testdata/levers/ (hand-worked
# too), the oom fixtures and the real corpus.
foreach(part fixtures oom real steps)
  add_test(NAME levers_cli_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_levers_cli.py
                   --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR} ${part})
  set_tests_properties(levers_cli_${part} PROPERTIES SKIP_RETURN_CODE 77 LABELS cli
                       TIMEOUT 900)
endforeach()
