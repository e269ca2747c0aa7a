# The public API's contract (issue 8): a NULL sd_error * accepted everywhere.
add_executable(check_api ${CMAKE_CURRENT_LIST_DIR}/check_api.c)
target_link_libraries(check_api PRIVATE sdp_test_helpers)
add_test(NAME api_unit COMMAND check_api)
set_tests_properties(api_unit PROPERTIES LABELS unit TIMEOUT 600)
