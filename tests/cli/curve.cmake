# snapdiff curve (issue 21): memory figures from training logs; reader, statistics, CLI.
add_executable(check_curve ${CMAKE_CURRENT_SOURCE_DIR}/unit/check_curve.c)
target_link_libraries(check_curve PRIVATE sdp_test_helpers)
target_include_directories(check_curve PRIVATE ${PROJECT_SOURCE_DIR}/src)  # the reader
add_test(NAME curve_unit COMMAND check_curve)
set_tests_properties(curve_unit PROPERTIES LABELS unit TIMEOUT 600)

foreach(part fixtures gate hostile frameworks csv config)
  add_test(NAME curve_cli_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_curve_cli.py
                   --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR} ${part})
  set_tests_properties(curve_cli_${part} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)
endforeach()
