// Measures the perceptual hashes decontamination could use (issue 21): the maintained sharp-phash
// (DCT pHash, 64 bits) against a sharp-based dHash (64 bits), on the sample images. For each image,
// a copy re-encoded at JPEG quality 60 and resized to half its size must be near (small Hamming
// distance), distinct images far; and each hash's time per image.
// Run: npx tsx bench/perceptualHash.ts [image files...]   (default: samples/cc3m/00000/*.jpg)
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { hammingDistance } from '../domain/decontamination.js';
import { dHash } from '../image/perceptualHash.js';
import { quantile } from './harness.js';

const dir = 'samples/cc3m/00000';
const files = process.argv.slice(2).length > 0 ? process.argv.slice(2) : (await readdir(dir)).filter((f) => f.endsWith('.jpg')).map((f) => path.join(dir, f));
const images = await Promise.all(files.map((f) => readFile(f)));
const copies = await Promise.all(
  images.map(async (img) => {
    const { width } = await sharp(img).metadata();
    return sharp(img)
      .resize({ width: Math.round(width! / 2) })
      .jpeg({ quality: 60 })
      .toBuffer();
  }),
);

// sharp-phash is CommonJS (module.exports = phash) but its types declare an ES default export.
const phash = (await import('sharp-phash')).default as unknown as (image: Buffer) => Promise<string>;
const phashBits = async (img: Buffer) => BigInt(`0b${await phash(img)}`);
for (const [name, hash] of [
  ['sharp-phash (pHash)', phashBits],
  ['sharp dHash', dHash],
] as const) {
  const start = performance.now();
  const originals = [];
  for (const img of images) originals.push(await hash(img));
  const ms = (performance.now() - start) / images.length;
  const copied = await Promise.all(copies.map((c) => hash(c)));
  const near = originals.map((h, i) => hammingDistance(h, copied[i]!));
  const far: number[] = [];
  for (let i = 0; i < originals.length; i++) for (let j = i + 1; j < originals.length; j++) far.push(hammingDistance(originals[i]!, originals[j]!));
  console.log(`${name}: ${ms.toFixed(1)} ms/image; copy distance max ${Math.max(...near)} (${near.join(',')}); distinct min ${Math.min(...far)}, median ${quantile(far, 0.5)}`);
}
