import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { parseBuildConfig } from '../../config/buildConfig.js';
import { dedupePolicy } from '../../config/sourceConfig.js';
import { SampleRejection } from '../../domain/rejection.js';
import { claimOrReject, dedupeKey } from '../../pipeline/stages/image/imageClaims.js';
import { LocalStore } from '../../storage/localStore.js';

const SHA = 'a'.repeat(64);

test('dedupe keys: image alone, image with the question (case and spacing ignored), or nothing', () => {
  assert.equal(dedupeKey('image', SHA, 'What is X?'), dedupeKey('image', SHA, 'Another question'));
  assert.notEqual(dedupeKey('image+question', SHA, 'What is X?'), dedupeKey('image+question', SHA, 'What is Y?'));
  assert.equal(dedupeKey('image+question', SHA, 'What is  X?'), dedupeKey('image+question', SHA, ' what is x? '));
  assert.equal(dedupeKey('none', SHA, 'What is X?'), undefined);
});

test('per-source policy: caption sources dedupe by image, question sources by image and question; a source may override', () => {
  const config = parseBuildConfig({
    buildId: 'b',
    output: '/tmp/out',
    maxSamples: 70,
    sources: [
      { type: 'cc3m', uri: '/d/cc3m' },
      { type: 'rico', uri: '/d/rico' },
      { type: 'chartqa', uri: '/d/chartqa' },
      { type: 'geo170k', uri: '/d/geo' },
      { type: 'allava', uri: '/d/allava' },
      { type: 'multiui', uri: '/d/multiui', files: ['stage1_data.json'] },
      { type: 'chartqa', uri: '/d/chartqa2', dedupe: 'none' },
    ],
    models: { default: { model: 'm' } },
  });
  assert.deepEqual(config.sources.map(dedupePolicy), ['image', 'image', 'image+question', 'image+question', 'image+question', 'image+question', 'none']);
});

test('the lowest rank keeps a claim whichever sample claims first; the others are rejected naming it', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'mmif-claims-'));
  try {
    const store = new LocalStore(root);
    const high = { sampleId: 'cc3m-high', rank: 'f0' };
    const low = { sampleId: 'cc3m-low', rank: '10' };
    const middle = { sampleId: 'cc3m-middle', rank: '80' };
    const lost = (id: string) => `lost/${id}.json`;
    const claim = (who: typeof high, policy: 'image' | 'image+question' = 'image') => claimOrReject(store, 'claims/x.json', who, policy, lost);
    await claim(high); // first come
    assert.equal(await store.exists(lost('cc3m-high')), false, 'no mark while nobody took the claim over');
    await claim(low); // a lower rank takes over, marking the sample that lost it
    assert.deepEqual(JSON.parse((await store.get(lost('cc3m-high')))!.toString()), { sampleId: 'cc3m-high', key: 'claims/x.json', keptBy: 'cc3m-low' });
    await claim(low); // a retry of the holder passes
    await assert.rejects(claim(middle), (err: unknown) => {
      assert.ok(err instanceof SampleRejection);
      assert.equal(err.message, 'duplicate-image: same image as sample cc3m-low');
      return true;
    });
    await assert.rejects(claim(high), /duplicate-image: same image as sample cc3m-low/);
    await assert.rejects(claim(high, 'image+question'), /duplicate-question: same image and question as sample cc3m-low/);
    assert.deepEqual(JSON.parse((await store.get('claims/x.json'))!.toString()), low);
    assert.equal(await store.exists(lost('cc3m-middle')), false, 'a rejected claimant took nothing over');
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
