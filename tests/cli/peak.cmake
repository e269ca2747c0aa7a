# The peak (issue 19): unit tests of peak.h on testdata/peak/, and `snapdiff top` against
# tests/truth/truth_peak.py (fixtures, text, the real corpus).
add_executable(check_peak ${CMAKE_CURRENT_SOURCE_DIR}/unit/check_peak.c)
target_link_libraries(check_peak PRIVATE sdp_test_helpers)
add_test(NAME peak_unit COMMAND check_peak)
set_tests_properties(peak_unit PROPERTIES LABELS unit TIMEOUT 600)

foreach(part fixtures text real diff)
  add_test(NAME top_cli_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_top_cli.py
                   --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR} ${part})
  set_tests_properties(top_cli_${part} PROPERTIES SKIP_RETURN_CODE 77 LABELS cli TIMEOUT 600)
endforeach()

# snapdiff OLD NEW: one run twice or two runs, --at end|peak, compared_as (issue 19).
add_test(NAME diff_compared_as
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_compared_as.py
                 --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR})
set_tests_properties(diff_compared_as PROPERTIES LABELS cli TIMEOUT 300)
