# snapdiff frag (issue 4): unit tests on testdata/frag/, every figure against
# tests/truth/truth_frag.py (fixtures and the real corpus), text/--map/--svg/--json behaviour.
add_executable(check_frag ${CMAKE_CURRENT_SOURCE_DIR}/unit/check_frag.c)
target_link_libraries(check_frag PRIVATE sdp_test_helpers)
add_test(NAME frag_unit COMMAND check_frag)
set_tests_properties(frag_unit PROPERTIES LABELS unit TIMEOUT 600)

foreach(part fixtures output real)
  add_test(NAME frag_cli_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_frag_cli.py
                   ${SNAPDIFF_BIN} ${PROJECT_SOURCE_DIR} ${part})
  set_tests_properties(frag_cli_${part} PROPERTIES SKIP_RETURN_CODE 77)
endforeach()
