/**
 * The image stage: rejects images a vision model cannot use and turns the rest into one canonical
 * form (upright, sRGB, 3 channels, bounded size, baseline JPEG), byte-for-byte deterministic so the
 * output sha256 identifies the image across builds and machines running the same sharp/libvips.
 */
import { availableParallelism } from 'node:os';
import sharp, { type FormatEnum, type Metadata, type OutputInfo } from 'sharp';
import type { ImageConfig } from '../config/imageConfig.js';
import { sha256Hex } from '../domain/hashing.js';

export interface NormalizedImage {
  ok: true;
  jpeg: Buffer;
  /** sha256 of `jpeg`. */
  sha256: string;
  width: number;
  height: number;
  /** Size of the input as displayed, i.e. after EXIF rotation. */
  originalWidth: number;
  originalHeight: number;
}

/** `reason` starts with a stable code (`corrupt:`, `unsupported-format:`, `too-large:`, `too-small:`, `aspect-ratio:`, `blank:`) for counting. */
export interface ImageRejection {
  ok: false;
  reason: string;
}

/** Raster formats photos and charts come in; anything else (SVG, PDF...) is not rendered from untrusted data. */
const ACCEPTED_FORMATS = new Set<keyof FormatEnum>(['jpeg', 'png', 'webp', 'gif', 'tiff', 'heif'] /* heif covers AVIF */);

/**
 * The sample standard deviation of each channel of interleaved 8-bit pixels, as libvips' stats()
 * computes it (sqrt(|sum of squares - sum^2 / n| / (n - 1))). Computed here in one pass: sharp's
 * stats() also builds histograms and a Laplacian for every image, more CPU than the rest of
 * normalizing (docs/adr/0012-image-decoding-bounded-and-stats-in-one-pass.md).
 */
export function channelStdDevs(data: Uint8Array, channels: number): number[] {
  const sums = new Float64Array(channels);
  const squares = new Float64Array(channels);
  for (let i = 0; i < data.length; i += channels) {
    for (let c = 0; c < channels; c++) {
      const v = data[i + c]!;
      sums[c]! += v;
      squares[c]! += v * v;
    }
  }
  const n = data.length / channels;
  return Array.from(sums, (sum, c) => Math.sqrt(Math.abs(squares[c]! - (sum * sum) / n) / (n - 1)));
}

/**
 * Images decoded at once in this process, whatever the number of activities and samples asking:
 * the decoding runs on a few threads anyway (libuv's pool, libvips' per-pipeline threads), and
 * every image let in holds its pixels until encoded, so unbounded decoding set the worker's peak RSS
 * (docs/adr/0012-image-decoding-bounded-and-stats-in-one-pass.md).
 */
const DECODE_SLOTS = availableParallelism();
// The slots give the parallelism: one libvips thread per image, and no cache of libvips operations
// (each image is seen once), so fewer threads (each with its own malloc arena) hold memory.
sharp.concurrency(1);
sharp.cache(false);
let decoding = 0;
const waitingForSlot: Array<() => void> = [];

async function inDecodeSlot<T>(work: () => Promise<T>): Promise<T> {
  if (decoding < DECODE_SLOTS) decoding++;
  else await new Promise<void>((resolve) => waitingForSlot.push(resolve)); // handed the slot of one finishing
  try {
    return await work();
  } finally {
    const next = waitingForSlot.shift();
    if (next) next();
    else decoding--;
  }
}

export function normalizeImage(bytes: Buffer, cfg: ImageConfig): Promise<NormalizedImage | ImageRejection> {
  return inDecodeSlot(() => normalizeNow(bytes, cfg));
}

async function normalizeNow(bytes: Buffer, cfg: ImageConfig): Promise<NormalizedImage | ImageRejection> {
  const reject = (reason: string): ImageRejection => ({ ok: false, reason });

  // limitInputPixels makes sharp refuse oversized images from the header, before allocating pixels;
  // failOn 'truncated' makes the decode below fail on cut-off data instead of padding it with grey.
  const open = () => sharp(bytes, { limitInputPixels: cfg.maxInputPixels, failOn: 'truncated', autoOrient: true });

  // libvips has no BMP loader (ALLaVA's zips hold some): named as a format we cannot read, not as damage.
  if (bytes.length >= 2 && bytes[0] === 0x42 && bytes[1] === 0x4d) return reject('unsupported-format: bmp (no BMP decoder in sharp/libvips)');
  let meta: Metadata;
  try {
    meta = await open().metadata(); // header only: no pixel is decoded yet
  } catch (err) {
    const message = (err as Error).message;
    if (/pixel limit/i.test(message)) return reject(`too-large: more than ${cfg.maxInputPixels} pixels (${message})`);
    return reject(`corrupt: ${message}`);
  }
  if (!meta.format || !ACCEPTED_FORMATS.has(meta.format)) return reject(`unsupported-format: ${meta.format ?? 'unknown'}`);
  const { width, height } = meta.autoOrient; // as displayed, after EXIF rotation
  if (!width || !height) return reject('corrupt: no image dimensions');
  if (Math.min(width, height) < cfg.minShortSide) {
    return reject(`too-small: ${width}x${height} has a short side below ${cfg.minShortSide}`);
  }
  const aspect = Math.max(width, height) / Math.min(width, height);
  if (aspect > cfg.maxAspectRatio) {
    return reject(`aspect-ratio: ${width}x${height} is ${aspect.toFixed(2)}:1, above ${cfg.maxAspectRatio}:1`);
  }

  // One decode serves both the blank check and the output: the pixels are normalised and downscaled
  // first, then measured, then encoded.
  let pixels: { data: Buffer; info: OutputInfo };
  try {
    pixels = await open()
      .flatten({ background: '#ffffff' })
      .toColourspace('srgb')
      .resize({ width: cfg.maxLongSide, height: cfg.maxLongSide, fit: 'inside', withoutEnlargement: true })
      .raw()
      .toBuffer({ resolveWithObject: true });
  } catch (err) {
    return reject(`corrupt: ${(err as Error).message}`);
  }
  const raw = { raw: { width: pixels.info.width, height: pixels.info.height, channels: pixels.info.channels } };

  const maxStdDev = Math.max(...channelStdDevs(pixels.data, pixels.info.channels));
  if (maxStdDev < cfg.minChannelStdDev) {
    return reject(`blank: every channel's standard deviation is below ${cfg.minChannelStdDev} (largest ${maxStdDev.toFixed(2)})`);
  }

  // Fixed encoder settings (no mozjpeg, fixed subsampling, baseline) keep the bytes reproducible.
  const jpeg = await sharp(pixels.data, raw).jpeg({ quality: cfg.jpegQuality, mozjpeg: false, chromaSubsampling: '4:2:0', progressive: false, optimiseCoding: true }).toBuffer();
  return {
    ok: true,
    jpeg,
    sha256: sha256Hex(jpeg),
    width: pixels.info.width,
    height: pixels.info.height,
    originalWidth: width,
    originalHeight: height,
  };
}
