# The foundation (issue 2): unit tests of units, the pickle reader, the model and inputs;
# the corpus test (every real snapshot and fixture, in every container, against CPython);
# CLI behaviour of stats and dump.
add_executable(check_core ${CMAKE_CURRENT_SOURCE_DIR}/unit/check_core.c)
target_link_libraries(check_core PRIVATE sdp_test_helpers PkgConfig::ZLIB)
add_test(NAME core_unit COMMAND check_core)
set_tests_properties(core_unit PROPERTIES LABELS unit TIMEOUT 600)

# corpus_stats_dump: every fixture in every container, the real snapshots as written and
# as a torch.save zip; corpus_stats_dump_full (the full run): the real ones in every
# container too (re-pickled with protocols 0-5 by CPython: minutes; label plain, run on
# the plain build by tests/full.sh plain, since its cost is CPython's, not the reader's).
add_test(NAME corpus_stats_dump
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_corpus.py ${SNAPDIFF_BIN} --quick)
set_tests_properties(corpus_stats_dump PROPERTIES TIMEOUT 1800)
add_test(NAME corpus_stats_dump_full
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_corpus.py ${SNAPDIFF_BIN})
set_tests_properties(corpus_stats_dump_full PROPERTIES TIMEOUT 1800 LABELS "full;plain")

add_test(NAME cli_stats_dump
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_cli.py ${SNAPDIFF_BIN})

add_test(NAME core_symbol_prefix
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/lib/check_symbols.sh $<TARGET_FILE:snapdiff_core>)

# The hash table's probe runs on aligned keys (a count, not a timing): private API.
add_executable(check_hash ${CMAKE_CURRENT_SOURCE_DIR}/unit/check_hash.c)
target_include_directories(check_hash PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(check_hash PRIVATE snapdiff_core PkgConfig::CHECK)
target_compile_definitions(check_hash PRIVATE ${SNAPDIFF_ALL_TIERS})
add_test(NAME core_hash COMMAND check_hash)
set_tests_properties(core_hash PROPERTIES LABELS unit TIMEOUT 300)
