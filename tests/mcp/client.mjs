// client.mjs - the official TypeScript SDK drives `snapdiff mcp` (tests/cli/test_mcp_clients.py).
// Usage: node client.mjs SNAPDIFF ROOT TOOL:FILE[,FILE...]...
// Connects with Client + StdioClientTransport, lists the tools, calls each TOOL on its files
// (max_items 0: whole) and prints one JSON object: the negotiated version, the tool names,
// and each call's isError and structuredContent, for the Python side to compare with the CLI.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, root, ...calls] = process.argv.slice(2);
const transport = new StdioClientTransport({
  command: bin,
  args: ["mcp", "--root", root],
  stderr: "ignore",
});
const client = new Client({ name: "snapdiff-test", version: "1.0.0" });
await client.connect(transport);
const out = {
  version: client.getServerVersion(),
  protocol: transport.protocolVersion ?? null,
  tools: (await client.listTools()).tools.map((t) => t.name),
  calls: [],
};
for (const spec of calls) {
  const [name, files] = spec.split(":");
  const r = await client.callTool({ name, arguments: { files: files.split(","), max_items: 0 } });
  out.calls.push({ name, files: files.split(","), isError: r.isError ?? false,
                   structuredContent: r.structuredContent ?? null });
}
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
