# snapdiff mcp (issue 29): raw JSON-RPC over the pipe (tests/test_mcp.py): both protocol
# eras and every error code, the tools against the CLI's --json, the roots, and diff and
# frag on every real snapshot; then the official clients (tests/mcp/run.sh).
foreach(part protocol tools roots real)
  add_test(NAME mcp_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/test_mcp.py
                   ${SNAPDIFF_BIN} ${PROJECT_SOURCE_DIR} ${part})
  set_tests_properties(mcp_${part} PROPERTIES SKIP_RETURN_CODE 77 LABELS cli TIMEOUT 600)
endforeach()
