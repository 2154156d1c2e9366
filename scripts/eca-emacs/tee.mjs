#!/usr/bin/env node
/**
 * Sits between an editor and `patchbay server` and writes every JSON-RPC message, both ways, to a
 * log file (one JSON line each: {dir, msg}). patchbay has no wire-trace option, and eca-emacs only
 * logs errors, so this is how a plugin run is recorded. Usage: tee.mjs <log> <command> [args…]
 */
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';

const [log, cmd, ...args] = process.argv.slice(2);
if (!log || !cmd) {
  process.stderr.write('usage: tee.mjs <log-file> <command> [args...]\n');
  process.exit(2);
}
const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });

/** Splits a Content-Length framed byte stream into message bodies, logging each. */
function recorder(dir) {
  let buf = Buffer.alloc(0);
  return (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const m = /content-length:\s*(\d+)/i.exec(buf.subarray(0, end).toString('latin1'));
      if (!m) {
        appendFileSync(log, `${JSON.stringify({ dir, unframed: buf.toString('utf8') })}\n`);
        buf = Buffer.alloc(0);
        return;
      }
      const len = Number(m[1]);
      if (buf.length < end + 4 + len) return;
      const body = buf.subarray(end + 4, end + 4 + len).toString('utf8');
      buf = buf.subarray(end + 4 + len);
      let msg;
      try {
        msg = JSON.parse(body);
      } catch {
        msg = { unparsable: body };
      }
      appendFileSync(log, `${JSON.stringify({ t: new Date().toISOString(), dir, msg })}\n`);
    }
  };
}

const fromEditor = recorder('editor->patchbay');
const fromServer = recorder('patchbay->editor');
process.stdin.on('data', (c) => {
  fromEditor(c);
  child.stdin.write(c);
});
process.stdin.on('end', () => child.stdin.end());
child.stdout.on('data', (c) => {
  fromServer(c);
  process.stdout.write(c);
});
child.on('exit', (code, signal) => {
  appendFileSync(log, `${JSON.stringify({ dir: 'exit', code, signal })}\n`);
  process.exit(code ?? 1);
});
for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(s, () => child.kill(s));
