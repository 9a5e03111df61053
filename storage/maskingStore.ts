/**
 * An ObjectStore that masks secret values (config/secrets.ts) in every text it writes: stage
 * states, rejects, manifests, reports and cached replies all pass through here, so an endpoint's
 * error body that echoes a key is stored without it. Binary bodies (images, Parquet) are written
 * as they are; their text comes from states already masked here.
 */
import { maskSecrets } from '../config/secrets.js';
import type { ObjectStore } from './objectStore.js';

/** A body as the store writes it: text masked, bytes as given. Shard manifests hash this form. */
export function storedBody(body: Buffer | string): Buffer | string {
  return typeof body === 'string' ? maskSecrets(body) : body;
}

export function maskingStore(store: ObjectStore): ObjectStore {
  const mask = storedBody;
  return {
    root: store.root,
    ...(store.endpoint ? { endpoint: store.endpoint } : {}),
    get: (key) => store.get(key),
    getRange: (key, start, end) => store.getRange(key, start, end),
    openRead: (key) => store.openRead(key),
    put: (key, body, contentType) => store.put(key, mask(body), contentType),
    create: (key, body, contentType) => store.create(key, mask(body), contentType),
    putIfAbsent: (key, body, contentType) => store.putIfAbsent(key, mask(body), contentType),
    exists: (key) => store.exists(key),
    appendLine: (key, line) => store.appendLine(key, maskSecrets(line)),
    readLines: (key) => store.readLines(key),
    list: (prefix) => store.list(prefix),
    delete: (key) => store.delete(key),
    sweepIncompleteWrites: (prefix) => store.sweepIncompleteWrites(prefix),
  };
}
