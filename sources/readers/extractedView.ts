/**
 * A source's store as a reader sees it once its gzip'd tars are extracted (tarGzExtraction.ts): the
 * members of `sub/images.tar.gz`, written under `.mmif-extracted/sub/images.tar.gz/`, read and list
 * as `sub/<member>`, exactly as if unpacked by hand beside the archive; a file really at that key
 * wins. Only completed extractions are seen (their markers are read once, on first use), and the
 * cache folder itself is never listed (the store's listing leaves it out, storage/objectStore.ts
 * EXTRACTION_CACHE), so a half-written one cannot pass for data. Every source type
 * opens its root through here (sourceStore), so each gains the archives at once.
 */
import type { ImageOrigin } from '../../domain/sample.js';
import type { S3Options } from '../../storage/s3Store.js';
import { openStore } from '../../storage/openStore.js';
import type { ObjectInfo, ObjectStore } from '../../storage/objectStore.js';
import { completedExtractions, extractionDir } from './tarGzExtraction.js';

/** An extraction as the view maps it: members of `cache/` read as `<folder>/<member>`. */
interface Mapping {
  /** The archive's key (a split archive's without the part suffix). */
  archive: string;
  /** The archive's folder under the root ('' at the root). */
  folder: string;
  cache: string;
}

/** A source's root, opened with its extracted archives in view. */
export function sourceStore(uri: string, s3: S3Options): ObjectStore {
  return extractedView(openStore(uri, s3));
}

/** Per view, the keys it read from an extraction and where they came from (what a record's image_origin names). */
const origins = new WeakMap<ObjectStore, Map<string, ImageOrigin>>();

/** The archive and member a view read `key` from, when it did (the key was no file of the root). */
export function extractedOrigin(store: ObjectStore, key: string): ImageOrigin | undefined {
  return origins.get(store)?.get(key);
}

export function extractedView(base: ObjectStore): ObjectStore {
  const served = new Map<string, ImageOrigin>();
  let loaded: Promise<Mapping[]> | undefined;
  const mappings = () =>
    (loaded ??= completedExtractions(base).then((all) =>
      all.map(({ key }) => ({ archive: key, folder: key.includes('/') ? key.slice(0, key.lastIndexOf('/')) : '', cache: extractionDir(key) })),
    ));
  /** Where `key` may be stored in the extractions, in archive order: the cache key, the archive and its member. */
  const cached = async (key: string): Promise<Array<{ stored: string; origin: ImageOrigin }>> =>
    (await mappings()).flatMap(({ folder, cache, archive }) => {
      const member = folder === '' ? key : key.startsWith(`${folder}/`) ? key.slice(folder.length + 1) : undefined;
      return member === undefined ? [] : [{ stored: `${cache}/${member}`, origin: { file: archive, member } }];
    });
  /** The first of `places` that is stored, if any. */
  const firstStored = async (places: ReadonlyArray<{ stored: string }>): Promise<string | undefined> => {
    for (const { stored } of places) if (await base.exists(stored)) return stored;
    return undefined;
  };
  /** The first extraction holding `key`, if any. */
  const storedIn = async (key: string): Promise<string | undefined> => firstStored(await cached(key));
  /** Where `key` is stored: itself when it exists (or nothing holds it), else the first extraction holding it. */
  const located = async (key: string): Promise<string> => {
    const places = await cached(key);
    if (places.length === 0 || (await base.exists(key))) return key;
    return (await firstStored(places)) ?? key;
  };
  const view: ObjectStore = {
    root: base.root,
    ...(base.endpoint ? { endpoint: base.endpoint } : {}),
    async get(key) {
      const body = await base.get(key);
      if (body !== undefined) return body;
      for (const { stored, origin } of await cached(key)) {
        const extracted = await base.get(stored);
        if (extracted === undefined) continue;
        served.set(key, origin);
        return extracted;
      }
      return undefined;
    },
    getRange: async (key, start, end) => base.getRange(await located(key), start, end),
    openRead: async (key) => base.openRead(await located(key)),
    exists: async (key) => (await base.exists(key)) || (await storedIn(key)) !== undefined,
    list: (prefix) => listing(base, prefix, mappings),
    put: (key, body, contentType) => base.put(key, body, contentType),
    create: (key, body, contentType) => base.create(key, body, contentType),
    putIfAbsent: (key, body, contentType) => base.putIfAbsent(key, body, contentType),
    appendLine: (key, line) => base.appendLine(key, line),
    readLines: (key) => base.readLines(key),
    delete: (key) => base.delete(key),
    sweepIncompleteWrites: (prefix) => base.sweepIncompleteWrites(prefix),
  };
  origins.set(view, served);
  return view;
}

/** The root's objects (its listing leaves the cache out) merged in key order with the extracted members under `prefix`. */
async function* listing(base: ObjectStore, prefix: string, mappings: () => Promise<Mapping[]>): AsyncGenerator<ObjectInfo> {
  const streams: Array<AsyncIterator<ObjectInfo>> = [base.list(prefix)[Symbol.asyncIterator]()];
  for (const { folder, cache } of await mappings()) {
    const at = folder === '' ? '' : `${folder}/`;
    // Members under the prefix: the prefix inside the archive's folder, or a prefix of that folder.
    if (prefix.startsWith(at)) streams.push(renamed(base.list(`${cache}/${prefix.slice(at.length)}`), `${cache}/`, at)[Symbol.asyncIterator]());
    else if (at.startsWith(prefix)) streams.push(renamed(base.list(`${cache}/`), `${cache}/`, at)[Symbol.asyncIterator]());
  }
  yield* mergedByKey(streams);
}

async function* renamed(objects: AsyncIterable<ObjectInfo>, from: string, to: string): AsyncGenerator<ObjectInfo> {
  for await (const object of objects) yield { ...object, key: to + object.key.slice(from.length) };
}

/** Sorted streams merged into one sorted stream; a key in several is listed once, from the first. */
async function* mergedByKey(streams: Array<AsyncIterator<ObjectInfo>>): AsyncGenerator<ObjectInfo> {
  if (streams.length === 1) {
    for (let next = await streams[0]!.next(); !next.done; next = await streams[0]!.next()) yield next.value;
    return;
  }
  const heads = await Promise.all(streams.map((s) => s.next()));
  try {
    for (;;) {
      let least = -1;
      for (let i = 0; i < heads.length; i++) if (!heads[i]!.done && (least === -1 || heads[i]!.value.key < heads[least]!.value.key)) least = i;
      if (least === -1) return;
      const object = heads[least]!.value as ObjectInfo;
      yield object;
      for (let i = 0; i < heads.length; i++) while (!heads[i]!.done && heads[i]!.value.key === object.key) heads[i] = await streams[i]!.next();
    }
  } finally {
    // A caller that stops early (a reader's first segment) releases every listing.
    await Promise.all(streams.map((s, i) => (heads[i]!.done ? undefined : s.return?.())));
  }
}
