/** Checks of a finished build's output shared by the integration tests. */
import assert from 'node:assert/strict';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { sha256Hex } from '../../domain/hashing.js';
import { buildLayout } from '../../storage/buildLayout.js';
import type { ShardManifest } from '../../output/manifest.js';
import { getJson, type ObjectStore } from '../../storage/objectStore.js';

/**
 * Every committed shard is whole: each file its manifest lists exists with the listed checksum.
 * Returns the checksums by path, to compare runs.
 */
export async function assertCommittedShardsIntact(store: ObjectStore, buildId: string, shardCount: number): Promise<Map<string, string>> {
  const layout = buildLayout(buildId);
  const sums = new Map<string, string>();
  for (let shard = 0; shard < shardCount; shard++) {
    const manifest = await getJson<ShardManifest>(store, layout.manifest(shard));
    if (!manifest) continue;
    for (const file of manifest.files) {
      const body = await store.get(`${layout.root}/${file.path}`);
      assert.ok(body, `${file.path} of committed shard ${shard} exists`);
      assert.equal(sha256Hex(body), file.sha256, `${file.path} matches its manifest`);
      sums.set(file.path, file.sha256);
    }
  }
  return sums;
}

/** Polls until `check` holds (or throws after `timeoutMs`). */
export async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 60_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Modification time of every file under a local folder, by relative path: compare runs to see what was written. */
export async function mtimesOf(root: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    out.set(path.relative(root, file), (await stat(file)).mtimeMs);
  }
  return out;
}
