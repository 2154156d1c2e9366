/**
 * Taking the images out of a prompt's contexts (src/core/context/images.ts): inline images are
 * checked, image files are read (by extension, as ECA context.clj `file->refined-context`), the
 * rest keeps its order; a bad image is a reason, never a throw.
 */
import { describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { imageMediaType, splitImages } from '../../src/core/context/images.js';
import type { Context } from '../../src/shapes/context.js';
import { useTempDirs, workspace } from '../e2e/harness.js';

const scratch = useTempDirs();

describe('splitImages', () => {
  it('reads image files by extension, keeps inline images (whitespace dropped) and the other contexts in order', async () => {
    const root = scratch(workspace({ 'notes.md': '# hi' }));
    writeFileSync(join(root, 'Photo.JPG'), Buffer.from([0xff, 0xd8, 0xff]));
    const contexts: Context[] = [
      { type: 'file', path: 'notes.md' },
      { type: 'image', mediaType: 'image/webp', base64: 'AAAA\nBBBB' },
      { type: 'file', path: 'Photo.JPG' },
      { type: 'text', label: 't', content: 'x' },
    ];
    const out = await splitImages(contexts, { roots: [root] });
    expect(out.images).toEqual([
      { mediaType: 'image/webp', base64: 'AAAABBBB' },
      { mediaType: 'image/jpeg', base64: Buffer.from([0xff, 0xd8, 0xff]).toString('base64') },
    ]);
    expect(out.rest).toEqual([contexts[0], contexts[3]]);
    expect(out.errors).toEqual([]);
  });

  it('gives a reason for a missing file, bad base64, an empty image and one over the limit', async () => {
    const root = scratch(workspace());
    writeFileSync(join(root, 'big.png'), Buffer.alloc(11));
    const out = await splitImages(
      [
        { type: 'file', path: 'gone.gif' },
        { type: 'image', mediaType: 'image/png', base64: 'not base64!' },
        { type: 'image', mediaType: 'image/png', base64: '' },
        { type: 'image', mediaType: 'image/png', base64: Buffer.alloc(11).toString('base64') },
        { type: 'file', path: 'big.png' },
      ],
      { roots: [root], maxBytes: 10 },
    );
    expect(out.images).toEqual([]);
    expect(out.errors).toEqual([
      `image ${join(root, 'gone.gif')}: not found: ${join(root, 'gone.gif')}`,
      'image: the data is not valid base64',
      'image: no image data',
      'image: the image is 11 bytes; the limit is 10 bytes',
      `image ${join(root, 'big.png')}: the image is 11 bytes; the limit is 10 bytes`,
    ]);
  });

  // A FIFO or a device has size 0 in stat, so a size check alone would read it to its end: ~2 GB
  // from /dev/zero, or whatever a writer feeds a FIFO.
  it.runIf(process.platform !== 'win32')('refuses a FIFO fed more than the limit and a link to /dev/zero, without reading them', async () => {
    const root = scratch(workspace());
    const fifo = join(root, 'x.png');
    execFileSync('mkfifo', [fifo]);
    symlinkSync('/dev/zero', join(root, 'logo.png'));
    // Writes 64 KiB (the limit is 1 KiB) once a reader opens the FIFO; killed below if it never does.
    const writer = spawn('sh', ['-c', `head -c 65536 /dev/zero > "${fifo}"`], { stdio: 'ignore' });
    try {
      const out = await splitImages(
        [
          { type: 'file', path: 'x.png' },
          { type: 'file', path: 'logo.png' },
        ],
        { roots: [root], maxBytes: 1024 },
      );
      expect(out.images).toEqual([]);
      expect(out.errors).toEqual([`image ${fifo}: not a regular file: ${fifo}`, `image ${join(root, 'logo.png')}: not a regular file: ${join(root, 'logo.png')}`]);
    } finally {
      writer.kill();
    }
  });

  it('takes only the media types every vision API takes (image/jpg read as image/jpeg)', async () => {
    const out = await splitImages(
      [
        { type: 'image', mediaType: 'image/jpg', base64: 'AAAA' },
        { type: 'image', mediaType: 'image/svg+xml', base64: 'AAAA' },
      ],
      { roots: [] },
    );
    expect(out.images).toEqual([{ mediaType: 'image/jpeg', base64: 'AAAA' }]);
    expect(out.errors).toEqual(['image: image/svg+xml is not a type the models take (png, jpeg, gif or webp)']);
  });

  it('names the media type of image files only', () => {
    expect(['a.png', 'b.jpeg', 'c.gif', 'd.webp', 'e.svg', 'f.txt'].map(imageMediaType)).toEqual(['image/png', 'image/jpeg', 'image/gif', 'image/webp', undefined, undefined]);
  });
});
