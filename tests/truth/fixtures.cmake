# Every testdata/make_*.py reproduces its fixtures byte for byte (issue 28): run in a
# temporary copy of testdata/ and tests/, compared with the committed files. A few seconds.
add_test(NAME fixture_generators
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_fixture_generators.py
                 ${PROJECT_SOURCE_DIR})
set_tests_properties(fixture_generators PROPERTIES LABELS docs TIMEOUT 600)
