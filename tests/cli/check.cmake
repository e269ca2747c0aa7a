# snapdiff check (issue 11): the CI gate, its output formats, the limits file, many ranks.
foreach(part limits errors config github junit ranks spread)
  add_test(NAME check_cli_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_check_cli.py
                   --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR} ${part})
  set_tests_properties(check_cli_${part} PROPERTIES LABELS cli TIMEOUT 600)
endforeach()

add_executable(check_gate ${CMAKE_CURRENT_SOURCE_DIR}/unit/check_gate.c)
target_link_libraries(check_gate PRIVATE sdp_test_helpers)
add_test(NAME gate_unit COMMAND check_gate)
set_tests_properties(gate_unit PROPERTIES LABELS unit TIMEOUT 600)
