# The map of a cluster job (issue 30): summarize --shard under each scheduler's variables
# covers every input exactly once, @FILE lists, reruns, the reduce, the refusals.
add_test(NAME shard_cli
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_shard_cli.py
                 --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR})
set_tests_properties(shard_cli PROPERTIES LABELS cli TIMEOUT 300)
# contrib/k8s: the manifests as YAML, --shard auto/N against completions, the map's own
# command covering every input once per JOB_COMPLETION_INDEX, the reduce's own script.
add_test(NAME k8s_manifests
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_k8s_manifests.py
                 --bin ${SNAPDIFF_BIN} --root ${PROJECT_SOURCE_DIR})
set_tests_properties(k8s_manifests PROPERTIES LABELS cli TIMEOUT 300 SKIP_RETURN_CODE 77)
