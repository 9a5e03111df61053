/**
 * What decontamination compares images by, from one decode (domain/decontamination.ts):
 * - dHash, 64 bits, to name candidates fast: the image reduced to 9x8 grey pixels, each bit saying
 *   whether a pixel is brighter than its right neighbour;
 * - a grey rendering (domain/imageMatch.ts) to confirm a candidate: charts, screens and diagrams are
 *   mostly flat white, where most dHash bits are 0 and distinct images land a few bits apart.
 * - a coarse colour rendering of the same box (chroma, 32x32), so that two pictures whose grey
 *   renderings coincide (a chart redrawn in another palette) are still told apart.
 * The uniform border is trimmed before rendering, so a copy cropped within its margin stays aligned.
 */
import sharp from 'sharp';
import type { Fingerprint } from '../domain/decontamination.js';
import { CHROMA_SIDE, RENDERING_SIDE, renderingOf } from '../domain/imageMatch.js';

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
  const flat = sharp(image).rotate().flatten({ background: '#ffffff' });
  const grey = flat.clone().greyscale();
  const [small, { pixels, chroma }] = await Promise.all([grey.clone().resize(WIDTH, HEIGHT, { fit: 'fill' }).raw().toBuffer(), trimmed(flat, grey)]);
  let bits = 0n;
  for (let y = 0; y < HEIGHT; y++) {
    for (let x = 0; x < WIDTH - 1; x++) bits = (bits << 1n) | (small[y * WIDTH + x]! > small[y * WIDTH + x + 1]! ? 1n : 0n);
  }
  return { dHash: bits, rendering: renderingOf(new Uint8Array(pixels.buffer, pixels.byteOffset, pixels.length), chroma) };
}

/**
 * The content's box: rows and columns where at least two pixels differ from the border's median
 * tone by more than CONTENT_LEVELS (sharp's trim keys on the corner pixel, which re-compression
 * noise moves), on a rendering of at most WORKING_SIDE pixels.
 */
async function trimmed(flat: ReturnType<typeof sharp>, grey: ReturnType<typeof sharp>): Promise<{ pixels: Buffer; chroma: Float32Array }> {
  const working = (s: ReturnType<typeof sharp>) =>
    s.clone().resize(WORKING_SIDE, WORKING_SIDE, { fit: 'inside', withoutEnlargement: true }).raw().toBuffer({ resolveWithObject: true });
  const [{ data, info }, colour] = await Promise.all([working(grey), working(flat.clone().removeAlpha())]);
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
  const [pixels, rgb] = await Promise.all([
    sharp(data, { raw: { width, height, channels: 1 } })
      .extract(box)
      .resize(RENDERING_SIDE, RENDERING_SIDE, { fit: 'fill' })
      .toColourspace('b-w')
      .raw()
      .toBuffer(),
    sharp(colour.data, { raw: { width, height, channels: colour.info.channels } })
      .extract(box)
      .resize(CHROMA_SIDE, CHROMA_SIDE, { fit: 'fill' })
      .toColourspace('srgb')
      .raw()
      .toBuffer(),
  ]);
  return { pixels, chroma: chromaOf(rgb) };
}

/**
 * Each pixel's CIELAB (a*, b*) from its sRGB values (D65), interleaved: in that plane a hue
 * rotation is a rotation and a saturation change a scaling (LCh is its polar form).
 */
function chromaOf(rgb: Buffer): Float32Array {
  const linear = (v: number) => (v <= 10.31475 ? v / 3294.6 : ((v / 255 + 0.055) / 1.055) ** 2.4);
  const f = (t: number) => (t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 / 116) * t + 16 / 116);
  const out = new Float32Array(CHROMA_SIDE * CHROMA_SIDE * 2);
  for (let i = 0; i < CHROMA_SIDE * CHROMA_SIDE; i++) {
    const [r, g, b] = [linear(rgb[3 * i]!), linear(rgb[3 * i + 1]!), linear(rgb[3 * i + 2]!)];
    const x = f((0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047);
    const y = f(0.2126729 * r + 0.7151522 * g + 0.072175 * b);
    const z = f((0.0193339 * r + 0.119192 * g + 0.9503041 * b) / 1.08883);
    out[2 * i] = 500 * (x - y);
    out[2 * i + 1] = 200 * (y - z);
  }
  return out;
}
