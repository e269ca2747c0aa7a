# snapdiff OLD NEW (issue 3): attribution and diff unit tests, CLI behaviour, real corpus.
add_executable(check_diff ${CMAKE_CURRENT_SOURCE_DIR}/check_diff.c)
target_link_libraries(check_diff PRIVATE snapdiff_core PkgConfig::CHECK)
target_include_directories(check_diff PRIVATE ${PROJECT_SOURCE_DIR}/src)  # the renderers
target_compile_definitions(check_diff PRIVATE
  SNAPDIFF_TESTDATA="${PROJECT_SOURCE_DIR}/testdata")
add_test(NAME diff_unit COMMAND check_diff)

foreach(part fixtures json folded errors real)
  add_test(NAME diff_cli_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/test_diff_cli.py
                   --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR} ${part})
  set_tests_properties(diff_cli_${part} PROPERTIES SKIP_RETURN_CODE 77)
endforeach()
