import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { imageSchema } from '../../config/imageConfig.js';
import { sha256Hex } from '../../domain/hashing.js';
import { channelStdDevs, normalizeImage, type ImageRejection, type NormalizedImage } from '../../image/normalize.js';
import { alphaPng, blankJpeg, exifRotatedJpeg, hugeDimensionPng, renderPng, sceneJpeg, sceneSvg, truncatedJpeg } from '../fixtures/images.js';

const cfg = imageSchema.parse({});

async function accepted(bytes: Buffer, config = cfg): Promise<NormalizedImage> {
  const result = await normalizeImage(bytes, config);
  assert.ok(result.ok, `expected the image to be accepted, got: ${(result as ImageRejection).reason}`);
  return result;
}

async function rejectedWith(bytes: Buffer, code: string, config = cfg): Promise<string> {
  const result = await normalizeImage(bytes, config);
  assert.equal(result.ok, false, `expected a '${code}' rejection`);
  const { reason } = result as ImageRejection;
  assert.ok(reason.startsWith(`${code}: `), `reason should start with '${code}: ', got: ${reason}`);
  return reason;
}

/** RGB of one output pixel. */
async function pixel(jpeg: Buffer, x: number, y: number): Promise<[number, number, number]> {
  const { data, info } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true });
  const i = (y * info.width + x) * info.channels;
  return [data[i]!, data[i + 1]!, data[i + 2]!];
}

describe('normalizeImage', () => {
  it('turns a good image into a downscaled 3-channel baseline JPEG with the sha256 of its bytes', async () => {
    const out = await accepted(await sceneJpeg(1, 1600, 1200));
    const meta = await sharp(out.jpeg).metadata();
    assert.equal(meta.format, 'jpeg');
    assert.equal(meta.channels, 3);
    assert.equal(meta.isProgressive, false);
    assert.deepEqual([out.width, out.height, meta.width, meta.height], [1024, 768, 1024, 768]);
    assert.deepEqual([out.originalWidth, out.originalHeight], [1600, 1200]);
    assert.equal(out.sha256, sha256Hex(out.jpeg));
  });

  it('is deterministic: the same input gives the same bytes, another input another sha', async () => {
    const input = await sceneJpeg(2, 900, 700);
    const [a, b, other] = await Promise.all([accepted(input), accepted(Buffer.from(input)), accepted(await sceneJpeg(3, 900, 700))]);
    assert.ok(a.jpeg.equals(b.jpeg));
    assert.equal(a.sha256, b.sha256);
    assert.notEqual(a.sha256, other.sha256);
  });

  it('never enlarges and honours maxLongSide', async () => {
    const small = await accepted(await sceneJpeg(4, 640, 480));
    assert.deepEqual([small.width, small.height], [640, 480]);
    const capped = await accepted(await sceneJpeg(4, 640, 480), { ...cfg, maxLongSide: 320 });
    assert.deepEqual([capped.width, capped.height], [320, 240]);
  });

  it('rejects bytes that do not decode', async () => {
    await rejectedWith(await truncatedJpeg(), 'corrupt');
    await rejectedWith(Buffer.from('definitely not an image'), 'corrupt');
  });

  it('decodes every raster format sharp reads (GIF first frame, TIFF, AVIF) and names BMP as unsupported, not corrupt', async () => {
    const jpeg = await sceneJpeg(3, 640, 480);
    for (const format of ['gif', 'tiff', 'avif'] as const) {
      const image = await accepted(await sharp(jpeg).toFormat(format).toBuffer());
      assert.deepEqual([image.width, image.height], [640, 480], format);
    }
    // A minimal 2x2 24-bit BMP (BITMAPINFOHEADER), as Windows tools write it.
    const bmp = Buffer.alloc(70);
    bmp.write('BM', 0, 'latin1');
    bmp.writeUInt32LE(70, 2);
    bmp.writeUInt32LE(54, 10);
    bmp.writeUInt32LE(40, 14);
    bmp.writeInt32LE(2, 18);
    bmp.writeInt32LE(2, 22);
    bmp.writeUInt16LE(1, 26);
    bmp.writeUInt16LE(24, 28);
    const reason = await rejectedWith(bmp, 'unsupported-format');
    assert.match(reason, /bmp/);
  });

  it('rejects vector input instead of rendering it', async () => {
    await rejectedWith(Buffer.from(sceneSvg(5, 640, 480)), 'unsupported-format');
  });

  it('rejects huge dimensions from the header alone', async () => {
    // The PNG has an empty IDAT: a decode would fail as corrupt, not as too large.
    const reason = await rejectedWith(hugeDimensionPng(), 'too-large');
    assert.match(reason, /64000000/);
  });

  it('rejects an image whose short side is below minShortSide', async () => {
    const reason = await rejectedWith(await sceneJpeg(6, 120, 90), 'too-small');
    assert.match(reason, /120x90/);
  });

  it('rejects an extreme aspect ratio', async () => {
    const reason = await rejectedWith(await sceneJpeg(7, 1500, 300), 'aspect-ratio');
    assert.match(reason, /5\.00:1/);
    await accepted(await sceneJpeg(7, 900, 300)); // exactly 3:1 is allowed
  });

  it('rejects a near-uniform image as blank', async () => {
    await rejectedWith(await blankJpeg(), 'blank');
  });

  it('flattens transparency onto white', async () => {
    const out = await accepted(await alphaPng(400, 300));
    const corner = await pixel(out.jpeg, 5, 5);
    const centre = await pixel(out.jpeg, 200, 150);
    assert.ok(
      corner.every((c) => c > 245),
      `transparent corner should be white, got ${corner}`,
    );
    assert.ok(centre[0] > 180 && centre[1] < 80 && centre[2] < 80, `opaque disc should stay red, got ${centre}`);
  });

  it('rotates per EXIF orientation', async () => {
    const out = await accepted(await exifRotatedJpeg());
    assert.deepEqual([out.width, out.height, out.originalWidth, out.originalHeight], [480, 640, 480, 640]);
    const top = await pixel(out.jpeg, 240, 20);
    const bottom = await pixel(out.jpeg, 240, 620);
    assert.ok(top[0] > 180 && top[2] < 80, `stored left half (red) should be on top, got ${top}`);
    assert.ok(bottom[2] > 180 && bottom[0] < 80, `stored right half (blue) should be at the bottom, got ${bottom}`);
    assert.equal((await sharp(out.jpeg).metadata()).orientation, undefined);
  });

  it('outputs 3 sRGB channels for greyscale input', async () => {
    const grey = await sharp(await renderPng(sceneSvg(8, 500, 400)))
      .removeAlpha()
      .toColourspace('b-w')
      .png()
      .toBuffer();
    assert.equal((await sharp(grey).metadata()).channels, 1);
    const out = await accepted(grey);
    const meta = await sharp(out.jpeg).metadata();
    assert.deepEqual([meta.channels, meta.space], [3, 'srgb']);
  });
});

describe('channelStdDevs', () => {
  it("gives libvips' per-channel standard deviations (the blank check's measure) exactly", async () => {
    for (const bytes of [await sceneJpeg(3, 320, 240), await blankJpeg(), await alphaPng(64, 48), await sceneJpeg(9, 1, 2)]) {
      const { data, info } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true });
      const { channels } = await sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } }).stats();
      assert.deepEqual(
        channelStdDevs(data, info.channels),
        channels.map((c) => c.stdev),
      );
    }
  });
});
