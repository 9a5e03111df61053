/** Committing again the shards a late duplicate's drop made trim too much (output/commit/recommitTrimmed.ts), on a real local store. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ShardManifest } from '../../output/contracts/manifest.js';
import { recommitTrimmedShards } from '../../output/commit/recommitTrimmed.js';
import type { Goals } from '../../domain/targets.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { LocalStore } from '../../storage/localStore.js';
import { putJson } from '../../storage/objectStore.js';

/** A committed shard's manifest as far as caps go: what it kept, and the over-target samples and pairs it trimmed. */
const manifest = (shard: number, instruct: number, dpo: number, caps: Goals, trimmed = { instruct: 0, dpo: 0 }) =>
  ({
    shard,
    revision: 1,
    counts: { planned: 2, instruct, dpo, rejectedSamples: trimmed.instruct, rejectedPairs: trimmed.dpo },
    rejectsByReason: trimmed.instruct + trimmed.dpo > 0 ? { 'over-target': trimmed.instruct + trimmed.dpo } : {},
    rejectedSamplesByReason: trimmed.instruct > 0 ? { 'over-target': trimmed.instruct } : {},
    targetCaps: caps,
  }) as unknown as ShardManifest;

test('after a drop, the later shards of its source are committed again in rank order, each capped by what the earlier ones keep now', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-recommit-trimmed-'));
  try {
    const store = new LocalStore(dir);
    const layout = buildLayout('recap');
    // Source 0 owes 3 SFT and 2 pairs; source 1 owes 1 SFT. Shards of 2 samples: 0 (src 0), 1 (src 1), 2 (src 0), 3 (src 1), 4 (src 0).
    const plan = { shardSizes: [2, 2, 2, 2, 2], shardSources: [0, 1, 0, 1, 0] };
    const goals: Goals[] = [{ instruct: 3, dpo: 2 }, { instruct: 1 }];
    // Shard 0 kept 2 SFT and 2 pairs when shards 2 and 4 committed; a late duplicate has since dropped one of each.
    await putJson(store, layout.manifest(0), manifest(0, 1, 1, { instruct: 3, dpo: 2 }));
    await putJson(store, layout.manifest(2), manifest(2, 1, 0, { instruct: 1, dpo: 0 }, { instruct: 1, dpo: 1 }));
    await putJson(store, layout.manifest(4), manifest(4, 0, 0, { instruct: 0, dpo: 0 }, { instruct: 2, dpo: 0 }));
    // Source 1: shard 1 is not committed, so shard 3 (trimmed as if shard 1 kept 1) waits for it.
    await putJson(store, layout.manifest(3), manifest(3, 0, 0, { instruct: 0 }, { instruct: 1, dpo: 0 }));

    const commits: Array<[number, Goals]> = [];
    const recommit = async (shard: number, m: ShardManifest, caps: Goals) => {
      commits.push([shard, caps]);
      // What the shard writer would keep: its accepted records (kept and trimmed) up to the caps.
      const trimmedSamples = m.rejectedSamplesByReason?.['over-target'] ?? 0;
      const accepted = { instruct: m.counts.instruct + trimmedSamples, dpo: m.counts.dpo + (m.rejectsByReason['over-target'] ?? 0) - trimmedSamples };
      const kept = { instruct: Math.min(accepted.instruct, caps.instruct ?? Infinity), dpo: Math.min(accepted.dpo, caps.dpo ?? Infinity) };
      return { ...m, revision: 2, counts: { ...m.counts, ...kept } };
    };
    const done = await recommitTrimmedShards(store, layout, plan, goals, recommit);
    // Shard 2 gets back its trimmed SFT record and pair (caps 2 and 1): it keeps 2 and 1; shard 4 is then owed nothing more.
    assert.deepEqual(commits, [[2, { instruct: 2, dpo: 1 }]]);
    assert.deepEqual(done, [2]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
