# Never over-claim (issue 9): frag verdicts full / fragmented on stranded memory above the
# floor, oom sites, diff warnings (one test per code), rounding, <no stack>.
foreach(part frag diff)
  add_test(NAME overclaim_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_overclaim_cli.py
                   ${SNAPDIFF_BIN} ${PROJECT_SOURCE_DIR} ${part})
  set_tests_properties(overclaim_${part} PROPERTIES LABELS cli TIMEOUT 600)
endforeach()
