/**
 * Reading a small text file found in a tree we do not control (a repo's `.gitignore`): only a
 * regular file, opened without blocking (a FIFO with no writer would hang a blocking open), and
 * never past `maxBytes` (a link to `/dev/zero` would otherwise fill memory). Undefined otherwise.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';

const FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

export function readSmallFileSync(path: string, maxBytes: number): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, FLAGS);
    if (!fstatSync(fd).isFile()) return undefined;
    const buf = Buffer.alloc(maxBytes);
    let got = 0;
    while (got < maxBytes) {
      const n = readSync(fd, buf, got, maxBytes - got, null);
      if (n === 0) break;
      got += n;
    }
    return buf.toString('utf8', 0, got);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export async function readSmallFile(path: string, maxBytes: number): Promise<string | undefined> {
  let fh;
  try {
    fh = await open(path, FLAGS);
    if (!(await fh.stat()).isFile()) return undefined;
    const buf = Buffer.alloc(maxBytes);
    let got = 0;
    while (got < maxBytes) {
      const { bytesRead } = await fh.read(buf, got, maxBytes - got, null);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return buf.toString('utf8', 0, got);
  } catch {
    return undefined;
  } finally {
    await fh?.close();
  }
}
