# Documentation: the man page, the completions and the options reference docs/reference.md
# follow `snapdiff --help` (generated from the option table in src/cli/options.c), README.md
# stays a guide of at most 600 lines, the man page renders cleanly and its marked examples
# run as documented, README's output excerpt matches a real run, and the completion
# scripts complete. Builds nothing.
find_program(SNAPDIFF_SH sh REQUIRED)
find_program(SNAPDIFF_BASH bash REQUIRED)

add_test(NAME docs_sync
         COMMAND ${SNAPDIFF_SH} ${CMAKE_CURRENT_LIST_DIR}/check_docs_sync.sh
                 ${SNAPDIFF_BIN} ${PROJECT_SOURCE_DIR})
# The checker itself must catch drift, or its passing means nothing.
add_test(NAME docs_sync_selftest
         COMMAND ${SNAPDIFF_SH} ${CMAKE_CURRENT_LIST_DIR}/check_docs_sync_selftest.sh
                 ${SNAPDIFF_BIN} ${PROJECT_SOURCE_DIR})
add_test(NAME docs_man_examples
         COMMAND ${SNAPDIFF_BASH} ${CMAKE_CURRENT_LIST_DIR}/check_man.sh
                 ${SNAPDIFF_BIN} ${PROJECT_SOURCE_DIR} ${SNAPDIFF_MAN})
# The README's output excerpt was copied from a real run; it must still be one.
add_test(NAME docs_readme_example
         COMMAND ${SNAPDIFF_SH} ${CMAKE_CURRENT_LIST_DIR}/check_readme_example.sh
                 ${SNAPDIFF_BIN} ${PROJECT_SOURCE_DIR})
add_test(NAME docs_completions
         COMMAND ${SNAPDIFF_BASH} ${CMAKE_CURRENT_LIST_DIR}/check_completions.sh
                 ${PROJECT_SOURCE_DIR})
# docs/patterns.md's table of patterns is the code's table (pattern.c, pattern_words.c), word for word.
add_test(NAME docs_pattern_table
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/check_pattern_table.py
                 ${PROJECT_SOURCE_DIR})
add_test(NAME docs_pattern_table_selftest
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/check_pattern_table.py --selftest
                 ${PROJECT_SOURCE_DIR})
# The command registry (src/cli/commands.def) is the one list of commands: --help, each
# command's run, the MCP tools/list and its calls follow it, and no file under src/cli/
# keeps a list of its own (docs_sync holds the man page and completions to --help).
add_test(NAME docs_registry
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/check_registry.py
                 ${SNAPDIFF_BIN} ${PROJECT_SOURCE_DIR})
add_test(NAME docs_registry_selftest
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/check_registry.py --selftest
                 ${SNAPDIFF_BIN} ${PROJECT_SOURCE_DIR})
set_tests_properties(docs_sync docs_sync_selftest docs_man_examples docs_readme_example
                     docs_completions docs_pattern_table docs_pattern_table_selftest
                     docs_registry docs_registry_selftest
                     PROPERTIES LABELS docs TIMEOUT 300)
# The generated parts of the man page and the completions are what the option table gives
# now (src/cli/gendocs/gendocs.c); when not: run `cmake --build build --target docs`.
add_test(NAME docs_generated
         COMMAND $<TARGET_FILE:snapdiff_gendocs> --check ${PROJECT_SOURCE_DIR})
set_tests_properties(docs_generated PROPERTIES LABELS docs TIMEOUT 60)
add_test(NAME docs_generated_selftest
         COMMAND ${SNAPDIFF_SH} ${CMAKE_CURRENT_LIST_DIR}/check_gendocs_selftest.sh
                 $<TARGET_FILE:snapdiff_gendocs> ${PROJECT_SOURCE_DIR})
set_tests_properties(docs_generated_selftest PROPERTIES LABELS docs TIMEOUT 60)
