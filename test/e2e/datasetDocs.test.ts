/**
 * What a user finds beside the data, from a real build (Temporal dev server, worker, simulator over
 * HTTP): the dataset card opened by Hugging Face `datasets` and `huggingface_hub` (tools venv), the
 * quality report checked against the records the build wrote, and `mmif view`'s page opened in
 * headless Chromium (its screenshot is kept in test-artifacts/viewer.png), written without reading
 * the resume state: a rejected sample's instruction, constraints and image come from its rejects line.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SAMPLES_DIR } from '../../cli/quickstartConfig.js';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { CARD_FEATURES } from '../../output/reports/datasetCard.js';
import { constraintType } from '../../domain/constraints/catalogue.js';
import { buildLayout } from '../../storage/buildLayout.js';
import type { QualityReport } from '../../output/reports/qualityReport.js';
import type { DpoRecord, InstructRecord, RejectRecord } from '../../output/contracts/records.js';
import { dpoRecordFromLine, instructRecordFromLine } from '../../output/formats/sharegpt.js';
import { wordCount } from '../../output/commit/qualityStats.js';
import { LocalStore } from '../../storage/localStore.js';
import { PRICE_TABLE } from '../../llm/pricing.js';
import { runReader } from '../harness/trainerReaders.js';
import { TOOLS_DIR } from '../../local/tools.js';
import { startStack, type Stack } from '../harness/stack.js';
import { HeadlessChromium } from '../harness/headlessChromium.js';
import { mmif } from '../harness/mmifCli.js';
import { chunkArticles, viewerIndex } from '../harness/viewerData.js';
import { ReadCounts } from '../harness/readCounts.js';
import { getJson } from '../../storage/objectStore.js';
import type { StageState } from '../../pipeline/run/stageState.js';
import { writeViewer } from '../../output/viewer/viewer.js';
import { pathToFileURL } from 'node:url';

const ARTIFACTS = path.join(process.cwd(), 'test-artifacts');

let stack: Stack;
let dir: string;
let root: string;
let report: BuildReport;
let quality: QualityReport;
const instruct: InstructRecord[] = [];
const pairs: DpoRecord[] = [];
const rejects: RejectRecord[] = [];

before(async () => {
  stack = await startStack({ simulator: { seed: 5, faults: { complianceRate: 0.7 } }, taskQueue: 'mmif-docs' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-docs-'));
  const buildId = 'docs';
  const store = new LocalStore(path.join(dir, 'out'));
  const input: BuildConfigInput = {
    buildId,
    seed: 11,
    output: store.root,
    sources: [{ type: 'cc3m', uri: SAMPLES_DIR, layout: 'files' }],
    maxSamples: 10,
    shardSize: 5,
    sliceSize: 5,
    dpo: { strategies: ['drop33', 'drop100', 'no_image'] },
    // Every rule-checked constraint is also judged, so the agreement table has figures to check.
    verification: { judgeAgreementSample: 1 },
    models: { default: { model: 'mmif-sim-vlm' }, rejected: { model: 'mmif-sim-vlm-mini' } },
  };
  report = await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: buildId, args: [input] });
  root = path.join(store.root, buildId);
  const layout = buildLayout(buildId);
  quality = JSON.parse(await readFile(path.join(store.root, layout.quality), 'utf8')) as QualityReport;
  const lines = async (key: string) => (await readFile(path.join(store.root, key), 'utf8')).split('\n').filter(Boolean);
  for (let shard = 0; shard < report.shards.planned; shard++) {
    instruct.push(...(await lines(layout.instructJsonl(shard))).map(instructRecordFromLine));
    pairs.push(...(await lines(layout.dpoJsonl(shard))).map(dpoRecordFromLine));
    rejects.push(...(await lines(layout.rejects(shard))).map((l) => JSON.parse(l) as RejectRecord));
  }
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('load_dataset(<dataset root>) finds the instruct and dpo configs from the card, and huggingface_hub reads its metadata', async () => {
  assert.ok(report.counts.instruct > 0 && report.counts.dpo > 0, `the build kept records: ${JSON.stringify(report.counts)}`);
  const seen = await runReader<{
    config_names: string[];
    instruct: { rows: number; columns: string[]; image_feature: string; image_size: number[]; judge_audits: Array<{ passed: boolean | null; judgeModel: string }> };
    dpo: { rows: number; columns: string[]; image_feature: string };
    default: { rows: number; columns: string[] };
    card_data: Record<string, unknown>;
  }>(`${TOOLS_DIR}venv/bin/python`, 'card_check.py', [root], { HF_CACHE_DIR: path.join(dir, 'hf-cache') });
  assert.deepEqual([...seen.config_names].sort(), ['dpo', 'instruct'], 'both configs discovered without arguments');
  assert.equal(seen.instruct.rows, report.counts.instruct);
  assert.equal(seen.dpo.rows, report.counts.dpo);
  assert.equal(seen.instruct.image_feature, 'Image');
  assert.equal(seen.dpo.image_feature, 'Image');
  assert.ok(seen.instruct.image_size[0]! > 0);
  assert.equal(seen.default.rows, report.counts.instruct, 'the default config is instruct');
  const audits = instruct.flatMap((r) => r.verdicts.flatMap((v) => (v.judgeAudit ? [v.judgeAudit] : [])));
  assert.ok(audits.length > 0);
  assert.deepEqual(seen.instruct.judge_audits, audits, 'Parquet keeps the judge-vs-rule scores the JSON records have');
  for (const [config, features] of Object.entries(CARD_FEATURES)) {
    const columns = seen[config as 'instruct' | 'dpo'].columns;
    for (const [column] of features) assert.ok(columns.includes(column), `the card describes ${config}.${column}, which the data has`);
  }
  // And the other way: every column of the data is named in the card, in its table or the line under it.
  const cardText = await readFile(path.join(root, 'README.md'), 'utf8');
  for (const config of ['instruct', 'dpo'] as const) {
    const section = cardText.slice(cardText.indexOf(`**\`${config}\`**`), cardText.indexOf(config === 'instruct' ? '**`dpo`**' : '## Sources'));
    for (const column of seen[config].columns) assert.ok(section.includes(`\`${column}\``), `the card's ${config} section names its column ${column}`);
  }
  const card = seen.card_data;
  assert.equal(card.license, 'other');
  assert.deepEqual(card.task_categories, ['image-text-to-text', 'visual-question-answering']);
  assert.deepEqual(card.size_categories, ['n<1K']);
  assert.ok((card.tags as string[]).includes('simulated'));
});

test('the card states at the top that the data is simulated, and carries the build facts', async () => {
  const text = await readFile(path.join(root, 'README.md'), 'utf8');
  const bodyStart = text.indexOf('\n---\n', 4) + 5;
  const firstLines = text.slice(bodyStart).split('\n').filter(Boolean).slice(0, 3).join('\n');
  assert.match(firstLines, /SIMULATED DATA — NOT FOR TRAINING/);
  assert.match(text, new RegExp(`Config fingerprint: \`${report.configFingerprint}\``));
  assert.match(text, /- Seed: 11\n/);
  assert.match(text, /\| answer \| `mmif-sim-vlm` \|/);
  assert.match(text, /\| rejected \| `mmif-sim-vlm-mini` \|/);
  assert.match(text, /\| cc3m \| \d+ \| \d+ \| \d+ \| \d+ \| CC3M: images owned by their original publishers/);
  assert.match(text, /### Judge vs rule/);
});

test('cost: the simulated models are unpriced, named with their tokens in the report and the card, never $0; the price table is named', async () => {
  const text = await readFile(path.join(root, 'README.md'), 'utf8');
  assert.deepEqual(report.prices, { table: PRICE_TABLE.package, version: PRICE_TABLE.version, published: PRICE_TABLE.published, configured: [] });
  assert.deepEqual(Object.keys(report.unpriced ?? {}).sort(), ['mmif-sim-vlm', 'mmif-sim-vlm-mini']);
  const pipelineStages = Object.entries(report.usage).filter(([stage]) => stage !== 'preflight');
  const unpricedRequests = Object.values(report.unpriced!).reduce((n, u) => n + u.requests, 0);
  assert.equal(
    unpricedRequests,
    pipelineStages.reduce((n, [, u]) => n + u.unpricedRequests, 0),
  );
  assert.equal(report.cost.usd, 0);
  assert.equal(report.cost.forecast, true);
  for (const [model, u] of Object.entries(report.unpriced!)) {
    assert.ok(
      text.includes(
        `- UNPRICED model ${model}: ${u.requests} requests, ${u.promptTokens} prompt + ${u.completionTokens} completion tokens not in the cost (set llm.prices["${model}"])`,
      ),
      model,
    );
  }
  assert.match(
    text,
    /^- all \d+ requests would cost \$0\.0000 \(all runs, committed or not\), \$0\.0000 of it in committed shards; at the named models' prices \(simulated build: nothing was spent\)/m,
  );
  assert.match(text, new RegExp(`^- priced by @pydantic/genai-prices ${PRICE_TABLE.version.replaceAll('.', '\\.')} \\(${PRICE_TABLE.published}\\)$`, 'm'));
});

test('quality.json: composition and lengths match the written records', () => {
  assert.equal(quality.simulated, true);
  assert.equal(quality.coverage.shardsWithStats, report.shards.committed);
  assert.deepEqual(quality.composition.bySource.cc3m, {
    instruct: report.counts.instruct,
    dpo: report.counts.dpo,
    rejectedSamples: report.counts.rejectedSamples,
    rejectedPairs: report.counts.rejectedPairs,
  });
  const types: Record<string, number> = {};
  for (const r of instruct) for (const c of r.constraints) types[c.type] = (types[c.type] ?? 0) + 1;
  assert.deepEqual(quality.composition.constraintTypes, types);
  const total = (tally: Record<string, number>) => Object.values(tally).reduce((a, b) => a + b, 0);
  assert.equal(total(quality.composition.categories), total(types));
  assert.equal(total(quality.composition.wildIfEvalClasses), total(types));
  const words = instruct.map((r) => wordCount(r.answer));
  assert.equal(quality.lengths.answerWords.summary!.count, instruct.length);
  assert.equal(quality.lengths.answerWords.summary!.max, Math.max(...words));
  assert.equal(total(quality.lengths.answerWords.histogram), instruct.length);
  assert.equal(quality.lengths.rejectedWords.summary!.max, Math.max(...pairs.map((p) => wordCount(p.rejected))));
  assert.deepEqual(quality.rejections.byStage, report.rejectsByStage);
  assert.equal(total(quality.rejections.byReason), report.counts.rejectedSamples + report.counts.rejectedPairs);
});

test('quality.json: final-answer pass rates cover the accepted verdicts; the judge-vs-rule sample covers every rule verdict', () => {
  // Final answers of accepted samples are a subset of all final answers (rejected ones add theirs).
  for (const r of instruct) for (const v of r.verdicts) assert.ok(quality.passRates[v.type], `pass rate for ${v.type}`);
  const acceptedRule = instruct.flatMap((r) => r.verdicts.filter((v) => v.method === 'rule'));
  assert.ok(acceptedRule.length > 0);
  for (const v of acceptedRule) assert.ok(v.judgeAudit, `with judgeAgreementSample 1 every rule verdict is audited (${v.type})`);
  const auditedAccepted = acceptedRule.length;
  assert.ok(quality.judgeAgreement.total.audited >= auditedAccepted, 'chosen, regenerated and rejected answers are all counted');
  const t = quality.judgeAgreement.total;
  assert.equal(t.bothPassed + t.bothFailed + t.judgePassedRuleFailed + t.judgeFailedRulePassed + t.unscored, t.audited);
  for (const [type, a] of Object.entries(quality.judgeAgreement.byType)) {
    assert.ok(['keep-judge', 'second-judge', 'require-rule', 'too-few-samples'].includes(a.advice), type);
    if (a.judgePassesRuleFailsRate !== null) assert.equal(a.judgePassesRuleFailsRate, a.judgePassedRuleFailed / (a.judgePassedRuleFailed + a.bothFailed));
  }
  // Every answer attempt is verified on all its constraints: first and final answers count the same verdicts.
  for (const [type, p] of Object.entries(quality.passRates)) assert.equal(p.firstAnswer.total, p.finalAnswer.total, type);
  const kept = Object.values(quality.dpo.strategyMix).reduce((n, s) => n + s.kept, 0);
  assert.equal(kept, report.counts.dpo);
  for (const s of Object.keys(quality.dpo.atStakeFailureRates)) assert.ok(['drop33', 'drop100', 'no_image'].includes(s));
});

test('every rule verdict of the records carries vacuous; pass rates credit no vacuous pass (verification.vacuous "fail"); quality.json and the card count them', async () => {
  const rule = [...instruct.flatMap((r) => r.verdicts), ...pairs.flatMap((p) => p.rejected_verdicts)].filter((v) => v.method === 'rule');
  assert.ok(rule.length > 0);
  for (const v of rule) assert.equal(typeof v.vacuous, 'boolean', `rule verdict ${v.type} carries vacuous`);
  for (const v of instruct.flatMap((r) => r.verdicts).filter((v) => v.method !== 'rule')) assert.equal(v.vacuous, undefined, 'judge verdicts carry no vacuous flag');
  for (const r of instruct) {
    const credited = r.verdicts.filter((v) => v.passed && !v.vacuous).length / r.verdicts.length;
    assert.equal(r.pass_rate, credited, `${r.id}: pass_rate credits no vacuous pass`);
    assert.ok(r.pass_rate >= 0.8, `${r.id} passed the post-filter without vacuous passes`);
  }
  const acceptedRule = instruct.flatMap((r) => r.verdicts.filter((v) => v.method === 'rule'));
  assert.ok(quality.vacuous.total.rule >= acceptedRule.length, 'final answers of accepted and rejected samples are counted');
  assert.ok(quality.vacuous.total.vacuous >= acceptedRule.filter((v) => v.vacuous).length);
  assert.equal(quality.settings.vacuous, 'fail');
  const text = await readFile(path.join(root, 'README.md'), 'utf8');
  assert.match(text, /### Vacuous rule verdicts \(final answers\)/);
  assert.match(text, new RegExp(`\\| \\*\\*all\\*\\* \\| ${quality.vacuous.total.rule} \\| ${quality.vacuous.total.vacuous} \\|`));
  assert.match(text, /- Vacuous rule passes: not credited \(fail closed\)/);
});

test('images/ holds the images of the written records, and only those', async () => {
  const published = (await readdir(path.join(root, 'images'), { recursive: true })).filter((f) => String(f).endsWith('.jpg')).map((f) => path.basename(String(f), '.jpg'));
  assert.deepEqual(new Set(published), new Set([...instruct, ...pairs].map((r) => r.image_sha256)));
});

test('a constraint of a type Table 5 checks by rule that ends up judged records why', () => {
  const judgedRuleTypes = instruct.flatMap((r) => r.constraints).filter((c) => c.method !== 'rule' && constraintType(c.type)?.evaluation === 'rule');
  for (const c of judgedRuleTypes) assert.match(c.selectionNote ?? '', /^(judged: |model choice refused: )/, `${c.type}: ${c.value}`);
});

test('mmif view writes a page whose images render and whose filters work in headless Chromium', async () => {
  const page = path.join(root, 'viewer.html');
  // Every build writes the page and its data itself; `mmif view` rewrites the same bytes.
  const dataFiles = async () => {
    const folder = path.join(root, 'viewer-data');
    const names = (await readdir(folder)).sort();
    return new Map(await Promise.all(names.map(async (n) => [n, await readFile(path.join(folder, n), 'utf8')] as const)));
  };
  const fromBuild = { page: await readFile(page, 'utf8'), data: await dataFiles() };
  assert.deepEqual([...fromBuild.data.keys()], ['chunk-00000.js', 'index.js'], 'a build this small fits one data file');
  const written = await mmif(stack, 'view', root);
  assert.equal(written.code, 0, written.stderr);
  assert.equal(await readFile(page, 'utf8'), fromBuild.page);
  assert.deepEqual(await dataFiles(), fromBuild.data);
  assert.match(written.stdout, new RegExp(`wrote ${page} \\(${instruct.length} SFT records, ${pairs.length} DPO pairs, ${rejects.length} rejected samples and pairs\\)`));
  const total = instruct.length + pairs.length;
  assert.ok(total + rejects.length <= 50, `one page of the viewer shows this build (${total} records, ${rejects.length} rejections)`);
  assert.ok(rejects.some((r) => r.kind === 'sample') && rejects.some((r) => r.kind === 'pair'), 'the build rejected a sample and discarded a pair');
  const browser = await HeadlessChromium.launch();
  try {
    const tab = await browser.open(pathToFileURL(page).href);
    const ready = () => tab.waitFor(`document.querySelector('main').dataset.state === 'ready'`);
    await ready();
    const count = (selector: string) => tab.evaluate<number>(`document.querySelectorAll(${JSON.stringify(selector)}).length`);
    const shown = () => count('main article.sample');
    const select = async (id: string, value: string) => {
      await tab.select(id, value);
      await ready();
    };
    assert.equal(await count('article.sft'), instruct.length);
    assert.equal(await count('article.dpo'), pairs.length);
    assert.equal(await count('article.rejected'), rejects.length);
    // Every image, lazy ones too, decodes to real pixels from the page's relative path.
    const widths = await tab.evaluate<number[]>(
      `Promise.all([...document.images].map(async (img) => { img.loading = 'eager'; await img.decode().catch(() => {}); return img.naturalWidth; }))`,
    );
    const keptImages = await count('article.rejected img');
    assert.equal(widths.length, total + keptImages);
    assert.ok(
      widths.every((w) => w > 0),
      `every image renders: ${widths.join(', ')}`,
    );
    // A pair's dropped constraints are marked, beside both answers' verdicts.
    const pair = pairs.find((p) => p.strategy !== 'no_image')!;
    const marked = await tab.evaluate<number>(
      `[...document.querySelectorAll('article.dpo')].find((a) => a.textContent.includes(${JSON.stringify(pair.id)})).querySelectorAll('tr.dropped').length`,
    );
    assert.equal(marked, pair.dropped_constraints.length);
    assert.equal(await count('.pair .chosen pre'), pairs.length);

    await tab.screenshot(await artifact('viewer.png'));

    // The summary panel: the reports' figures, as quality.json and build-report.json hold them.
    const rows = (id: string) => tab.evaluate<string[][]>(`[...document.querySelectorAll('#${id} tbody tr')].map((tr) => [...tr.cells].map((c) => c.textContent))`);
    assert.equal(await tab.evaluate<boolean>(`document.getElementById('summary').open`), true);
    assert.deepEqual(
      (await rows('pass-rates')).map(([type, , , final]) => [type, final]),
      Object.entries(quality.passRates)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([type, r]) => [type, `${r.finalAnswer.passed}/${r.finalAnswer.total} (${((100 * r.finalAnswer.passed) / r.finalAnswer.total).toFixed(1)}%)`]),
    );
    assert.deepEqual(Object.fromEntries((await rows('reasons')).map(([reason, n]) => [reason, Number(n)])), quality.rejections.byReason);
    assert.match(
      await tab.evaluate<string>(`document.getElementById('summary').textContent`),
      /would cost \$\d+\.\d{4} \(all runs, committed or not\).* at the named models' prices/,
    );
    assert.match(await tab.evaluate<string>(`document.getElementById('summary').textContent`), new RegExp(`SFT records accepted${instruct.length}/${report.counts.planned}`));

    // Filters: by kind, by source, by constraint type and verdict, as the records say.
    assert.equal(await shown(), total + rejects.length);
    await select('f-kind', 'dpo');
    assert.equal(await shown(), pairs.length);
    // The rejected kind: every rejected sample and discarded pair, each with its reason.
    await select('f-kind', 'rejected');
    assert.deepEqual((await tab.evaluate<string[]>(`[...document.querySelectorAll('main article')].map((a) => a.dataset.reason)`)).sort(), rejects.map((r) => r.reason).sort());
    const sampleReject = rejects.find((r) => r.kind === 'sample')!;
    assert.match(
      await tab.evaluate<string>(`document.getElementById(${JSON.stringify(`rejected-sample-${sampleReject.id}`)}).textContent`),
      new RegExp(`rejected sample ${sampleReject.id}.*reason: ${sampleReject.reason.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 's'),
    );
    // What a rejected sample or discarded pair passed, from its rejects line: instruction, constraints, staged image.
    const passedAll = rejects.filter((r) => r.instruction && r.constraints?.length && r.staged_image_path);
    assert.ok(passedAll.length > 0, 'a rejection came after the constraints stage');
    for (const r of passedAll) {
      const article = `document.getElementById(${JSON.stringify(`rejected-${r.kind}-${r.id}`)})`;
      assert.equal(await tab.evaluate<string>(`${article}.querySelector('h2').textContent`), r.instruction);
      assert.deepEqual(
        await tab.evaluate<string[]>(`[...${article}.querySelectorAll('table.constraints tbody tr')].map((tr) => tr.cells[2].textContent)`),
        r.constraints!.map((c) => c.value),
      );
      assert.equal(await tab.evaluate<string>(`${article}.querySelector('img').getAttribute('src')`), r.staged_image_path);
    }
    await tab.screenshot(await artifact('viewer-rejected.png'));
    await select('f-kind', '');
    await select('f-source', 'cc3m');
    assert.equal(await shown(), total + rejects.length);
    const failed = instruct.flatMap((r) => r.verdicts.filter((v) => !v.passed).map((v) => v.type));
    assert.ok(failed.length > 0, 'the build has an accepted answer with a failed constraint');
    const type = failed[0]!;
    const expected = (records: ReadonlyArray<{ verdicts: Array<{ type: string; passed: boolean }> }>) =>
      records.filter((r) => r.verdicts.some((v) => v.type === type && !v.passed)).length;
    const rejectedVerdicts = rejects.map((r) => ({ verdicts: r.verdicts ?? [] }));
    await select('f-type', type);
    await select('f-verdict', 'failed');
    const failing = expected(instruct) + expected(pairs) + expected(rejectedVerdicts);
    assert.equal(await shown(), failing);
    assert.match(await tab.evaluate<string>(`document.getElementById('shown').textContent`), new RegExp(`^${failing} of ${total + rejects.length} shown\\.$`));
    await select('f-verdict', 'passed');
    const passedToo = [...instruct, ...pairs, ...rejectedVerdicts].filter((r) => r.verdicts.some((v) => v.type === type && v.passed)).length;
    assert.equal(await shown(), passedToo);
    await select('f-type', '');
    await select('f-verdict', '');
    await select('f-kind', 'dpo');
    await tab.screenshot(await artifact('viewer-pairs.png'));
  } finally {
    await browser.close();
  }
});

test("the viewer reads no resume state (_work/): the data files it writes from the committed shards alone are the build's", async () => {
  const counted = new ReadCounts(path.join(dir, 'out'));
  const layout = buildLayout('docs');
  const written = new Map<string, string>();
  await writeViewer(counted, layout, { pageName: 'viewer.html', imageSrc: (p) => p, put: async (f) => written.set(f.path, f.body) });
  assert.deepEqual(
    [...counted.reads.keys()].filter((key) => key.startsWith(`${layout.root}/_work/`)),
    [],
  );
  assert.equal(counted.readsOf(layout.rejects(0)), 1, 'the rejects were read, once');
  assert.equal(written.get('viewer-data/chunk-00000.js'), await readFile(path.join(root, 'viewer-data/chunk-00000.js'), 'utf8'));
  // What a line says its sample passed is what the resume state holds of it.
  const state = async <S extends 'image' | 'instruction' | 'constraints'>(id: string, stage: S) => {
    const stored = await getJson<StageState<S>>(counted, layout.stageState(id, stage));
    return stored?.status === 'ok' ? stored.result : undefined;
  };
  for (const r of rejects) {
    const [image, instruction, constraints] = await Promise.all([state(r.id, 'image'), state(r.id, 'instruction'), state(r.id, 'constraints')]);
    assert.deepEqual(
      [r.staged_image_path, r.instruction, r.constraints],
      [image && layout.inDataset(layout.stagedImage(image.sha256)), instruction?.instruction, constraints?.constraints.map(({ type, value, method }) => ({ type, value, method }))],
      r.id,
    );
  }
});

test('mmif view --serve serves the page, its data and the images, and nothing else of the store', async () => {
  const { spawn } = await import('node:child_process');
  const tsx = path.join(process.cwd(), 'node_modules/.bin/tsx');
  const child = spawn(tsx, ['cli/mmif.ts', 'view', root, '--serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /serving (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`mmif view --serve exited (${code})`)));
    });
    const html = await (await fetch(url)).text();
    assert.match(html, /const DATA = "viewer-data\/";/);
    const index = await fetch(new URL('viewer-data/index.js', url));
    assert.equal(index.status, 200);
    assert.equal(viewerIndex(await index.text()).records.length, instruct.length + pairs.length + rejects.length);
    const articles = chunkArticles(await (await fetch(new URL('viewer-data/chunk-00000.js', url))).text());
    const src = /<img src="([^"]+)"/.exec(articles[0]!)![1]!;
    const image = await fetch(new URL(src, url));
    assert.equal(image.status, 200);
    assert.equal(image.headers.get('content-type'), 'image/jpeg');
    assert.deepEqual([...new Uint8Array(await image.arrayBuffer()).slice(0, 2)], [0xff, 0xd8]);
    // A rejected sample's image, staged under _work/images/, is served too.
    const staged = articles.map((a) => /<img src="(\/_work\/images\/[^"]+)"/.exec(a)?.[1]).find((x) => x !== undefined);
    assert.ok(staged, 'a rejected sample shows its staged image');
    assert.equal((await fetch(new URL(staged, url))).status, 200);
    for (const other of ['/build-report.json', '/_work/config.json', '/images/../build-report.json', '/viewer-data/../build-report.json'])
      assert.equal((await fetch(new URL(other, url))).status, 404, other);
  } finally {
    child.kill('SIGTERM');
  }
});

async function artifact(name: string): Promise<string> {
  await mkdir(ARTIFACTS, { recursive: true });
  return path.join(ARTIFACTS, name);
}
