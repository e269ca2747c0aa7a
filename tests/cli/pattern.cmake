# The patterns of growing diff groups (issue 9): the classifier's unit tests, and per
# pattern a CLI test of the text and JSON on testdata/patterns/ (make_pattern_fixtures.py).
add_executable(check_pattern ${CMAKE_CURRENT_SOURCE_DIR}/unit/check_pattern.c)
target_link_libraries(check_pattern PRIVATE sdp_test_helpers)
target_include_directories(check_pattern PRIVATE ${PROJECT_SOURCE_DIR}/src)  # hint words
add_test(NAME pattern_unit COMMAND check_pattern)
set_tests_properties(pattern_unit PROPERTIES LABELS unit TIMEOUT 600)

foreach(pair no_stack parameter_gradients optimizer_state model_copy hook user_cache
             eval_without_no_grad graph_kept_alive unknown fragmentation)
  add_test(NAME pattern_cli_${pair}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_pattern_cli.py
                   --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR} ${pair})
  set_tests_properties(pattern_cli_${pair} PROPERTIES LABELS cli TIMEOUT 300)
endforeach()

