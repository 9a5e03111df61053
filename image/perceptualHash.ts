/**
 * What decontamination compares images by, from one decode (domain/decontamination.ts):
 * - dHash, 64 bits, to name candidates fast: the image reduced to 9x8 grey pixels, each bit saying
 *   whether a pixel is brighter than its right neighbour;
 * - a grey rendering (domain/imageMatch.ts) to confirm a candidate: charts, screens and diagrams are
 *   mostly flat white, where most dHash bits are 0 and distinct images land a few bits apart.
 * The uniform border is trimmed before rendering, so a copy cropped within its margin stays aligned.
 */
import sharp from 'sharp';
import type { Fingerprint } from '../domain/decontamination.js';
import { RENDERING_SIDE, renderingOf } from '../domain/imageMatch.js';

const WIDTH = 9;
const HEIGHT = 8;
/** Longest side of the rendering the content's box is found on. */
const WORKING_SIDE = 512;
/** Grey levels from the border's tone above which a pixel is content. */
const CONTENT_LEVELS = 24;

export async function dHash(image: Buffer): Promise<bigint> {
  return (await imageFingerprint(image)).dHash;
}

export async function imageFingerprint(image: Buffer): Promise<Fingerprint> {
  // EXIF orientation applied first: a rotated copy of the same photo is the same picture.
  const grey = sharp(image).rotate().flatten({ background: '#ffffff' }).greyscale();
  const [small, pixels] = await Promise.all([grey.clone().resize(WIDTH, HEIGHT, { fit: 'fill' }).raw().toBuffer(), trimmedGrey(grey)]);
  let bits = 0n;
  for (let y = 0; y < HEIGHT; y++) {
    for (let x = 0; x < WIDTH - 1; x++) bits = (bits << 1n) | (small[y * WIDTH + x]! > small[y * WIDTH + x + 1]! ? 1n : 0n);
  }
  return { dHash: bits, rendering: renderingOf(new Uint8Array(pixels.buffer, pixels.byteOffset, pixels.length)) };
}

/**
 * The content's box: rows and columns where at least two pixels differ from the border's median
 * tone by more than CONTENT_LEVELS (sharp's trim keys on the corner pixel, which re-compression
 * noise moves), on a rendering of at most WORKING_SIDE pixels.
 */
async function trimmedGrey(grey: ReturnType<typeof sharp>): Promise<Buffer> {
  const { data, info } = await grey.clone().resize(WORKING_SIDE, WORKING_SIDE, { fit: 'inside', withoutEnlargement: true }).raw().toBuffer({ resolveWithObject: true });
  const { width, height } = info;
  const ring: number[] = [];
  for (let x = 0; x < width; x++) ring.push(data[x]!, data[(height - 1) * width + x]!);
  for (let y = 0; y < height; y++) ring.push(data[y * width]!, data[y * width + width - 1]!);
  ring.sort((a, b) => a - b);
  const border = ring[ring.length >> 1]!;
  const rows = new Uint32Array(height);
  const cols = new Uint32Array(width);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (Math.abs(data[y * width + x]! - border) > CONTENT_LEVELS) {
        rows[y]! += 1;
        cols[x]! += 1;
      }
    }
  }
  const first = (counts: Uint32Array) => counts.findIndex((c) => c >= 2);
  const last = (counts: Uint32Array) => counts.length - 1 - [...counts].reverse().findIndex((c) => c >= 2);
  const [top, left] = [first(rows), first(cols)];
  const box = top < 0 || left < 0 ? { left: 0, top: 0, width, height } : { left, top, width: last(cols) - left + 1, height: last(rows) - top + 1 };
  return sharp(data, { raw: { width, height, channels: 1 } })
    .extract(box)
    .resize(RENDERING_SIDE, RENDERING_SIDE, { fit: 'fill' })
    .toColourspace('b-w')
    .raw()
    .toBuffer();
}
