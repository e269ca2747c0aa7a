# Ranks and OOMs (issue 19): one-device files of other ordinals, check --max-ooms, the oom
# figures against tests/truth/truth_frag.py, real one-device files compared pairwise.
foreach(part oom gate ranks series sites jq real)
  add_test(NAME ranks_oom_cli_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_ranks_oom_cli.py
                   --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR} ${part})
  set_tests_properties(ranks_oom_cli_${part} PROPERTIES LABELS cli TIMEOUT 600
                       SKIP_RETURN_CODE 77 ENVIRONMENT "${SNAPDIFF_TEST_ENV}")
endforeach()

add_executable(check_ranks_oom ${CMAKE_CURRENT_SOURCE_DIR}/unit/check_ranks_oom.c)
target_link_libraries(check_ranks_oom PRIVATE sdp_test_helpers)
target_include_directories(check_ranks_oom PRIVATE ${PROJECT_SOURCE_DIR}/src)  # sdp_fit_key
add_test(NAME ranks_oom_unit COMMAND check_ranks_oom)
set_tests_properties(ranks_oom_unit PROPERTIES LABELS unit TIMEOUT 600)
