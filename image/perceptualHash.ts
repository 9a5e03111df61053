/**
 * A perceptual hash of an image, for decontamination (domain/decontamination.ts): dHash, 64 bits.
 * The image is reduced to 9x8 grey pixels; each bit says whether a pixel is brighter than its right
 * neighbour. Re-encoding and resizing move few bits, different images about half of them
 * (docs/adr/0013-perceptual-hash-dhash-threshold-12.md).
 */
import sharp from 'sharp';

const WIDTH = 9;
const HEIGHT = 8;

export async function dHash(image: Buffer): Promise<bigint> {
  // EXIF orientation applied first: a rotated copy of the same photo is the same picture.
  const pixels = await sharp(image).rotate().greyscale().resize(WIDTH, HEIGHT, { fit: 'fill' }).raw().toBuffer();
  let bits = 0n;
  for (let y = 0; y < HEIGHT; y++) {
    for (let x = 0; x < WIDTH - 1; x++) bits = (bits << 1n) | (pixels[y * WIDTH + x]! > pixels[y * WIDTH + x + 1]! ? 1n : 0n);
  }
  return bits;
}
