# Hostile inputs: tests/cli/hostile/make_cases.py generates the corpus at test time into the
# build tree; run_cases.py runs `snapdiff stats` and `snapdiff dump` on every case with
# time, memory and output bounds (see its docstring). One ctest per group so that they run
# in parallel; the slow groups carry the label "slow".
set(SNAPDIFF_HOSTILE_DIR ${CMAKE_CURRENT_BINARY_DIR}/hostile)
# The per-case time bounds are for a plain build; sanitizers make the slowest cases (10^7
# shared references) several times slower, which under `ctest -j` on 2 loaded cores
# crossed the 120 s bound.
set(SNAPDIFF_HOSTILE_SCALE 1)
if(SNAPDIFF_SANITIZE)
  set(SNAPDIFF_HOSTILE_SCALE 4)
endif()
foreach(group pickle refuse limits source zip model trunc flip replay)
  add_test(NAME hostile_${group}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/hostile/run_cases.py
                   --bin ${SNAPDIFF_BIN} --dir ${SNAPDIFF_HOSTILE_DIR}/${group} --group ${group}
                   --timeout-scale ${SNAPDIFF_HOSTILE_SCALE})
  set_tests_properties(hostile_${group} PROPERTIES LABELS "hostile" TIMEOUT 900)
endforeach()
set_tests_properties(hostile_limits hostile_source hostile_zip PROPERTIES LABELS "hostile;slow")

# The CLI under valgrind memcheck: fixtures, real snapshots (when SNAPDIFF_SHARED has them)
# and a sample of the hostile corpus; no error and no definite or indirect leak, on success
# and on every error path. A quick subset by default (minutes; VALGRIND_FULL=1 in the
# environment runs everything): label "valgrind", left out of tests/run.sh and run by
# tests/full.sh; not defined in sanitizer builds, where valgrind cannot run.
find_program(VALGRIND valgrind)
if(VALGRIND AND NOT SNAPDIFF_SANITIZE)
  add_test(NAME valgrind_cli
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/valgrind.sh ${SNAPDIFF_BIN}
                   ${CMAKE_CURRENT_BINARY_DIR}/valgrind)
  set_tests_properties(valgrind_cli PROPERTIES LABELS "valgrind;slow" TIMEOUT 3600)
endif()
