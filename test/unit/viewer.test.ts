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

test('a multiturn build\'s chats show turn by turn (instruction added, question, answer, verdicts, PIF) and its pairs the instruction left out, as text', () => {
  const chat = {
    id: 'cc3m-2',
    system: 's',
    images: ['images/cd/cd.jpg'] as [string],
    conversations: [
      { from: 'human' as const, value: '<image>\nMention "<b>harbor</b>".\n\nWhat is shown?' },
      { from: 'gpt' as const, value: 'A harbor.' },
      { from: 'human' as const, value: 'Which colours?' },
      { from: 'gpt' as const, value: '</pre>Blue.' },
    ],
    metadata: JSON.stringify({
      source: 'cc3m',
      source_id: '0002',
      instructions: [{ turn: 1, type: 'mention', value: 'Mention "<b>harbor</b>".' }],
      turns: [
        { turn: 1, instruction: 'Mention "<b>harbor</b>".', attempts: 1, verdicts: [{ index: 0, type: 'mention', method: 'rule', passed: true, detail: 'ok' }], pif: 1 },
        { turn: 2, instruction: null, attempts: 3, verdicts: [{ index: 0, type: 'mention', method: 'rule', passed: false, detail: 'no' }], pif: 0 },
      ],
    }),
  };
  const pair = {
    id: 'cc3m-2-t2-dpo',
    system: 's',
    images: ['images/cd/cd.jpg'] as [string],
    conversations: chat.conversations.slice(0, 3),
    chosen: { from: 'gpt' as const, value: 'Blue harbor.' },
    rejected: { from: 'gpt' as const, value: 'Blue.' },
    metadata: JSON.stringify({ source: 'cc3m', source_id: '0002', turn: 2, forgotten_turn: 1, forgotten_instruction: { type: 'mention', value: 'Mention "harbor".' }, chosen_verdicts: [], rejected_verdicts: [{ index: 0, type: 'mention', method: 'rule', passed: false, detail: 'no' }] }),
  };
  const html = viewerHtml({ buildId: 'b', simulated: true, instruct: [], dpo: [], chats: [chat], chatPairs: [pair], imageSrc: (p) => p });
  assert.match(html, /<p>1 chats, 1 turn-level pairs\./);
  assert.match(html, /data-kind="chat" data-source="cc3m" data-verdicts="mention:failed mention:passed"/);
  assert.match(html, /<h3>Turn 1 <small>\(PIF 1\.00, 1 attempt\)<\/small><\/h3>\n<p class="instruction"><span class="badge">new instruction<\/span> Mention &quot;&lt;b&gt;harbor&lt;\/b&gt;&quot;\.<\/p>\n<p class="question">What is shown\?<\/p>/);
  assert.match(html, /<h3>Turn 2 <small>\(PIF 0\.00, 3 attempts\)<\/small><\/h3>\n\n<p class="question">Which colours\?<\/p>\n<pre>&lt;\/pre&gt;Blue\.<\/pre>/);
  assert.match(html, /data-kind="chat-dpo"/);
  assert.match(html, /turn 1's instruction <code>mention<\/code>: Mention &quot;harbor&quot;\./);
  assert.equal((html.match(/<script>/g) ?? []).length, 1, 'only the filter script');
});
