# snapdiff trace (issue 10): unit tests of the replay, CLI behaviour against
# tests/truth/truth_trace.py (fixtures in testdata/trace/), and the real corpus.
add_executable(check_trace ${CMAKE_CURRENT_SOURCE_DIR}/unit/check_trace.c)
target_link_libraries(check_trace PRIVATE sdp_test_helpers)
target_include_directories(check_trace PRIVATE ${PROJECT_SOURCE_DIR}/src)   # trace_walk.h
add_test(NAME trace_unit COMMAND check_trace)
set_tests_properties(trace_unit PROPERTIES LABELS unit TIMEOUT 600)

foreach(part fixtures text json errors real)
  add_test(NAME trace_cli_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_trace_cli.py
                   --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR} ${part})
  set_tests_properties(trace_cli_${part} PROPERTIES SKIP_RETURN_CODE 77 LABELS cli TIMEOUT 600)
endforeach()
