# snapdiff replay (issue 20): on every real snapshot with a trace, placements matched
# >= 99.5% and the recorded-settings peak equal to tests/truth/truth_replay.py's.
add_test(NAME replay_cli_real
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_replay_cli.py
                 ${SNAPDIFF_BIN} ${PROJECT_SOURCE_DIR} real)
set_tests_properties(replay_cli_real PROPERTIES SKIP_RETURN_CODE 77
                     ENVIRONMENT "SNAPDIFF_SHARED=${SNAPDIFF_SHARED}")
# The hand-worked fixtures of testdata/make_replay_fixtures.py (expected.json).
add_test(NAME replay_cli_fixtures
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_replay_cli.py
                 ${SNAPDIFF_BIN} ${PROJECT_SOURCE_DIR} fixtures)
# The model's rules, one by one (tests/unit/check_replay.c).
add_executable(check_replay ${CMAKE_CURRENT_SOURCE_DIR}/unit/check_replay.c)
target_link_libraries(check_replay PRIVATE sdp_test_helpers)
target_include_directories(check_replay PRIVATE ${PROJECT_SOURCE_DIR}/src)
add_test(NAME replay_unit COMMAND check_replay)
set_tests_properties(replay_unit PROPERTIES LABELS unit)
# The replay against torch itself: recordings made on an NVIDIA H200 with torch 2.11 by
# tests/device/whatif_record.py, checked against each run's torch.cuda.memory_stats()
# (every recording under its own settings, and every what-if of the default run).
add_test(NAME replay_torch_h200
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/device/whatif_check.py
                 ${SNAPDIFF_BIN} ${PROJECT_SOURCE_DIR}/testdata/torch/h200-torch2.11-whatif.tar.xz
                 ${PROJECT_SOURCE_DIR}/testdata/torch/h200-torch2.11-features.tar.xz)
set_tests_properties(replay_torch_h200 PROPERTIES LABELS cli)

# Why the fidelity is low (issue 36): trust_reasons on testdata/trust/ and the real
# snapshots, against tests/truth/truth_trust.py.
foreach(part fixtures real)
  add_test(NAME replay_trust_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_trust_cli.py
                   --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR} ${part})
  set_tests_properties(replay_trust_${part} PROPERTIES SKIP_RETURN_CODE 77
                       ENVIRONMENT "SNAPDIFF_SHARED=${SNAPDIFF_SHARED}")
endforeach()
