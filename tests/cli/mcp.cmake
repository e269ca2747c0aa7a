# snapdiff mcp (issue 29): raw JSON-RPC over the pipe (tests/cli/test_mcp.py): both protocol
# eras and every error code, the tools against the CLI's --json, the roots, and diff and
# frag on every real snapshot; then the official clients (tests/mcp/run.sh).
foreach(part protocol tools roots hostile real)
  add_test(NAME mcp_${part}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_mcp.py
                   ${SNAPDIFF_BIN} ${PROJECT_SOURCE_DIR} ${part})
  set_tests_properties(mcp_${part} PROPERTIES SKIP_RETURN_CODE 77 LABELS cli TIMEOUT 600)
endforeach()

# The official clients (issue 29): the TypeScript SDK and the MCP Inspector's CLI, pinned in
# tests/mcp/package.json and installed by npm into the build tree; skipped, saying so, only
# when npm cannot reach its registry.
add_test(NAME mcp_clients
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_mcp_clients.py
                 ${SNAPDIFF_BIN} ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/mcp-node)
# Label full: about 50 s (npm install, two Node clients), too long for tests/run.sh's five
# minutes; tests/full.sh runs it.
set_tests_properties(mcp_clients PROPERTIES SKIP_RETURN_CODE 77 LABELS "cli;full" TIMEOUT 1200)
