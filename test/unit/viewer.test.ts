import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { InstructRecord } from '../../output/records.js';
import { viewerHtml } from '../../output/viewer.js';

// Only the fields the page shows: model text is untrusted and must reach the page as text.
const record = {
  id: 'cc3m-1',
  source: 'cc3m',
  source_id: '0001',
  image_path: 'images/ab/abc.jpg',
  instruction: 'Describe <b>this</b>.',
  constraints: [{ type: 'mention', value: `Say "hi" & 'bye'`, method: 'rule', verifiers: [], selection: 'parser' }],
  verdicts: [{ index: 0, type: 'mention', method: 'rule', passed: false, detail: 'x" onmouseover="alert(1)', judgeAudit: { passed: true, judgeModel: 'm', detail: 'score 1/1' } }],
  answer: '</pre><script>alert(1)</script>',
  answer_attempts: 2,
  models: { answer: 'm' },
  pass_rate: 0,
} as unknown as InstructRecord;

test('the page shows model text as text: nothing in a record becomes markup or an attribute', () => {
  const html = viewerHtml({ buildId: 'b', simulated: false, instruct: [record], dpo: [], imageSrc: (p) => `../${p}` });
  assert.ok(!html.includes('<script>alert(1)</script>'));
  assert.ok(html.includes('&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;'));
  assert.ok(html.includes('Describe &lt;b&gt;this&lt;/b&gt;.'));
  assert.ok(html.includes('title="x&quot; onmouseover=&quot;alert(1)"'));
  assert.ok(html.includes('src="../images/ab/abc.jpg"'));
  assert.equal((html.match(/<script>/g) ?? []).length, 1, 'only the filter script');
});

test('each sample carries its type:verdict tokens for the filters, and a sampled rule verdict shows the judge', () => {
  const html = viewerHtml({ buildId: 'b', simulated: true, instruct: [record], dpo: [], imageSrc: (p) => p });
  assert.match(html, /data-kind="sft" data-source="cc3m" data-verdicts="mention:failed"/);
  assert.match(html, /<td class="fail" [^>]*>fail<small> · judge: pass<\/small><\/td>/);
  assert.match(html, /SIMULATED DATA/);
});
