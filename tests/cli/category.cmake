# Categories, phases and steps (issue 26, docs/categories.md): `snapdiff top --json` against
# tests/truth/truth_category.py on testdata/category/ (hand-worked too) and on the real corpus,
# where the categories must add up to the totals.
foreach(part fixtures diff oom real)
  add_test(NAME category_cli_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_category_cli.py
                   --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR} ${part})
  set_tests_properties(category_cli_${part} PROPERTIES SKIP_RETURN_CODE 77 LABELS cli
                       TIMEOUT 600)
endforeach()
