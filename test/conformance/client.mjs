#!/usr/bin/env node
// The conformance driver straight from the tsc output (dist/cli), for use while `patchbay` has no
// `mcp-conformance-client` subcommand: node test/conformance/client.mjs <server-url>
const { runMcpConformanceClient } = await import(new URL('../../dist/cli/mcp-conformance-client.js', import.meta.url).href);
await runMcpConformanceClient(process.argv.slice(2));
