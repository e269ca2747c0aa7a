# snapdiff report (issue 12): a self-contained HTML page, rendered by headless Chromium
# (tests/cli/test_report.py; the browser parts skip, exit 77, where Chromium cannot run).
foreach(part offline cli browser real)
  add_test(NAME report_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_report.py ${SNAPDIFF_BIN} ${part})
  set_tests_properties(report_${part} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 1200 LABELS report)
endforeach()
# Every real snapshot in a browser takes a minute and a half on 2 cores: part of the full
# run (tests/full.sh asan runs it), not of the 5-minute test command (tests/run.sh).
set_tests_properties(report_real PROPERTIES LABELS "report;full")
# The ranks of one job side by side (issue 19) and training-log curves (issue 21) in the
# report (tests/cli/test_report_views.py; the browser checks are left out where Chromium cannot run).
foreach(part ranks curve)
  add_test(NAME report_views_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_report_views.py ${SNAPDIFF_BIN} ${part})
  set_tests_properties(report_views_${part} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 1200 LABELS report)
endforeach()
# the curve pages (about 35 s of Chromium) in the full run: tests/run.sh keeps to 5 minutes
set_tests_properties(report_views_curve PROPERTIES LABELS "report;full")
