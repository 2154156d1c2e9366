/**
 * The pseudo-terminal harness itself (test/support/pty.ts + test/fixtures/pty-run.py): the
 * program sees a terminal of the given size, keys reach it byte for byte, Ctrl-C in cooked mode
 * is SIGINT, exit codes come back, and kill() stops a program that ignores its input.
 */
import { describe, expect, it } from 'vitest';
import { KEY, paste, stripAnsi, usePty } from '../support/pty.js';

const spawn = usePty();
const env = { PATH: process.env.PATH ?? '' };

describe('pty harness', () => {
  it('gives the program a terminal of the requested size', async () => {
    const p = spawn(process.execPath, ['-e', 'console.log(JSON.stringify({ i: process.stdin.isTTY, o: process.stdout.isTTY, c: process.stdout.columns, r: process.stdout.rows }))'], {
      env,
      cols: 91,
      rows: 17,
    });
    const m = await p.waitFor(/\{.*\}/);
    expect(JSON.parse(m[0])).toEqual({ i: true, o: true, c: 91, r: 17 });
    expect(await p.exit()).toBe(0);
  });

  it('relays keys byte for byte in raw mode, paste markers included', async () => {
    const script = `process.stdin.setRawMode(true); console.log('ready'); let got = '';
      process.stdin.on('data', (d) => { got += d.toString('latin1'); if (got.includes('\\x04')) { console.log(JSON.stringify(got)); process.exit(3); } });`;
    const p = spawn(process.execPath, ['-e', script], { env });
    await p.waitFor('ready');
    p.write(`a${KEY.tab}${KEY.ctrlC}${paste('x\ny')}${KEY.ctrlD}`);
    const m = await p.waitFor(/".*"/);
    expect(JSON.parse(m[0])).toBe('a\t\x03\x1b[200~x\ry\x1b[201~\x04');
    expect(await p.exit()).toBe(3);
  });

  it('turns Ctrl-C into SIGINT in cooked mode and reports 128 + signal', async () => {
    const p = spawn(process.execPath, ['-e', "console.log('waiting'); setInterval(() => {}, 1000)"], { env });
    await p.waitFor('waiting');
    p.write(KEY.ctrlC);
    expect(await p.exit()).toBe(130);
  });

  it('waitFor moves a cursor, so the same text is awaited twice in order', async () => {
    const p = spawn(process.execPath, ['-e', "console.log('\\x1b[1mtick\\x1b[22m 1'); setTimeout(() => console.log('tick 2'), 200)"], { env });
    expect((await p.waitFor(/tick (\d)/))[1]).toBe('1');
    expect((await p.waitFor(/tick (\d)/))[1]).toBe('2');
    expect(p.text()).toBe('tick 1\ntick 2\n');
    expect(await p.exit()).toBe(0);
  });

  it('kill() stops a program that ignores SIGTERM', async () => {
    const p = spawn(process.execPath, ['-e', "process.on('SIGTERM', () => {}); console.log('stubborn'); setInterval(() => {}, 1000)"], { env });
    await p.waitFor('stubborn');
    await p.kill();
    expect(p.alive).toBe(false);
  });

  it('strips colors, cursor moves and OSC titles', () => {
    expect(stripAnsi('\x1b[32m✓\x1b[39m \x1b[2Kx\x1b]0;title\x07y\x1b[?2004h')).toBe('✓ xy');
  });
});
