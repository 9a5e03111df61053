/**
 * Image tokens by model family (llm/imageTokens.ts), checked against the worked examples of the
 * sources it follows: OpenAI's "Calculating costs" (tiles: 1024x1024 high 765, 2048x4096 high 1105,
 * 4096x8192 low 85; patches: 1024x1024 is 1024 patches, 1800x2400 is 1452) and transformers'
 * smart_resize for Qwen2.5-VL; and the header reader (image/dimensions.ts) on real JPEG and PNG
 * bytes, so the simulator's usage and the engine's estimate both count an image by its size.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { dataUrlImageSize, imageSize } from '../../image/dimensions.js';
import { imageTokenRule, imageTokens, imageUrlTokens, smartResize } from '../../llm/imageTokens.js';
import { estimatePromptTokens } from '../../llm/tokenEstimate.js';
import { promptTokens } from '../../simulator/replies.js';

test("OpenAI's tile models: the documented examples, and each family's base and tile tokens", () => {
  assert.equal(imageTokens('gpt-4o', { width: 1024, height: 1024 }, 'high'), 765);
  assert.equal(imageTokens('gpt-4o-2024-08-06', { width: 2048, height: 4096 }, 'high'), 1105);
  assert.equal(imageTokens('gpt-4o', { width: 4096, height: 8192 }, 'low'), 85);
  assert.equal(imageTokens('gpt-4.1', { width: 1024, height: 1024 }, 'auto'), 765, 'auto counts as high');
  assert.equal(imageTokens('openai/gpt-4.1', { width: 1024, height: 1024 }), 765, 'a provider prefix names the same model');
  assert.equal(imageTokens('gpt-5', { width: 1024, height: 1024 }, 'high'), 70 + 140 * 4);
  assert.equal(imageTokens('o3', { width: 1024, height: 1024 }, 'high'), 75 + 150 * 4);
  assert.equal(imageTokens('gpt-4o-mini', { width: 1024, height: 1024 }, 'high'), 2833 + 5667 * 4);
  assert.equal(imageTokens('gpt-4o', { width: 128, height: 64 }, 'high'), 85 + 170, 'a small image is not enlarged: one tile');
  assert.equal(imageTokens('gpt-4o', { width: 1000, height: 700 }, 'high'), 85 + 170 * 4, 'shortest side under 768: 2x2 tiles as is');
});

test("OpenAI's patch models: 32-px patches, scaled down to at most 1536, times the model's multiplier", () => {
  assert.equal(imageTokens('gpt-4.1-mini', { width: 1024, height: 1024 }), Math.round(1024 * 1.62));
  assert.equal(imageTokens('gpt-4.1-mini-2025-04-14', { width: 1800, height: 2400 }), Math.round(1452 * 1.62));
  assert.equal(imageTokens('gpt-4.1-nano', { width: 1800, height: 2400 }), Math.round(1452 * 2.46));
  assert.equal(imageTokens('gpt-5-mini', { width: 1024, height: 1024 }, 'low'), Math.round(1024 * 1.62), 'detail does not apply');
  assert.equal(imageTokens('o4-mini', { width: 4000, height: 4000 }), Math.round(1521 * 1.72), '39x39 patches after scaling');
  assert.equal(imageTokenRule('gpt-5-nano').rule.kind, 'patches');
});

test("Qwen2.5-VL: one token per 28x28 after transformers' smart_resize within its min and max pixels", () => {
  // round(1024 / 28) = 37: 1036x1036 is within [3136, 12845056].
  assert.equal(imageTokens('Qwen/Qwen2.5-VL-7B-Instruct', { width: 1024, height: 1024 }), 37 * 37);
  assert.equal(imageTokens('qwen2.5-vl-72b', { width: 640, height: 480 }), 23 * 17);
  // Over max_pixels (3584^2): 5000 / beta / 28 is 127.99999999999999 in doubles, so the processor
  // (Python floats, the same IEEE arithmetic) floors it to 127: 3556x3556.
  assert.deepEqual(smartResize({ width: 5000, height: 5000 }, 28, 56 * 56, 16384 * 28 * 28), { width: 3556, height: 3556 });
  // Qwen2-VL's processor defaults (max 1280 tokens): 1024x1024 comes down to 980x980.
  assert.deepEqual(smartResize({ width: 1024, height: 1024 }, 28, 56 * 56, 28 * 28 * 1280), { width: 980, height: 980 });
  // Under min_pixels: scaled up to cover 56x56.
  assert.deepEqual(smartResize({ width: 20, height: 20 }, 28, 56 * 56, 28 * 28 * 1280), { width: 56, height: 56 });
});

test('a name no family matches counts as gpt-4o', () => {
  assert.equal(imageTokenRule('mmif-sim-vlm').family, 'other (as gpt-4o)');
  assert.equal(imageTokens('mmif-sim-vlm', { width: 1024, height: 768 }, 'high'), 765);
});

test('the size comes from the JPEG or PNG header of the data URL; an unreadable one counts as the largest image the pipeline sends', async () => {
  const jpeg = await sharp({ create: { width: 900, height: 300, channels: 3, background: '#808080' } })
    .jpeg()
    .withMetadata({ exif: { IFD0: { Copyright: 'x'.repeat(2000) } } })
    .toBuffer();
  const png = await sharp({ create: { width: 33, height: 65, channels: 3, background: '#808080' } })
    .png()
    .toBuffer();
  assert.deepEqual(imageSize(jpeg), { width: 900, height: 300 });
  assert.deepEqual(imageSize(png), { width: 33, height: 65 });
  assert.equal(imageSize(Buffer.from('not an image')), undefined);
  assert.equal(imageSize(jpeg.subarray(0, 20)), undefined, 'a header cut short');
  const url = `data:image/jpeg;base64,${jpeg.toString('base64')}`;
  assert.deepEqual(dataUrlImageSize(url), { width: 900, height: 300 });
  // 900x300: shortest side under 768, 2x1 tiles.
  assert.equal(imageUrlTokens('gpt-4o', url, 'high'), 85 + 170 * 2);
  assert.equal(imageUrlTokens('gpt-4o', 'data:image/jpeg;base64,AAAA', 'high'), 765, 'unread: a 1024x1024 image');
});

test("the simulator's usage and the engine's estimate count an image alike, by the request's model", async () => {
  const jpeg = await sharp({ create: { width: 1800, height: 2400, channels: 3, background: '#808080' } })
    .jpeg()
    .toBuffer();
  const messages = [
    {
      role: 'user' as const,
      content: [
        { type: 'image_url' as const, image_url: { url: `data:image/jpeg;base64,${jpeg.toString('base64')}`, detail: 'high' as const } },
        { type: 'text' as const, text: 'abcd' },
      ],
    },
  ];
  for (const [model, image] of [
    ['gpt-4o', 85 + 170 * 4],
    ['gpt-4.1-mini', Math.round(1452 * 1.62)],
    ['qwen2.5-vl-7b', imageTokens('qwen2.5-vl', { width: 1800, height: 2400 })],
  ] as const) {
    assert.equal(promptTokens({ model, messages }), image + 1, model);
    assert.equal(estimatePromptTokens({ model, messages }), image + 1, model);
  }
  assert.equal(promptTokens({ model: 'gpt-4o', messages }, 85), 86, 'a flat figure (SIM_IMAGE_TOKENS) overrides the rule');
});

test("the simulator reads an image part's header once per request part, not once per count", async () => {
  const jpeg = await sharp({ create: { width: 900, height: 300, channels: 3, background: '#808080' } })
    .jpeg()
    .toBuffer();
  const part = { type: 'image_url' as const, image_url: { url: `data:image/jpeg;base64,${jpeg.toString('base64')}`, detail: 'high' as const } };
  const request = { model: 'gpt-4o', messages: [{ role: 'user' as const, content: [part] }] };
  assert.equal(promptTokens(request), 85 + 170 * 2);
  // The same part object is not decoded again: its bytes swapped for unreadable ones count as before.
  part.image_url.url = 'data:image/jpeg;base64,AAAA';
  assert.equal(promptTokens(request), 85 + 170 * 2);
  assert.equal(promptTokens({ ...request, model: 'gpt-4.1-mini' }), imageUrlTokens('gpt-4.1-mini', part.image_url.url, 'high'), 'another model reads it again');
  assert.equal(promptTokens({ model: 'gpt-4o', messages: [{ role: 'user' as const, content: [{ ...part, image_url: { ...part.image_url } }] }] }), 765, 'a new part is read');
});
