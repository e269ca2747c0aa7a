# Baseline summaries (issue 11): summarize, a summary wherever a snapshot is (diff, check,
# series) with identical results, dump, refusals, hostile summaries, the real corpus.
add_executable(check_summary ${CMAKE_CURRENT_SOURCE_DIR}/unit/check_summary.c)
target_link_libraries(check_summary PRIVATE sdp_test_helpers)
add_test(NAME summary_unit COMMAND check_summary)
set_tests_properties(summary_unit PROPERTIES LABELS unit TIMEOUT 600)

foreach(part fixtures hostile real)
  add_test(NAME summary_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_summary.py
                   --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR} ${part})
  set_tests_properties(summary_${part} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)
endforeach()
# Every comparison on every real file: in the full run (tests/full.sh), like report_real.
add_test(NAME summary_real_full
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_summary.py
                 --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR} real_full)
set_tests_properties(summary_real_full PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 1800 LABELS full)
