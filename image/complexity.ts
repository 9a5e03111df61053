/**
 * A built-in image-complexity statistic, a cheap proxy for the learned IC9600 score the paper's
 * authors filtered with (its weights cannot be fetched here). It measures how much structure an
 * image has, not what it means: a busy street scores high, a clear sky or a flat chart low.
 *
 * - edge density: the share of pixels whose Sobel gradient magnitude on the luminance reaches
 *   EDGE_THRESHOLD (of a possible ~1,443), after fitting the image inside ANALYSIS_SIDE pixels so the
 *   figure does not depend on resolution. In [0, 1]; this is the score.
 * - entropy: the Shannon entropy of the luminance histogram, in bits (0 to 8), kept beside it.
 */
import sharp from 'sharp';

/** Long side the statistic is computed at: fine detail below it is ignored, like a thumbnail. */
const ANALYSIS_SIDE = 256;
/** A luminance step of about 32 levels across a pixel: a visible edge, not JPEG noise. */
const EDGE_THRESHOLD = 128;

interface ImageComplexity {
  edgeDensity: number;
  entropyBits: number;
}

export async function imageComplexity(bytes: Buffer, maxInputPixels: number): Promise<ImageComplexity> {
  const { data, info } = await sharp(bytes, { limitInputPixels: maxInputPixels })
    .rotate()
    .flatten({ background: '#ffffff' })
    .greyscale()
    .resize(ANALYSIS_SIDE, ANALYSIS_SIDE, { fit: 'inside', withoutEnlargement: true })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { width, height } = info;
  const at = (x: number, y: number) => data[y * width + x]!;
  let edges = 0;
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const gx = at(x + 1, y - 1) + 2 * at(x + 1, y) + at(x + 1, y + 1) - at(x - 1, y - 1) - 2 * at(x - 1, y) - at(x - 1, y + 1);
      const gy = at(x - 1, y + 1) + 2 * at(x, y + 1) + at(x + 1, y + 1) - at(x - 1, y - 1) - 2 * at(x, y - 1) - at(x + 1, y - 1);
      if (gx * gx + gy * gy >= EDGE_THRESHOLD * EDGE_THRESHOLD) edges += 1;
    }
  }
  const interior = Math.max(1, (width - 2) * (height - 2));
  const histogram = new Array<number>(256).fill(0);
  for (let i = 0; i < width * height; i++) histogram[data[i]!]! += 1;
  let entropyBits = 0;
  for (const n of histogram) {
    if (n === 0) continue;
    const p = n / (width * height);
    entropyBits -= p * Math.log2(p);
  }
  return { edgeDensity: edges / interior, entropyBits };
}
