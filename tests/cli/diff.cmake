# snapdiff OLD NEW (issue 3): attribution and diff unit tests, CLI behaviour, real corpus.
add_executable(check_diff ${CMAKE_CURRENT_SOURCE_DIR}/unit/check_diff.c)
target_link_libraries(check_diff PRIVATE sdp_test_helpers)
target_include_directories(check_diff PRIVATE ${PROJECT_SOURCE_DIR}/src)  # the renderers
add_test(NAME diff_unit COMMAND check_diff)
set_tests_properties(diff_unit PROPERTIES LABELS unit TIMEOUT 600)

foreach(part fixtures json folded errors real)
  add_test(NAME diff_cli_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_diff_cli.py
                   --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR} ${part})
  set_tests_properties(diff_cli_${part} PROPERTIES SKIP_RETURN_CODE 77)
endforeach()

# Code that moved is not growth (issue 36): moved sites paired, against truth_moved.py.
add_test(NAME diff_moved_cli
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_moved_cli.py
                 --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR})
