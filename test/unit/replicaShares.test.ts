import { test } from 'node:test';
import assert from 'node:assert/strict';
import { replicaShares, replicaSharesLine } from '../../domain/replicaShares.js';
import { addTallies, copyTallies, noTallies } from '../../domain/tallies.js';
import { sliceHeartbeat } from '../../activities/sliceHeartbeat.js';
import { newProgress, recordCommittedShard } from '../../workflows/buildProgress.js';
import { newShardProgress, recordSliceStages } from '../../workflows/shardProgress.js';
import { stubSummary } from '../harness/shardSummaries.js';

const a = 'http://gpu0:8000/v1';
const b = 'http://gpu1:8000/v1';

test('tallies add up: failed attempts by kind, replica counts per replica; shares are of the attempts routed', () => {
  const tallies = noTallies();
  addTallies(tallies, { failedAttempts: { transient: 1 }, replicas: { [a]: { routed: 30, spilled: 0, rerouted: 0, ejections: 1 } } });
  addTallies(tallies, {
    failedAttempts: { transient: 2, 'rate-limited': 1 },
    replicas: { [a]: { routed: 10, spilled: 2, rerouted: 0, ejections: 0 }, [b]: { routed: 60, spilled: 1, rerouted: 9, ejections: 0 } },
  });
  addTallies(tallies, { failedAttempts: { refused: 1 } });
  addTallies(tallies, undefined);
  assert.deepEqual(tallies.failedAttempts, { transient: 3, 'rate-limited': 1, refused: 1 });
  const copy = copyTallies(tallies);
  copy.replicas[a]!.routed++;
  assert.equal(tallies.replicas[a]!.routed, 40, 'a copy shares nothing with its source');
  const tally = tallies.replicas;
  assert.deepEqual(replicaShares(tally), [
    { replica: a, routed: 40, spilled: 2, rerouted: 0, ejections: 1, share: 0.4 },
    { replica: b, routed: 60, spilled: 1, rerouted: 9, ejections: 0, share: 0.6 },
  ]);
  assert.equal(replicaSharesLine(replicaShares(tally)), `${a} 40.0% (40 routed, 2 spilled in, taken out 1x); ${b} 60.0% (60 routed, 1 spilled in, 9 re-routed in)`);
});

test("a slice's replica counts go through its heartbeat, the shard's progress and the build's", () => {
  const beat = sliceHeartbeat({ failedAttempts: { transient: 2 }, replicas: { [a]: { routed: 5, ejections: 1 }, junk: 3 } });
  assert.deepEqual(beat?.replicas, { [a]: { routed: 5, spilled: 0, rerouted: 0, ejections: 1 } }, 'missing counts read as 0, a non-object entry is dropped');
  const shard = newShardProgress(0, 4, ['image'], 0);
  const outcome = { stages: { image: { ok: 2, rejected: 0, blocked: 0, requests: 5 } }, failedAttempts: {}, replicas: beat!.replicas };
  recordSliceStages(shard, 2, outcome, 1);
  recordSliceStages(shard, 2, outcome, 2);
  assert.equal(shard.replicas[a]!.routed, 10);
  const build = newProgress('b', 0);
  const summary = { ...stubSummary(0, 4, 4, 0), replicas: shard.replicas };
  recordCommittedShard(build, summary);
  recordCommittedShard(build, summary);
  assert.deepEqual(build.replicas[a], { routed: 20, spilled: 0, rerouted: 0, ejections: 4 });
});
