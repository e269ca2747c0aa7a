# snapdiff plan (issue 37, docs/plan.md): against tests/truth/truth_plan.py and the
# recordings themselves, on the fixtures of testdata/make_plan_fixtures.py and on the real
# sweep in ../shared.
add_test(NAME plan_cli_fixtures
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_plan_cli.py
                 ${SNAPDIFF_BIN} ${PROJECT_SOURCE_DIR} fixtures)
set_tests_properties(plan_cli_fixtures PROPERTIES LABELS cli)
add_test(NAME plan_cli_real
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_plan_cli.py
                 ${SNAPDIFF_BIN} ${PROJECT_SOURCE_DIR} real)
set_tests_properties(plan_cli_real PROPERTIES SKIP_RETURN_CODE 77 LABELS cli
                     ENVIRONMENT "SNAPDIFF_SHARED=${SNAPDIFF_SHARED}")
