# Naming memory that has no user frame (issue 9): the native site rule, forward_frames,
# -g leaf/stack noise, folded output, against testdata/native/ and tests/truth/truth_diff.py.
add_executable(check_naming ${CMAKE_CURRENT_SOURCE_DIR}/unit/check_naming.c)
target_link_libraries(check_naming PRIVATE sdp_test_helpers)
add_test(NAME naming_unit COMMAND check_naming)
set_tests_properties(naming_unit PROPERTIES LABELS unit TIMEOUT 600)

add_test(NAME naming_cli
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_naming_cli.py
                 --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR})
set_tests_properties(naming_cli PROPERTIES LABELS cli TIMEOUT 600)

# One site, one label in every view (issue 28): top, frag, trace, diff text and JSON,
# folded stacks and the HTML report against labels worked out by CPython.
add_test(NAME site_labels
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_site_labels.py
                 --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR})
set_tests_properties(site_labels PROPERTIES LABELS cli TIMEOUT 300)
