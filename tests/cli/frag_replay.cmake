# frag quotes the replay (issue 20): advice and oom outcomes equal `snapdiff replay --json`.
foreach(mode fixtures real)
  add_test(NAME frag_replay_${mode}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_frag_replay.py
                   --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR} ${mode})
  set_tests_properties(frag_replay_${mode} PROPERTIES LABELS cli TIMEOUT 600
                       SKIP_RETURN_CODE 77 ENVIRONMENT "${SNAPDIFF_TEST_ENV}")
endforeach()
