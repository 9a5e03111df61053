/**
 * The prompt tokens one image counts for, by the documented rule of the model's family: what the
 * simulator reports in `usage` (so a simulated pilot forecasts at the named model's image cost) and
 * what the engine reserves before it sends a request (tokenEstimate.ts). One definition; both derive
 * from it. Sources, with the worked examples test/unit/imageTokens.test.ts checks:
 * - OpenAI, "Images and vision: Calculating costs" (https://platform.openai.com/docs/guides/images-vision#calculating-costs):
 *   tile models (gpt-4o, gpt-4.1, gpt-4.5, gpt-5, o1, o3, gpt-4o-mini) and patch models (gpt-4.1-mini,
 *   gpt-4.1-nano, gpt-5-mini, gpt-5-nano, o4-mini), with their base/tile tokens and multipliers.
 * - Qwen2.5-VL served by vLLM/SGLang: transformers' Qwen2VLImageProcessor `smart_resize`
 *   (src/transformers/models/qwen2_vl/image_processing_qwen2_vl.py) and Qwen2.5-VL's preprocessor_config.json.
 * Why these families and what is assumed where the docs are silent: docs/adr/0067-image-tokens-by-model-family.md.
 */
import { imageSchema } from '../config/imageConfig.js';
import { dataUrlImageSize, type ImageSize } from '../image/dimensions.js';

type ImageDetail = 'auto' | 'low' | 'high';

/** How a family counts an image. */
type ImageTokenRule =
  /** Scaled into 2048x2048, then its shortest side to 768; `base` plus `tile` per 512-px tile (`base` alone at low detail). */
  | { kind: 'tiles'; base: number; tile: number }
  /** 32-px patches covering the image, at most 1536 (scaled down to fit), times `multiplier`; detail does not apply. */
  | { kind: 'patches'; multiplier: number }
  /** smart_resize to multiples of 28 px within [minPixels, maxPixels]; one token per 28x28 (a 2x2 merge of 14-px patches). */
  | { kind: 'merged-patches'; minPixels: number; maxPixels: number };

const GPT_4O_TILES: ImageTokenRule = { kind: 'tiles', base: 85, tile: 170 };

/**
 * Model families by name, first match wins (a provider prefix or a date suffix may surround the name).
 * The patch models come first: their names extend the tile models' ones.
 */
const FAMILIES: ReadonlyArray<{ family: string; pattern: RegExp; rule: ImageTokenRule }> = [
  { family: 'gpt-4.1-mini', pattern: /gpt-4\.1-mini/, rule: { kind: 'patches', multiplier: 1.62 } },
  { family: 'gpt-4.1-nano', pattern: /gpt-4\.1-nano/, rule: { kind: 'patches', multiplier: 2.46 } },
  { family: 'gpt-5-mini', pattern: /gpt-5-mini/, rule: { kind: 'patches', multiplier: 1.62 } },
  { family: 'gpt-5-nano', pattern: /gpt-5-nano/, rule: { kind: 'patches', multiplier: 2.46 } },
  { family: 'o4-mini', pattern: /(^|\/)o4-mini/, rule: { kind: 'patches', multiplier: 1.72 } },
  { family: 'gpt-4o-mini', pattern: /gpt-4o-mini/, rule: { kind: 'tiles', base: 2833, tile: 5667 } },
  { family: 'gpt-5', pattern: /gpt-5/, rule: { kind: 'tiles', base: 70, tile: 140 } },
  { family: 'o1/o3', pattern: /(^|\/)o[13](-|$)/, rule: { kind: 'tiles', base: 75, tile: 150 } },
  { family: 'gpt-4o/4.1/4.5', pattern: /gpt-4(o|\.1|\.5)/, rule: GPT_4O_TILES },
  // Qwen2.5-VL's preprocessor_config.json: min_pixels 3136 (56x56), max_pixels 12845056 (16384 tokens).
  { family: 'qwen-vl', pattern: /qwen[\d.]*-?vl/, rule: { kind: 'merged-patches', minPixels: 56 * 56, maxPixels: 16384 * 28 * 28 } },
];

/**
 * The family a model name belongs to, and its rule. A name no family matches is counted as gpt-4o
 * counts (the chat API the engine speaks is OpenAI's): that is the simulator's own model names too.
 */
export function imageTokenRule(model: string): { family: string; rule: ImageTokenRule } {
  const name = model.toLowerCase();
  return FAMILIES.find((f) => f.pattern.test(name)) ?? { family: 'other (as gpt-4o)', rule: GPT_4O_TILES };
}

/** The prompt tokens of one image of `size` sent at `detail` to `model`. */
export function imageTokens(model: string, size: ImageSize, detail: ImageDetail = 'auto'): number {
  const { rule } = imageTokenRule(model);
  switch (rule.kind) {
    case 'tiles':
      return detail === 'low' ? rule.base : rule.base + rule.tile * tileCount(size);
    case 'patches':
      return Math.round(patchCount(size) * rule.multiplier);
    case 'merged-patches': {
      const resized = smartResize(size, 28, rule.minPixels, rule.maxPixels);
      return (resized.width / 28) * (resized.height / 28);
    }
  }
}

/**
 * What an image whose header cannot be read counts as: the largest the pipeline sends, a square of
 * image.maxLongSide's default (the engine sends only the JPEGs image/normalize.ts writes).
 */
const UNREAD_SIDE = imageSchema.parse({}).maxLongSide;

/** The prompt tokens of an image part sent as `url` (a data URL, read for its size) at `detail` to `model`. */
export function imageUrlTokens(model: string, url: string, detail: ImageDetail = 'auto'): number {
  return imageTokens(model, dataUrlImageSize(url) ?? { width: UNREAD_SIDE, height: UNREAD_SIDE }, detail);
}

/** OpenAI's high-detail tiles: fit in 2048x2048, shortest side down to 768 (never enlarged), 512-px tiles. */
function tileCount({ width, height }: ImageSize): number {
  const fit = Math.min(1, 2048 / Math.max(width, height));
  const short = Math.min(1, 768 / (Math.min(width, height) * fit));
  const scale = fit * short;
  return Math.ceil(roundOff(width * scale) / 512) * Math.ceil(roundOff(height * scale) / 512);
}

const MAX_PATCHES = 1536;

/** OpenAI's 32-px patches, the image scaled down to at most 1536 of them (the docs' steps A-C). */
function patchCount({ width, height }: ImageSize): number {
  const raw = Math.ceil(width / 32) * Math.ceil(height / 32);
  if (raw <= MAX_PATCHES) return raw;
  const shrink = Math.sqrt((32 * 32 * MAX_PATCHES) / (width * height));
  const across = (width * shrink) / 32;
  const down = (height * shrink) / 32;
  const fit = shrink * Math.min(Math.floor(across) / across, Math.floor(down) / down);
  return Math.min(MAX_PATCHES, Math.ceil(roundOff(width * fit) / 32) * Math.ceil(roundOff(height * fit) / 32));
}

/** transformers' smart_resize: each side rounded to a multiple of `factor`, the area brought within [min, max]. */
export function smartResize({ width, height }: ImageSize, factor: number, minPixels: number, maxPixels: number): ImageSize {
  const round = (x: number) => roundHalfEven(x / factor) * factor;
  let h = round(height);
  let w = round(width);
  if (h * w > maxPixels) {
    const beta = Math.sqrt((height * width) / maxPixels);
    h = Math.max(factor, Math.floor(height / beta / factor) * factor);
    w = Math.max(factor, Math.floor(width / beta / factor) * factor);
  } else if (h * w < minPixels) {
    const beta = Math.sqrt(minPixels / (height * width));
    h = Math.ceil((height * beta) / factor) * factor;
    w = Math.ceil((width * beta) / factor) * factor;
  }
  return { width: w, height: h };
}

/** Python's round(): halves go to the even neighbour. */
function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff !== 0.5) return Math.round(x);
  return floor % 2 === 0 ? floor : floor + 1;
}

/** A scaled side, rid of the float error a product like 1800 * (1056 / 1800) leaves (1056.0000000001 would take a 34th patch). */
function roundOff(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
