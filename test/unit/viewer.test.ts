import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { InstructRecord, RejectRecord } from '../../output/contracts/records.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { QualityReport } from '../../output/reports/qualityReport.js';
import { summaryPanel } from '../../output/reports/viewerSummary.js';
import type { ChatPairSharegptRow, ChatSharegptRow } from '../../output/formats/chatFormats.js';
import { VIEWER_CHUNK, ViewerWriter, type ViewerFile } from '../../output/viewer/viewerPage.js';
import { chunkArticles, viewerIndex } from '../harness/viewerData.js';

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

interface Shown {
  page: string;
  /** Every article of the data files, in record order. */
  articles: string[];
  files: ViewerFile[];
}

/** Writes a viewer of these records and reads back its page and the articles of its chunk files. */
function view(input: { simulated: boolean; instruct?: InstructRecord[]; chats?: ChatSharegptRow[]; chatPairs?: ChatPairSharegptRow[] }, imageSrc = (p: string) => p): Shown {
  const writer = new ViewerWriter({ pageName: 'viewer.html', buildId: 'b', imageSrc });
  const files: ViewerFile[] = [];
  for (const r of input.instruct ?? []) files.push(...[writer.addSft(r)].filter((f) => f !== undefined));
  for (const c of input.chats ?? []) files.push(...[writer.addChat(c)].filter((f) => f !== undefined));
  for (const p of input.chatPairs ?? []) files.push(...[writer.addChatPair(p)].filter((f) => f !== undefined));
  files.push(...writer.finish({ simulated: input.simulated }));
  const articles = files.filter((f) => f.path.startsWith('viewer-data/chunk-')).flatMap((f) => chunkArticles(f.body));
  return { page: files.find((f) => f.path === 'viewer.html')!.body, articles, files };
}

test('the page shows model text as text: nothing in a record becomes markup or an attribute', () => {
  const { page, articles } = view({ simulated: false, instruct: [record] }, (p) => `../${p}`);
  const html = articles.join('\n');
  assert.equal(articles.length, 1);
  assert.ok(!html.includes('<script>alert(1)</script>'));
  assert.ok(html.includes('&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;'));
  assert.ok(html.includes('Describe &lt;b&gt;this&lt;/b&gt;.'));
  assert.ok(html.includes('title="x&quot; onmouseover=&quot;alert(1)"'));
  assert.ok(html.includes('src="../images/ab/abc.jpg"'));
  assert.ok(!html.includes('<script'), 'no script in an article');
  assert.equal((page.match(/<script>/g) ?? []).length, 1, 'only the page script');
  assert.ok(!page.includes('alert(1)'), 'the page itself holds no record');
});

test('each sample carries its type:verdict tokens for the filters, and a sampled rule verdict shows the judge', () => {
  const { page, articles, files } = view({ simulated: true, instruct: [record] });
  assert.match(articles[0]!, /data-kind="sft" data-source="cc3m" data-verdicts="mention:failed"/);
  assert.match(articles[0]!, /<td class="fail" [^>]*>fail<small> · judge: pass<\/small><\/td>/);
  assert.match(page, /SIMULATED DATA/);
  // The index the filters run on: the record's kind, source and tokens, interned.
  const index = viewerIndex(files.find((f) => f.path === 'viewer-data/index.js')!.body);
  assert.deepEqual(
    index.records.map(([k, s, t]) => [index.kinds[k], index.sources[s], t.map((i) => index.tokens[i])]),
    [['sft', 'cc3m', ['mention:failed']]],
  );
  assert.match(page, /<option value="mention">mention<\/option>/);
});

test("a multiturn build's chats show turn by turn (instruction added, question, answer, verdicts, PIF) and its pairs the instruction left out, as text", () => {
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
    metadata: JSON.stringify({
      source: 'cc3m',
      source_id: '0002',
      turn: 2,
      forgotten_turn: 1,
      forgotten_instruction: { type: 'mention', value: 'Mention "harbor".' },
      chosen_verdicts: [],
      rejected_verdicts: [{ index: 0, type: 'mention', method: 'rule', passed: false, detail: 'no' }],
    }),
  };
  const { page, articles } = view({ simulated: true, chats: [chat], chatPairs: [pair] });
  const html = articles.join('\n');
  assert.match(page, /<p>1 chats, 1 turn-level pairs, 0 rejected samples and pairs\./);
  assert.match(html, /data-kind="chat" data-source="cc3m" data-verdicts="mention:failed mention:passed"/);
  assert.match(
    html,
    /<h3>Turn 1 <small>\(PIF 1\.00, 1 attempt\)<\/small><\/h3>\n<p class="instruction"><span class="badge">new instruction<\/span> Mention &quot;&lt;b&gt;harbor&lt;\/b&gt;&quot;\.<\/p>\n<p class="question">What is shown\?<\/p>/,
  );
  assert.match(html, /<h3>Turn 2 <small>\(PIF 0\.00, 3 attempts\)<\/small><\/h3>\n\n<p class="question">Which colours\?<\/p>\n<pre>&lt;\/pre&gt;Blue\.<\/pre>/);
  assert.match(html, /data-kind="chat-dpo"/);
  assert.match(html, /turn 1's instruction <code>mention<\/code>: Mention &quot;harbor&quot;\./);
  assert.ok(!html.includes('<script'));
});

test('records go to data files of VIEWER_CHUNK articles as they come, and the page loads them from the folder named after it', () => {
  const count = 2 * VIEWER_CHUNK + 7;
  const writer = new ViewerWriter({ pageName: 'my view.html', buildId: 'b', imageSrc: (p) => p });
  const early: Array<[number, string]> = [];
  for (let i = 0; i < count; i++) {
    const file = writer.addSft({ ...record, id: `r${i}` });
    if (file) early.push([i, file.path]);
  }
  // A chunk leaves the writer as soon as it is full: only one is ever held.
  assert.deepEqual(early, [
    [VIEWER_CHUNK - 1, 'my view-data/chunk-00000.js'],
    [2 * VIEWER_CHUNK - 1, 'my view-data/chunk-00001.js'],
  ]);
  const rest = writer.finish({ simulated: false, omitted: { instruct: 3, dpo: 0 } });
  assert.deepEqual(
    rest.map((f) => f.path),
    ['my view-data/chunk-00002.js', 'my view-data/index.js', 'my view.html'],
  );
  assert.match(rest[0]!.body, /^mmifViewer\.chunk\(2,\["<article [^"]*/);
  const page = rest[2]!.body;
  assert.match(page, /const DATA = "my%20view-data\/";/);
  assert.match(
    page,
    new RegExp(`<p>${count} SFT records, 0 DPO pairs, 0 rejected samples and pairs \\(3 SFT records, 0 pairs and 0 rejections beyond the display limit are not shown\\)\\.`),
  );
});

test('a rejected sample shows its reason, what its line says it passed, and its failed verdicts; a discarded pair its strategy and rule', () => {
  const writer = new ViewerWriter({ pageName: 'viewer.html', buildId: 'b', imageSrc: (p) => p });
  const files: ViewerFile[] = [];
  const push = (f: ViewerFile | undefined) => f && files.push(f);
  push(writer.addSft(record));
  push(
    writer.addRejected({
      id: 'cc3m-9',
      source: 'cc3m',
      source_id: '0009',
      kind: 'sample',
      stage: 'answer',
      reason: 'below-threshold',
      verdicts: [{ index: 0, type: 'mention', method: 'rule', passed: false, detail: 'no "hi"' }],
      instruction: 'Describe <i>it</i>.',
      constraints: [{ type: 'mention', value: 'Say <hi>', method: 'rule' }],
      staged_image_path: '_work/images/ab/ab.jpg',
    } as RejectRecord),
  );
  push(
    writer.addRejected({
      id: 'cc3m-1',
      source: 'cc3m',
      source_id: '0001',
      kind: 'pair',
      stage: 'rejected',
      reason: 'uninformative-pair',
      strategy: 'drop33',
      pair_rule_rejections: { 'uninformative-pair': 3 },
    }),
  );
  files.push(...writer.finish({ simulated: false }));
  const articles = files.filter((f) => f.path.startsWith('viewer-data/chunk-')).flatMap((f) => chunkArticles(f.body));
  const [, sample, pair] = articles;
  assert.match(sample!, /data-kind="rejected" data-source="cc3m" data-verdicts="mention:failed"/);
  assert.match(sample!, /rejected sample<\/span> <code>cc3m-9<\/code>/);
  assert.match(sample!, /reason:<\/strong> <code>below-threshold<\/code>/);
  assert.match(sample!, /<h2>Describe &lt;i&gt;it&lt;\/i&gt;\.<\/h2>/);
  assert.match(sample!, /<td>Say &lt;hi&gt;<\/td><td>rule<\/td><td class="fail"/);
  assert.match(sample!, /<img src="_work\/images\/ab\/ab.jpg"/);
  assert.match(pair!, /discarded pair · drop33/);
  assert.match(pair!, /no image kept/);
  assert.match(pair!, /refused by pair rule: uninformative-pair 3/);
  const index = viewerIndex(files.find((f) => f.path === 'viewer-data/index.js')!.body);
  assert.deepEqual(
    index.records.map(([k]) => index.kinds[k]),
    ['sft', 'rejected', 'rejected'],
  );
  const page = files.find((f) => f.path === 'viewer.html')!.body;
  assert.match(page, /<option value="rejected">rejected samples and pairs<\/option>/);
  assert.match(page, /1 SFT records, 0 DPO pairs, 2 rejected samples and pairs\./);
});

test('the summary panel shows counts, cost, records by source, pass rates by type and rejection reasons from the reports, and names a missing one', () => {
  const report = {
    counts: { planned: 10, instruct: 6, dpo: 4, rejectedSamples: 4, rejectedPairs: 2 },
    shards: { planned: 2, committed: 2, failed: 0 },
    cost: { usd: 0.125, forecast: false, perSftRecord: 0.125 / 6, cachedPromptShare: 0, reasoningTokens: 0, savedUsd: 0, providerCostRequests: 0, unpriced: {} },
  } as unknown as BuildReport;
  const quality = {
    composition: { bySource: { cc3m: { instruct: 6, dpo: 4, rejectedSamples: 4, rejectedPairs: 2 } } },
    passRates: { mention: { category: 'keyword', wildIfEval: 'Include/Avoid', firstAnswer: { passed: 5, total: 10 }, finalAnswer: { passed: 9, total: 10 } } },
    rejections: { byStage: { answer: 4, rejected: 2 }, byReason: { 'below-threshold': 4, '<uninformative-pair>': 2 } },
  } as unknown as QualityReport;
  const panel = summaryPanel({ report, quality });
  assert.match(panel, /<td>SFT records accepted<\/td><td>6\/10 \(60\.0%\)<\/td>/);
  assert.match(panel, /<td>DPO pairs kept<\/td><td>4\/6 \(66\.7%\)<\/td>/);
  assert.match(panel, /<li>cost \$0\.1250 \(\$0\.02083 per SFT record\)<\/li>/);
  assert.match(panel, /<td>cc3m<\/td><td>6<\/td><td>4<\/td><td>4<\/td><td>2<\/td>/);
  assert.match(panel, /<td>mention<\/td><td>keyword<\/td><td>5\/10 \(50\.0%\)<\/td><td>9\/10 \(90\.0%\)<\/td>/);
  assert.match(panel, /<td>below-threshold<\/td><td>4<\/td>.*<td>&lt;uninformative-pair&gt;<\/td><td>2<\/td>/);
  assert.doesNotMatch(panel, /Not in the dataset folder/);
  const partial = summaryPanel({ report });
  assert.match(partial, /Not in the dataset folder: quality\.json; its figures are not shown\./);
  assert.match(partial, /Counts/);
  assert.doesNotMatch(partial, /Pass rates/);
});
