/**
 * An image's width and height read from its header alone, without decoding it: what the image-token
 * rules (llm/imageTokens.ts) need from an image sent as a data URL, in the simulator and in the
 * engine's own token estimate, where decoding every image again would cost more than the call.
 * JPEG: the first start-of-frame segment (SOF0-SOF15 but DHT, JPG and DAC), whose frame header is
 * length, precision, height, width (ITU-T T.81 B.2.2, https://www.w3.org/Graphics/JPEG/itu-t81.pdf);
 * PNG: the IHDR chunk, first after the signature, width then height (https://www.w3.org/TR/png-3/#11IHDR).
 * Anything else, or a header cut short, is undefined: the caller says what to assume.
 */

export interface ImageSize {
  width: number;
  height: number;
}

/** 64 KiB and a little more, in base64 characters (a multiple of 4, so the slice decodes whole). */
const HEAD_CHARS = 88 * 1024;

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** The size in an image's header (JPEG or PNG), or undefined. */
export function imageSize(bytes: Uint8Array): ImageSize | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return jpegSize(bytes);
  if (PNG_SIGNATURE.every((b, i) => bytes[i] === b)) return pngSize(bytes);
  return undefined;
}

function jpegSize(bytes: Uint8Array): ImageSize | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 2;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return undefined;
    const marker = bytes[at + 1]!;
    // Fill bytes and markers without a length (TEM, RSTn) stand alone.
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    const length = view.getUint16(at + 2);
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) {
      if (at + 9 > bytes.length) return undefined;
      const size = { height: view.getUint16(at + 5), width: view.getUint16(at + 7) };
      return size.width > 0 && size.height > 0 ? size : undefined;
    }
    at += 2 + length;
  }
  return undefined;
}

function pngSize(bytes: Uint8Array): ImageSize | undefined {
  if (bytes.length < 24) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = { width: view.getUint32(16), height: view.getUint32(20) };
  return size.width > 0 && size.height > 0 ? size : undefined;
}

/**
 * The size of the image in a base64 data URL. Headers sit at the start, so the first 64 KiB of the
 * payload are decoded first (an EXIF block may push the frame header that far) and the rest only if
 * the header is not in them.
 */
export function dataUrlImageSize(url: string): ImageSize | undefined {
  if (!url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  if (comma < 0 || !url.slice(0, comma).endsWith(';base64')) return undefined;
  const head = url.slice(comma + 1, comma + 1 + HEAD_CHARS);
  const size = imageSize(Buffer.from(head, 'base64'));
  if (size !== undefined || head.length === url.length - comma - 1) return size;
  return imageSize(Buffer.from(url.slice(comma + 1), 'base64'));
}
