import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseEvalConfig } from '../../config/evalConfig.js';
import { reportedSettings } from '../../output/reports/evalOutputs.js';

const config = (extra: Record<string, unknown>) => parseEvalConfig({ evalId: 'e', model: { model: 'm' }, data: '/home/alice/datasets/mmif', ...extra });

test('an eval report states local paths relative to its own folder: a report beside its dataset names no absolute path and still points at its data after a move; S3 URIs stay', () => {
  // The report is written to <data>/MM-IFEval/eval/ by default.
  const chats = '/home/alice/datasets/mmif/MM-IFEval/holdout/chats.jsonl';
  const local = reportedSettings(config({ chats: { uri: chats } }));
  assert.equal(local.data, '../..');
  assert.equal((local.chats as { uri: string }).uri, '../holdout/chats.jsonl');
  assert.ok(!JSON.stringify(local).includes('/home/alice'), JSON.stringify(local));
  // With --out the report sits there: out is '.', data is reached from it.
  const elsewhere = reportedSettings(config({ out: '/srv/evals/run1' }));
  assert.deepEqual([elsewhere.out, elsewhere.data], ['.', '../../../home/alice/datasets/mmif']);
  const s3 = reportedSettings(config({ data: 's3://bucket/datasets/mmif' }));
  assert.equal(s3.data, 's3://bucket/datasets/mmif');
});
