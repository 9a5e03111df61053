/**
 * Gzip'd tars under a source's root (`images.tar.gz`, `*.tgz`, and split parts `multiui.tar.gz.00`,
 * `.01`, ... of one gzip stream, as yuanshengni/MultiUI ships MultiUI) are extracted once, during
 * planning, into the source's own store, `.mmif-extracted/<archive>/`, where every worker sees them;
 * readers then find the files as if unpacked by hand beside the archive (extractedView.ts). This is
 * what Hugging Face `datasets` does with such archives (src/datasets/utils/extract.py: ExtractManager
 * extracts once into its cache, TarExtractor.safemembers blocks paths leaving it), with a completion
 * marker written last, so an interrupted extraction is redone rather than taken for done. The parts
 * are streamed through gunzip and the tar reader: one member at a time is held in memory, never the
 * archive. Docs: docs/sources.md "Archives".
 */
import { createGunzip } from 'node:zlib';
import { Readable, pipeline } from 'node:stream';
import { EXTRACTION_CACHE, getJson, putJson, type ObjectInfo, type ObjectStore } from '../../storage/objectStore.js';
import { SourceError } from '../contract.js';
import { datasetKey } from './datasetPath.js';
import { TarError, tarEntries } from './tar.js';

/** Completion markers, one per archive (`<archive>.json`); no archive key can name this folder. */
const MARKERS = `${EXTRACTION_CACHE}/.complete/`;
/** Puts in flight while extracting (S3 puts are a round trip each). */
const PUTS_IN_FLIGHT = 8;

/** A gzip'd tar: its key (a split archive's without the part suffix) and its parts in order. */
export interface TarGzArchive {
  key: string;
  parts: Array<{ key: string; size: number }>;
}

/** What an extraction left, written last: the parts it read, and what it refused or where the archive is damaged. */
export interface Extraction extends TarGzArchive {
  members: number;
  bytes: number;
  /** Members not written, each `'<path>': why`. */
  refused: string[];
  /** Where the archive is damaged (the members before it were written). */
  damage?: string;
}

const WHOLE = /\.(tar\.gz|tgz)$/i;
const PART = /^(.*\.(?:tar\.gz|tgz))\.(\d+|[a-z]{2,})$/i;

/** The gzip'd tars among a root's objects (as listed: the cache left out): whole archives, and split parts grouped and ordered. */
export function tarGzArchives(objects: Iterable<ObjectInfo>): TarGzArchive[] {
  const archives = new Map<string, TarGzArchive>();
  for (const { key, size, unreadable } of objects) {
    if (unreadable) continue;
    const base = WHOLE.test(key) ? key : PART.exec(key)?.[1];
    if (base === undefined) continue;
    const archive = archives.get(base) ?? { key: base, parts: [] };
    archive.parts.push({ key, size });
    archives.set(base, archive);
  }
  for (const archive of archives.values()) archive.parts.sort((a, b) => a.key.length - b.key.length || (a.key < b.key ? -1 : 1));
  return [...archives.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
}

/** The folder an archive's members are written under, and the key of its completion marker. */
export function extractionDir(archiveKey: string): string {
  return `${EXTRACTION_CACHE}/${archiveKey}`;
}

function markerKey(archiveKey: string): string {
  return `${MARKERS}${archiveKey}.json`;
}

/** The completed extractions recorded under a root, in archive order. */
export async function completedExtractions(store: ObjectStore): Promise<Extraction[]> {
  const found: Extraction[] = [];
  for await (const object of store.list(MARKERS)) {
    if (!object.key.endsWith('.json')) continue;
    const marker = await readMarker(store, object.key);
    if (marker) found.push(marker);
  }
  return found;
}

async function readMarker(store: ObjectStore, key: string): Promise<Extraction | undefined> {
  try {
    return await getJson<Extraction>(store, key);
  } catch (err) {
    if (err instanceof SyntaxError) return undefined; // torn: the extraction is redone
    throw err;
  }
}

/**
 * Extracts every gzip'd tar under the root that has no completion marker for its current parts (the
 * same keys and sizes): a re-plan skips what is complete and redoes what was interrupted or has
 * changed. Returns every archive's extraction. A root where the cache cannot be written fails with a
 * SourceError naming the root, the cache and the cause.
 */
export async function extractTarGzArchives(store: ObjectStore, onRead: (bytes: number) => void = () => {}): Promise<Extraction[]> {
  const candidates: ObjectInfo[] = [];
  for await (const object of store.list('')) if (WHOLE.test(object.key) || PART.test(object.key)) candidates.push(object);
  const done: Extraction[] = [];
  for (const archive of tarGzArchives(candidates)) {
    const marker = await readMarker(store, markerKey(archive.key));
    done.push(marker && JSON.stringify(marker.parts) === JSON.stringify(archive.parts) ? marker : await extract(store, archive, onRead));
  }
  return done;
}

async function extract(store: ObjectStore, archive: TarGzArchive, onRead: (bytes: number) => void): Promise<Extraction> {
  const dir = extractionDir(archive.key);
  const extraction: Extraction = { ...archive, members: 0, bytes: 0, refused: [] };
  const cacheError = (err: unknown) => new SourceError(store.root, `cannot write the extraction cache ${dir}/ of ${archive.key}: ${(err as Error).message}`);
  const missing = missingParts(archive);
  if (missing) extraction.damage = `${archive.key} is missing ${missing}`;
  else {
    const reading = { part: archive.parts[0]!.key };
    const gunzip = createGunzip();
    pipeline(Readable.from(concatenated(store, archive.parts, reading, onRead)), gunzip, () => {});
    let failed: unknown;
    let inFlight: Array<Promise<void>> = [];
    const refused = (path: string, why: string) => extraction.refused.push(`'${path}': ${why}`);
    try {
      for await (const entry of tarEntries(gunzip, archive.key, { capture: () => true, refused })) {
        const key = datasetKey('', entry.path);
        if (key === undefined) {
          refused(entry.path, 'its path leaves the archive');
          continue;
        }
        inFlight.push(store.put(`${dir}/${key}`, entry.data!).catch((err: unknown) => void (failed ??= err)));
        extraction.members++;
        extraction.bytes += entry.size;
        if (inFlight.length >= PUTS_IN_FLIGHT) {
          await Promise.all(inFlight);
          inFlight = [];
          if (failed) throw cacheError(failed);
        }
      }
    } catch (err) {
      if (err instanceof SourceError) throw err;
      if (!(err instanceof TarError) && !isZlibError(err)) throw err;
      const where = archive.parts.length > 1 ? ` (reading part ${reading.part})` : '';
      extraction.damage = err instanceof TarError ? `${err.message}${where}` : `${archive.key} is corrupt: ${(err as Error).message}${where}`;
    }
    await Promise.all(inFlight);
    if (failed) throw cacheError(failed);
  }
  try {
    await putJson(store, markerKey(archive.key), extraction);
  } catch (err) {
    throw cacheError(err);
  }
  return extraction;
}

/** A numbered split's missing parts (`.02, .05`), when its numbers are not consecutive from 0 or 1. */
function missingParts(archive: TarGzArchive): string | undefined {
  const numbers = archive.parts.map((p) => PART.exec(p.key)?.[2]).filter((n): n is string => n !== undefined && /^\d+$/.test(n));
  if (numbers.length < 2) return undefined;
  const width = numbers[0]!.length;
  const first = Math.min(1, Number(numbers[0]));
  const have = new Set(numbers.map(Number));
  const gaps: string[] = [];
  for (let n = first; n <= Number(numbers.at(-1)); n++) if (!have.has(n)) gaps.push(`.${String(n).padStart(width, '0')}`);
  return gaps.length > 0 ? `part${gaps.length > 1 ? 's' : ''} ${gaps.join(', ')}` : undefined;
}

/** The parts' bytes one after the other, noting which part is being read (what damage names). */
async function* concatenated(store: ObjectStore, parts: TarGzArchive['parts'], reading: { part: string }, onRead: (bytes: number) => void): AsyncGenerator<Buffer> {
  for (const part of parts) {
    reading.part = part.key;
    for await (const chunk of await store.openRead(part.key)) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      onRead(bytes.length);
      yield bytes;
    }
  }
}

/** zlib's errors carry codes such as Z_DATA_ERROR and Z_BUF_ERROR (a stream cut short). */
function isZlibError(err: unknown): boolean {
  return typeof (err as NodeJS.ErrnoException)?.code === 'string' && (err as NodeJS.ErrnoException).code!.startsWith('Z_');
}
