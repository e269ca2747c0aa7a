# Ranks and OOMs (issue 19): one-device files of other ordinals, check --max-ooms, the oom
# figures against tests/truth_frag.py, real one-device files compared pairwise.
foreach(part oom gate ranks series sites jq real)
  add_test(NAME issue19_cli_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/test_issue19_cli.py
                   --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR} ${part})
  set_tests_properties(issue19_cli_${part} PROPERTIES LABELS cli TIMEOUT 600
                       SKIP_RETURN_CODE 77 ENVIRONMENT "${SNAPDIFF_TEST_ENV}")
endforeach()

add_executable(check_issue19 ${CMAKE_CURRENT_SOURCE_DIR}/check_issue19.c)
target_link_libraries(check_issue19 PRIVATE sdp_test_helpers)
target_include_directories(check_issue19 PRIVATE ${PROJECT_SOURCE_DIR}/src)  # sdp_fit_key
add_test(NAME issue19_unit COMMAND check_issue19)
set_tests_properties(issue19_unit PROPERTIES LABELS unit TIMEOUT 600)
