# torch 2.14's newer keys (issue 27): pinned host memory (host_segments, host_traces), the
# annotate action, skip_actions, per-entry pool_id (trace per pool, replay), host memory in
# diff and series; CLI figures against tests/truth/truth_stats.py and CPython
# (fixtures testdata/basic/v2_14_*.pickle, written by testdata/make_fixtures.py).
add_test(NAME torch214_cli
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_torch214_cli.py ${SNAPDIFF_BIN})
set_tests_properties(torch214_cli PROPERTIES LABELS cli TIMEOUT 600)
