# snapdiff series (issue 10): group tables and trend statistics, CLI behaviour, real corpus.
add_executable(check_series ${CMAKE_CURRENT_SOURCE_DIR}/unit/check_series.c)
target_link_libraries(check_series PRIVATE sdp_test_helpers)
target_include_directories(check_series PRIVATE ${PROJECT_SOURCE_DIR}/src)  # the renderers
add_test(NAME series_unit COMMAND check_series)
set_tests_properties(series_unit PROPERTIES LABELS unit TIMEOUT 600)

foreach(part fixtures json options real)
  add_test(NAME series_cli_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_series_cli.py
                   --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR} ${part})
  set_tests_properties(series_cli_${part} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)
endforeach()

# Job folders as the frameworks write them (issue 27): testdata/jobs.
add_test(NAME series_jobs_cli
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_job_cli.py
                 --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR})
set_tests_properties(series_jobs_cli PROPERTIES TIMEOUT 300)
