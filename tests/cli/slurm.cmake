# contrib/slurm on a real single-node Slurm (issue 30): munged, slurmctld and slurmd started
# by the test as root, 300 ranks mapped by a job array and reduced by a dependent job, the
# result equal to one machine's check. About a minute; label full, so tests/full.sh runs it
# (tests/deps.sh --slurm installs Slurm there), not tests/run.sh. Skips (77) when not root,
# without Slurm or without the real snapshots. RUN_SERIAL: the scheduler's timing, not the
# suite's load, should decide its wall time.
add_test(NAME slurm_recipe
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_slurm.sh ${SNAPDIFF_BIN} ${PROJECT_SOURCE_DIR})
set_tests_properties(slurm_recipe PROPERTIES LABELS "slurm;full" TIMEOUT 300
                     SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
