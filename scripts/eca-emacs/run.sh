#!/usr/bin/env bash
# A real eca-emacs session against the `patchbay server` built from this checkout (run
# `npm run build` first). Not part of `npm test`: it needs Emacs and an eca-emacs checkout.
#   scripts/eca-emacs/run.sh <path-to-eca-emacs> [out-dir]
# (No -Q: Debian activates its elpa-* packages from site-start.)
# Needs: emacs (28+), elpa-dash elpa-f elpa-s elpa-markdown-mode elpa-compat, node, curl.
# Everything lives in a temp dir (HOME, PATCHBAY_HOME, the workspace); the fake LLM listens on a
# free port. The config gives model m1 a variant (`terse`) and image input, runs test/fixtures/mcp-elicit.mjs as
# the MCP server `elicit` (its tools allowed without asking), and has a preToolCall hook `audit` on read_file. The wire log (every JSON-RPC message both ways) is written to <out-dir>/wire.jsonl,
# what Emacs saw (messages, errors, chat buffers) to <out-dir>/emacs.log.
set -euo pipefail
eca_dir=$(cd "${1:?usage: run.sh <eca-emacs-dir> [out-dir]}" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d /tmp/pb-eca-emacs-XXXXXX)
out=${2:-$tmp/out}
mkdir -p "$out" "$tmp/home" "$tmp/ws"
fake_pid=
cleanup() {
  [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null || true
  rm -rf "$tmp/home" "$tmp/ws" "$tmp/fake"
  rmdir "$tmp" 2>/dev/null || true # left only when it holds the default out dir
}
trap cleanup EXIT

# The fake LLM is the test fixture, transpiled (Node 20 cannot run TypeScript itself).
"$repo/node_modules/.bin/esbuild" "$repo/test/fixtures/fake-llm.ts" --bundle --packages=external --format=esm --platform=node --outfile="$tmp/fake/fake-llm.mjs" --log-level=warning
node "$tmp/fake/fake-llm.mjs" > "$tmp/fake/url.json" &
fake_pid=$!
for _ in $(seq 50); do [ -s "$tmp/fake/url.json" ] && break; sleep 0.1; done
url=$(node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).url)' "$tmp/fake/url.json")

printf 'hello from the workspace\n' > "$tmp/ws/notes.txt"
# The agent runtime (issue 18): project instructions, a custom command, and (in the config below) a visible preToolCall hook.
printf 'Project rule from AGENTS.md: answer in English.\n' > "$tmp/ws/AGENTS.md"
mkdir -p "$tmp/ws/.patchbay/commands"
printf -- '---\ndescription: Greets someone by name\n---\nSay hello to $1 from the custom command.\n' > "$tmp/ws/.patchbay/commands/greet.md"
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" PATCHBAY_HOME="$tmp/home/.patchbay" PATCHBAY_LOCAL_MODEL=off
export PATCHBAY_CONFIG="{\"gateway\":{\"port\":0},\"providers\":{\"fake\":{\"api\":\"openai-chat\",\"url\":\"$url/v1\",\"key\":\"x\",\"models\":{\"m1\":{\"imageInput\":true,\"variants\":{\"terse\":{\"max_tokens\":77}}},\"m2\":{}}}},\"defaultModel\":\"fake/m1\",\"chat\":{\"generateTitles\":false,\"maxRetries\":0},\"mcpServers\":{\"elicit\":{\"command\":\"node\",\"args\":[\"$repo/test/fixtures/mcp-elicit.mjs\"]}},\"toolCall\":{\"approval\":{\"allow\":{\"elicit\":{}}}},\"hooks\":{\"audit\":{\"type\":\"preToolCall\",\"matcher\":\"eca__read_file\",\"actions\":[{\"type\":\"shell\",\"shell\":\"cat > /dev/null\"}]}}}"
export PB_FAKE_URL="$url" PB_WORKSPACE="$tmp/ws" PB_OUT="$out" PB_REPO="$repo"
export PB_SERVER_COMMAND="node $repo/scripts/eca-emacs/tee.mjs $out/wire.jsonl $repo/bin/patchbay server"
: > "$out/wire.jsonl"
status=0
timeout 300 emacs --batch -L "$eca_dir" -l "$repo/scripts/eca-emacs/smoke.el" > "$out/emacs.log" 2>&1 || status=$?
echo "emacs exited $status; logs in $out (emacs.log, wire.jsonl)"
exit $status
