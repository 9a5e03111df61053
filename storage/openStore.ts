/**
 * The one place a URI becomes a store: every command and activity opens its sources, output and
 * caches here, so each gets secret masking and named failures whatever backend serves it.
 */
import { LocalStore } from './localStore.js';
import { S3Store, type S3Options } from './s3Store.js';
import type { ObjectStore } from './objectStore.js';
import { maskingStore } from './maskingStore.js';
import { namingFailures } from './namedFailures.js';

/**
 * Opens `s3://bucket/prefix` as an S3 store and anything else as a local directory; either masks
 * secret values in the text it writes (maskingStore.ts) and names itself in its infrastructure
 * failures (namedFailures.ts).
 */
export function openStore(uri: string, s3: S3Options = {}): ObjectStore {
  const match = /^s3:\/\/([^/]+)\/?(.*)$/.exec(uri);
  if (!match) return maskingStore(namingFailures(new LocalStore(uri.startsWith('file://') ? new URL(uri).pathname : uri)));
  const [, bucket, prefix] = match;
  return maskingStore(namingFailures(new S3Store(bucket!, prefix!.replace(/\/+$/, ''), s3)));
}

/** One file named by URI (a local path or s3://bucket/key): the store of its folder, and its key there. */
export function openFileStore(uri: string, s3: S3Options = {}): { store: ObjectStore; key: string } {
  const cut = uri.lastIndexOf('/');
  return { store: openStore(cut < 0 ? '.' : cut === 0 ? '/' : uri.slice(0, cut), s3), key: uri.slice(cut + 1) };
}
