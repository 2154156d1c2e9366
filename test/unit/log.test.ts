import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { logToFile, logToStderr, logger } from '../../src/util/log.js';

const dir = mkdtempSync(join(tmpdir(), 'pb-log-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the log file', () => {
  it('is capped and rotated: past maxBytes it moves to .1, the older .1 to .2, and the oldest is dropped', () => {
    logToStderr(false);
    const file = join(dir, 'server.log');
    logToFile(file, { maxBytes: 2_000, keep: 2 });
    const log = logger('t');
    for (let i = 0; i < 500; i++) log.info(`line ${i} ${'x'.repeat(40)}`);
    for (const f of [file, `${file}.1`, `${file}.2`]) expect(statSync(f).size).toBeLessThanOrEqual(2_000);
    expect(existsSync(`${file}.3`)).toBe(false);
    // The newest lines are in the live file, the ones just before in .1.
    expect(readFileSync(file, 'utf8')).toMatch(/line 499 /);
    const older = readFileSync(`${file}.1`, 'utf8');
    expect(older).not.toMatch(/line 499 /);
    expect(older).toMatch(/line 4\d\d /);
  });

  it('keeps the size of an existing file in mind when it is opened again', () => {
    const file = join(dir, 'again.log');
    logToFile(file, { maxBytes: 1_000 });
    logger('t').info('y'.repeat(900));
    logToFile(file, { maxBytes: 1_000 });
    logger('t').info('z'.repeat(200));
    expect(readFileSync(`${file}.1`, 'utf8')).toMatch(/y{900}/);
    expect(readFileSync(file, 'utf8')).toMatch(/z{200}/);
  });

  it('never throws when stderr is gone', () => {
    logToStderr(true);
    process.stderr.destroy();
    expect(() => logger('t').error('after stderr closed')).not.toThrow();
  });
});
