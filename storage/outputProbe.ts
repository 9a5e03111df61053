/**
 * Checks at plan time that a build can write where its output goes, by writing and deleting one
 * small object: a missing bucket, a read-only or non-existent path, or a path under a file fails
 * the build at once with a message naming the location, instead of each shard retrying for minutes;
 * so does an object store nothing answers at (a refused connection, an unknown host, TLS).
 */
import { randomBytes } from 'node:crypto';
import { rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { LruCache } from '../domain/lruCache.js';
import type { ObjectStore } from './objectStore.js';
import { OutputLocationError } from './outputLocationError.js';
import { s3Answer } from './s3Answer.js';
import { connectFailureOf } from '../domain/connectFailure.js';

/** Local errors that say the location itself is wrong (not a passing hiccup). */
const PERMANENT_FS_CODES = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOENT', 'ENOTDIR', 'EEXIST', 'EISDIR', 'ENOSPC', 'EDQUOT']);
/** S3 answers that mean the bucket or the credentials are wrong. */
const PERMANENT_S3_CODES = new Set(['NoSuchBucket', 'AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'InvalidBucketName', 'AllAccessDisabled']);

/** Roots found writable; an LRU, so a worker serving a new dated output each night keeps the recent ones (a forgotten root is probed again). */
const written = new LruCache<true>(256);

/**
 * Writes and deletes `.mmif-write-probe-<random>` at the store's root (no folder of its own, so
 * nothing is left behind); once per root and process.
 */
export async function probeOutput(store: ObjectStore): Promise<void> {
  if (written.has(store.root)) return;
  const key = `.mmif-write-probe-${randomBytes(6).toString('hex')}`;
  try {
    await store.put(key, 'mmif-engine write probe\n', 'text/plain');
    await store.delete(key);
  } catch (err) {
    // After the S3 client's own attempts: a refused connection, an unknown host or a TLS failure is
    // a wrong s3.endpoint far more often than an outage (domain/connectFailure.ts).
    const connect = store.endpoint ? connectFailureOf(err, store.endpoint, true) : undefined;
    if (connect) throw new OutputLocationError(`output ${store.root}: object store ${store.endpoint}: ${connect.what} — check s3.endpoint and that the store runs`);
    if (!isUnwritable(err)) throw err;
    throw new OutputLocationError(`output ${store.root} is not writable: ${describe(err)}`);
  }
  written.get(store.root, () => true);
}

/**
 * The probe for a check that starts nothing and so must leave nothing (`mmif validate`): the folders
 * the write had to make on the way to a local root that did not exist are removed again.
 */
export async function probeOutputLeavingNothing(store: ObjectStore): Promise<void> {
  const absent = await absentFolders(store.root);
  try {
    await probeOutput(store);
  } finally {
    // rmdir removes a folder only when empty (the probe deleted its object): one another process
    // wrote into meanwhile stays, as does one the failed write never made (ENOENT).
    for (const folder of absent) await rmdir(folder).catch(() => undefined);
  }
}

/** A local root's folders that do not exist yet, deepest first; none for an S3 root (S3 has no folders). */
async function absentFolders(root: string): Promise<string[]> {
  const absent: string[] = [];
  if (root.startsWith('s3://')) return absent;
  for (let folder = root; path.dirname(folder) !== folder; folder = path.dirname(folder)) {
    const code = await stat(folder).then(
      () => undefined,
      (err: NodeJS.ErrnoException) => err.code,
    );
    if (code !== 'ENOENT') return absent;
    absent.push(folder);
  }
  return absent;
}

/** Whether the store refused the write for good (denied, read-only, no such place), not for a moment. */
function isUnwritable(err: unknown): boolean {
  const answer = s3Answer(err);
  if (answer) return PERMANENT_S3_CODES.has(answer.name) || answer.status === 403 || answer.status === 404;
  return PERMANENT_FS_CODES.has((err as NodeJS.ErrnoException).code ?? '');
}

function describe(err: unknown): string {
  const answer = s3Answer(err);
  if (answer) return `${answer.name} (HTTP ${answer.status}): ${(err as Error).message}`;
  const e = err as NodeJS.ErrnoException;
  const hints: Record<string, string> = {
    ENOTDIR: 'a part of the path is a file, not a directory',
    ENOENT: 'the path cannot be created (a parent is missing or virtual, e.g. /proc)',
    EROFS: 'read-only file system',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
  };
  return `${e.code}: ${hints[e.code ?? ''] ?? e.message}${e.path ? ` (${e.path})` : ''}`;
}
