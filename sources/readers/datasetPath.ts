/**
 * Paths that dataset records name (`image: "allava_laion/images/1.jpeg"`, ChartQA's `imgname`) are
 * untrusted input: one naming `../` or an absolute path must never make a reader open a file outside
 * the dataset, so it is refused before any store is asked for it.
 */
/**
 * Image files a reader lists (by extension, lowercased): everything the image stage decodes (sharp:
 * JPEG, PNG, WebP, GIF, TIFF, AVIF), and BMP, which it rejects as `unsupported-format: bmp` rather
 * than the reader skipping the file without a record.
 */
export const IMAGE_EXTENSIONS: ReadonlySet<string> = new Set(['jpg', 'jpeg', 'png', 'webp', 'gif', 'tif', 'tiff', 'avif', 'bmp']);

/** The store key of `path` under the folder `dir` of the dataset root, or undefined when `path` could leave the root. */
export function datasetKey(dir: string, path: string): string | undefined {
  if (path.trim() === '' || path.includes('\0') || path.includes('\\')) return undefined;
  // Absolute paths, and anything with a scheme or drive letter (`file:`, `C:`), are not relative paths.
  if (path.startsWith('/') || /^[A-Za-z][A-Za-z0-9+.-]*:/.test(path)) return undefined;
  const segments = path.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) return undefined;
  return joinPath(dir, ...segments);
}

/** Joins key segments with '/', ignoring empty ones: joinPath('', 'train', 'png') is 'train/png'. */
export function joinPath(...parts: string[]): string {
  return parts.filter((p) => p !== '').join('/');
}
