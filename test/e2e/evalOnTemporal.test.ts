/**
 * Evaluation on held-out images, end to end on a Temporal dev server and the HTTP simulator. A
 * build with `holdout` reserves the eval split by image: no image of the split is in any training
 * file (SFT or DPO), and the split is written where `mmif eval --data` reads it. `mmif eval` then
 * runs on Temporal (the evaluateModel workflow): single-turn with rule verifiers and judges (the
 * report re-checked against an independent re-scoring of the saved responses), multi-turn on chats
 * (PIF, PIF-N-K, the append ablation), and a worker SIGKILLed mid-eval: the run resumes, comes out
 * identical to an uninterrupted one, and pays no call twice (counted at the simulator).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SAMPLES_DIR } from '../../cli/quickstartConfig.js';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { ShardManifest } from '../../output/contracts/manifest.js';
import type { MmifevalLine } from '../../domain/mmifevalLine.js';
import { dpoRecordFromLine, instructRecordFromLine } from '../../output/formats/sharegpt.js';
import { buildLayout, imagePathInDataset } from '../../storage/buildLayout.js';
import { LocalStore } from '../../storage/localStore.js';
import { getJson } from '../../storage/objectStore.js';
import { startStack, type Stack } from '../harness/stack.js';
import { exportMmifeval, exportTrl } from '../../output/formats/export.js';
import { eventually, trainingFileSampleIds } from '../harness/datasetChecks.js';
import { startWorkerProcess } from '../harness/mmifCli.js';
import { evalCommand } from '../../cli/commands/eval.js';
import { CliError, EXIT } from '../../cli/exitCodes.js';
import { statusCommand } from '../../cli/commands/status.js';
import { evalWorkflowId, type EvalConfigInput } from '../../config/evalConfig.js';
import type { EvalReport } from '../../output/reports/evalReport.js';
import type { EvalSummary } from '../../output/reports/evalOutputs.js';
import type { MultiturnReport } from '../../output/reports/multiturnEvalReport.js';
import { stopProcess } from '../../local/temporalDevServer.js';
import { runVerifierCall } from '../../verification/functions.js';
import type { Verdict } from '../../domain/verdict.js';

let stack: Stack;
let dir: string;
let store: LocalStore;
const BUILD_ID = 'heldout';

const workers: ChildProcess[] = [];

before(async () => {
  stack = await startStack({ simulator: { seed: 3 }, taskQueue: 'mmif-eval' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-eval-temporal-'));
  store = new LocalStore(dir);
  // mmif eval (the CLI) reaches the stack's server and worker through the environment, as users do.
  process.env.TEMPORAL_ADDRESS = stack.server.address;
  process.env.MMIF_TASK_QUEUE = stack.taskQueue;
});

after(async () => {
  for (const w of workers) await stopProcess(w);
  await stack?.stop();
  if (dir && !process.env.KEEP) await rm(dir, { recursive: true, force: true });
});

const buildConfig = (): BuildConfigInput => ({
  buildId: BUILD_ID,
  seed: 7,
  output: dir,
  sources: [{ type: 'cc3m', uri: SAMPLES_DIR, layout: 'files' }],
  maxSamples: 10,
  shardSize: 5,
  sliceSize: 5,
  holdout: { fraction: 0.3 },
  models: { default: { model: 'mmif-sim-vlm' } },
});

const lines = (body: Buffer | undefined): string[] => (body ?? Buffer.alloc(0)).toString().split('\n').filter(Boolean);

test('a build with holdout reserves an eval split by image: no held-out image is in any training file', async () => {
  const report = (await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: BUILD_ID, args: [buildConfig()] })) as BuildReport;
  const layout = buildLayout(BUILD_ID);
  const training = new Set<string>();
  const held = new Set<string>();
  let heldRecords = 0;
  for (let shard = 0; shard < report.shards.planned; shard++) {
    const manifest = (await getJson<ShardManifest>(store, layout.manifest(shard)))!;
    const sft = lines(await store.get(layout.instructJsonl(shard))).map(instructRecordFromLine);
    const dpo = lines(await store.get(layout.dpoJsonl(shard))).map(dpoRecordFromLine);
    const heldOut = lines(await store.get(layout.heldOutJsonl(shard))).map(instructRecordFromLine);
    for (const r of [...sft, ...dpo]) training.add(r.image_sha256);
    for (const r of heldOut) held.add(r.image_sha256);
    heldRecords += heldOut.length;
    assert.deepEqual(manifest.counts.instruct, sft.length, 'manifest counts are the training records');
    assert.equal(manifest.heldOut?.instruct, heldOut.length);
    assert.ok(manifest.files.some((f) => f.path === `heldout/shard-0000${shard}.jsonl` && f.rows === heldOut.length));
    const parquetRows = manifest.files.find((f) => f.path.startsWith('instruct/parquet/'))!.rows;
    assert.equal(parquetRows, sft.length, 'the Parquet shard holds the same training records');
  }
  assert.ok(held.size > 0 && training.size > 0, `both sides are non-empty: ${held.size} held-out, ${training.size} training images`);
  assert.deepEqual(
    [...held].filter((sha) => training.has(sha)),
    [],
    'no image is on both sides',
  );
  assert.deepEqual(report.heldOut, { fraction: 0.3, seed: 7, instruct: heldRecords, dpo: report.heldOut!.dpo });
  assert.ok(report.heldOut!.dpo > 0, 'pairs of held-out images were left out of the training data');

  // The split mmif eval reads, written by the build itself.
  const bench = lines(await store.get(layout.mmifevalBench)).map((l) => JSON.parse(l) as MmifevalLine);
  const main = bench.filter((l) => l.infer_type === 'main');
  assert.equal(main.length, heldRecords);
  assert.deepEqual(new Set(main.map((l) => l.image)), new Set([...held].map(imagePathInDataset)));
  const ids = (await getJson<{ by: string; reservedByBuild: boolean; images: string[]; ids: string[] }>(store, layout.mmifevalHoldoutIds))!;
  assert.equal(ids.by, 'image');
  assert.equal(ids.reservedByBuild, true);
  assert.deepEqual(ids.images, [...held].sort());

  // After every export, no held-out record is in any training file of any format (the card's default
  // Parquet config, sharegpt, TRL); an export-time split is refused, so none can be drawn over them.
  await exportTrl(store, layout);
  await exportMmifeval(store, layout);
  await assert.rejects(exportMmifeval(store, layout, { fraction: 0.5 }), { name: 'ReservedSplitError' });
  await assertNoHeldOutInTraining(ROOT(), new Set(ids.ids), ['instruct/parquet', 'instruct/sharegpt', 'dpo/parquet', 'dpo/sharegpt', 'trl/sft', 'trl/dpo']);
});

/** Every training file of every format is read back (JSONL and Parquet rows): none holds a held-out sample. */
async function assertNoHeldOutInTraining(root: string, heldOut: ReadonlySet<string>, expectedFolders: readonly string[]): Promise<void> {
  const files = await trainingFileSampleIds(root);
  for (const folder of expectedFolders)
    assert.ok(
      [...files.keys()].some((f) => f.startsWith(`${folder}/`)),
      `the check read ${folder}/`,
    );
  let rows = 0;
  for (const [file, ids] of files) {
    rows += ids.size;
    assert.deepEqual(
      [...ids].filter((id) => heldOut.has(id)),
      [],
      `${file} holds no held-out sample`,
    );
  }
  assert.ok(rows > 0 && heldOut.size > 0);
}

const ROOT = () => path.join(dir, BUILD_ID);
const splitLines = async () => lines(await store.get(buildLayout(BUILD_ID).mmifevalBench)).map((l) => JSON.parse(l) as MmifevalLine);
const readJson = async <T>(file: string) => JSON.parse(await readFile(file, 'utf8')) as T;
/** The report of the one eval in `out` whose id starts with `prefix` (reports are named by eval id), without extension. */
async function reportBase(out: string, prefix: string): Promise<string> {
  const names = (await readdir(out)).filter((f) => f.startsWith(`${prefix}-`) && f.endsWith('.json'));
  assert.equal(names.length, 1, `one report ${prefix}-*.json in ${out}: ${names.join(', ')}`);
  return path.join(out, names[0]!.slice(0, -'.json'.length));
}
const savedResponses = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { id: string; responses: string[]; verdicts: Array<Array<{ key: string; method: string; passed: boolean | null }>> });

test("mmif eval runs on Temporal over the build's held-out split, scores rules and judges, and the report matches a re-scoring of its saved responses", async () => {
  const split = await splitLines();
  const main = split.filter((l) => l.infer_type === 'main');
  const requestsBefore = stack.simulator.stats().requests;
  // The judge defaults to the build's own (models.default here): the simulator's model.
  assert.equal(await evalCommand(['--data', ROOT(), '--model', 'sim-model', '--samples', '2', '--prompt', 'numbered']), 0);
  const dir_ = path.join(ROOT(), 'MM-IFEval', 'eval');
  const base = await reportBase(dir_, 'sim-model.numbered');
  const report = await readJson<EvalReport>(`${base}.json`);
  assert.match(path.basename(base), /^sim-model\.numbered-[0-9a-f]{10}$/, 'the eval id: model, prompt form, hash of the settings');
  assert.equal(report.evalId, path.basename(base));
  assert.equal(report.prompt, 'numbered');
  assert.equal(report.config.prompt, 'numbered');
  assert.equal(report.config.responses, 2);
  assert.ok(!path.isAbsolute(String(report.config.data)), `the report names its data relative to itself: ${String(report.config.data)}`);
  assert.equal(path.resolve(path.dirname(base), String(report.config.data)), path.resolve(ROOT()));
  assert.equal(report.simulated, true);
  assert.equal(report.judgeModel, 'mmif-sim-vlm');
  assert.equal(report.samples, main.length);
  assert.equal(report.responsesPerSample, 2);
  assert.deepEqual(report.rejected, []);
  assert.equal(report.judgeConstraintsNotScored, 0);
  const saved = await savedResponses(`${base}.responses.jsonl`);
  assert.deepEqual(
    saved.map((s) => s.id),
    main.map((l) => l.id),
  );
  assert.ok(saved.every((s) => s.responses.length === 2 && s.responses.every((r) => r.length > 0)));
  assert.notEqual(saved[0]!.responses[0], saved[0]!.responses[1], 'the two samples are different draws');

  // Re-score the rule constraints independently; judged ones are counted per method.
  const counts = { rule_based: [0, 0], direct_gpt: [0, 0], cmp_gpt: [0, 0] } as Record<string, [number, number]>;
  let responses = 0,
    allFollowed = 0;
  for (const { id, responses: rs, verdicts } of saved) {
    const line = main.find((l) => l.id === id)!;
    for (const [i, r] of rs.entries()) {
      responses++;
      let all = true;
      for (const [k, c] of line.constraints.entries()) {
        const verdict = verdicts[i]![k]!;
        assert.equal(verdict.key, c.key);
        assert.equal(verdict.method, c.judge.method);
        const passed =
          c.judge.method === 'rule_based'
            ? c.judge.verify_funcs!.every((call) => {
                const o = runVerifierCall(r, call);
                return 'passed' in o && o.passed;
              })
            : verdict.passed!;
        if (c.judge.method === 'rule_based') assert.equal(verdict.passed, passed, `${id} ${c.key}: the saved rule verdict is the verifier's`);
        counts[c.judge.method]![1]++;
        if (passed) counts[c.judge.method]![0]++;
        else all = false;
      }
      if (all) allFollowed++;
    }
  }
  assert.ok(counts.rule_based![1] > 0 && counts.direct_gpt![1] + counts.cmp_gpt![1] > 0, `the split has rule and judged constraints: ${JSON.stringify(counts)}`);
  for (const [method, [followed, scored]] of Object.entries(counts)) {
    if (scored > 0) assert.deepEqual([report.byMethod[method]!.followed, report.byMethod[method]!.scored], [followed, scored], method);
  }
  const total = Object.values(counts).reduce((a, [f, s]) => [a[0]! + f, a[1]! + s], [0, 0]);
  assert.deepEqual([report.constraintLevel.followed, report.constraintLevel.scored], total, 'the totals include judged constraints');
  assert.deepEqual([report.instructionLevel.followed, report.instructionLevel.scored], [allFollowed, responses]);
  // Judge calls were made: one direct-judge call per response with direct_gpt constraints, and for
  // each cmp_gpt constraint the model's answer without it plus a compare-judge call.
  assert.ok((report.usage.judge?.requests ?? 0) > 0);
  const markdown = await readFile(`${base}.md`, 'utf8');
  assert.match(markdown, /SIMULATED/);
  assert.match(markdown, new RegExp(`Eval \`${report.evalId}\`: the numbered prompt form`));
  assert.match(markdown, /\| Judge method \|/);
  assert.match(markdown, new RegExp(`Constraint-level accuracy: .*\\(${total[0]}/${total[1]}\\)`));

  // The same command again: the same workflow id, every item done, not one request.
  const requestsAfter = stack.simulator.stats().requests;
  assert.ok(requestsAfter > requestsBefore);
  assert.equal(await evalCommand(['--data', ROOT(), '--model', 'sim-model', '--samples', '2', '--prompt', 'numbered']), 0);
  assert.equal(stack.simulator.stats().requests, requestsAfter, 'a re-run makes no model call');
  assert.deepEqual(await readJson<EvalReport>(`${base}.json`), report);
  // Even with an empty model cache (the cache is not part of the eval's identity): the run continues
  // from its stored results instead of starting over.
  assert.equal(await evalCommand(['--data', ROOT(), '--model', 'sim-model', '--samples', '2', '--prompt', 'numbered', '--cache', path.join(dir, 'empty-cache')]), 0);
  assert.equal(stack.simulator.stats().requests, requestsAfter, 'the re-run evaluated nothing again');

  // Without a judge, judged constraints are counted, not scored; the rules' figures stay.
  assert.equal(
    await evalCommand(['--data', ROOT(), '--model', 'sim-model', '--samples', '2', '--prompt', 'numbered', '--no-judge', '--out', path.join(dir, 'nojudge'), '--cache', dir_]),
    0,
  );
  const rulesOnly = await readJson<EvalReport>(`${await reportBase(path.join(dir, 'nojudge'), 'sim-model.numbered')}.json`);
  assert.equal(rulesOnly.judgeModel, null);
  assert.equal(rulesOnly.judgeConstraintsNotScored, counts.direct_gpt![1] + counts.cmp_gpt![1]);
  assert.deepEqual(rulesOnly.byMethod.rule_based, report.byMethod.rule_based);
  assert.equal(rulesOnly.constraintLevel.scored, counts.rule_based![1]);
  assert.equal(rulesOnly.usage.judge, undefined, 'no judge call');
  assert.equal(rulesOnly.usage.answer!.requests, rulesOnly.usage.answer!.cachedRequests, 'the answers came from the cache the first run filled');

  // The inline form beside it: another eval id, another report; the numbered one is left as it was.
  assert.equal(await evalCommand(['--data', ROOT(), '--model', 'sim-model', '--samples', '2', '--prompt', 'inline']), 0);
  const inlineBase = await reportBase(dir_, 'sim-model.inline');
  const inline = await readJson<EvalReport>(`${inlineBase}.json`);
  assert.equal(inline.prompt, 'inline');
  assert.notEqual(inline.evalId, report.evalId);
  assert.deepEqual(await readJson<EvalReport>(`${base}.json`), report, 'the numbered report is not overwritten');
  assert.equal(inline.samples, report.samples);
  // mmif status --evals lists both, with their prompt forms and report files.
  const printed: string[] = [];
  const log = console.log;
  console.log = (line: string) => void printed.push(line);
  try {
    assert.equal(await statusCommand(['--evals']), 0);
  } finally {
    console.log = log;
  }
  for (const r of [report, inline]) {
    const line = printed.find((l) => l.startsWith(`eval ${r.evalId}  COMPLETED`));
    assert.ok(line, `mmif status --evals lists ${r.evalId}: ${printed.join('\n')}`);
    assert.match(line, new RegExp(`prompt ${r.prompt}  constraint-level accuracy ${r.constraintLevel.accuracy!.toFixed(3)} \\(SIMULATED\\)  reports .*${r.evalId}\\.json`));
  }
});

test('multi-turn eval on Temporal: PIF per turn, corpus PIF and PIF-N-K match the saved turns; appending the instructions changes what is asked', async () => {
  const questions = ['What is in the picture?', 'Describe the colours.', 'What might happen next?', 'Where could this be?', 'Who would enjoy this scene?'];
  const data = path.join(dir, 'chats-data');
  await mkdir(path.join(data, 'cc3m'), { recursive: true });
  for (const n of ['000000000', '000000001']) await copyFile(path.join(SAMPLES_DIR, '00000', `${n}.jpg`), path.join(data, 'cc3m', `${n}.jpg`));
  const chats = path.join(data, 'chats.jsonl');
  await writeFile(chats, ['000000000', '000000001'].map((n, i) => JSON.stringify({ id: `chat${i}`, image: `cc3m/${n}.jpg`, questions })).join('\n') + '\n');
  const run = async (extra: string[]) => {
    assert.equal(await evalCommand(['--data', data, '--model', 'sim-chat', '--chats', chats, '--samples', '3', '--seed', '5', '--max-instructions', '3', ...extra]), 0);
    const out = path.join(data, 'MM-IFEval', 'eval');
    const name = path.basename(await reportBase(out, `sim-chat.multiturn${extra.length ? '.appended' : ''}`));
    const report = await readJson<MultiturnReport>(path.join(out, `${name}.json`));
    const turns = (await readFile(path.join(out, `${name}.turns.jsonl`), 'utf8'))
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as { chat: string; turn: number; instructions: string[]; responses: string[]; pif: Array<number | null>; followed: boolean[][]; verdicts: Verdict[][] },
      );
    assert.match(await readFile(path.join(out, `${name}.md`), 'utf8'), /simulated/i);
    return { report, turns };
  };
  const plain = await run([]);
  assert.equal(plain.report.simulated, true);
  assert.equal(plain.report.chats, 2);
  assert.equal(plain.turns.length, 10);
  for (const t of plain.turns) {
    assert.ok(t.instructions.length <= 3);
    assert.equal(t.pif.length, 3);
    assert.equal(t.followed[0]!.length, t.instructions.length, 'each response verified against every instruction given so far');
    assert.equal(t.pif[0], t.instructions.length === 0 ? null : t.followed[0]!.filter(Boolean).length / t.instructions.length);
    // Each verdict is auditable as a build record's: the verifier calls that decided it, and whether it was vacuous.
    assert.equal(t.verdicts.length, 3);
    for (const [s, response] of t.verdicts.entries()) {
      assert.equal(response.length, t.instructions.length);
      for (const v of response) {
        assert.equal(v.method, 'rule');
        assert.equal(typeof v.vacuous, 'boolean', `chat ${t.chat} turn ${t.turn}: verdict ${v.index} carries vacuous`);
        assert.ok(v.calls && v.calls.length > 0, `chat ${t.chat} turn ${t.turn}: verdict ${v.index} names its verifier calls`);
        assert.match(v.detail, new RegExp(`^${v.calls[0]!.func}\\(`));
      }
      assert.deepEqual(
        t.followed[s],
        response.map((v) => v.passed),
        'followed is each verdict under the default --vacuous pass',
      );
    }
  }
  const appended = await run(['--append-instructions']);
  for (const { report, turns } of [plain, appended]) {
    const scored = turns.filter((t) => t.pif[0] !== null);
    assert.ok(scored.length > 0);
    assert.equal(report.pif.turnsBeforeInstruction, turns.length - scored.length);
    const mean = scored.reduce((a, t) => a + t.pif[0]!, 0) / scored.length;
    assert.ok(Math.abs(report.pif.corpus!.mean - mean) < 1e-12);
    const nk = [1, 2, 3].map((k) => scored.filter((t) => t.pif.filter((p) => p === 1).length >= k).length / scored.length);
    assert.deepEqual(
      report.nk.map((r) => r.value),
      nk,
    );
    assert.deepEqual(
      report.pif.perTurn.map((p) => p.n),
      [1, 2, 3, 4, 5].map((turn) => scored.filter((t) => t.turn === turn).length).filter((n) => n > 0),
    );
  }
  // The ablation asks other requests wherever an instruction is in force, and the same ones before any;
  // that it raises PIF is the simulator's behaviour over many chats (test/unit/simulatorChat.test.ts),
  // not something 2 chats of 5 turns can show.
  const changed = plain.turns.map((t, i) => JSON.stringify(t.responses) !== JSON.stringify(appended.turns[i]!.responses));
  assert.deepEqual(
    changed,
    plain.turns.map((t) => t.instructions.length > 0),
  );
});

test('a multiturn build with holdout keeps held-out images out of its chats and pairs; mmif eval --multiturn scores those chats', async () => {
  const buildId = 'heldout-chats';
  const report = (await stack.client.workflow.execute('buildDataset', {
    taskQueue: stack.taskQueue,
    workflowId: buildId,
    args: [{ ...buildConfig(), buildId, seed: 4, mode: 'multiturn', chat: { turns: 4, maxInstructions: 2 }, verification: { maxRegenerations: 8 }, shardSize: 4, sliceSize: 4 }],
  })) as BuildReport;
  const layout = buildLayout(buildId);
  const training = new Set<string>();
  const held = new Map<string, string[]>();
  for (let shard = 0; shard < report.shards.planned; shard++) {
    for (const key of [layout.chatJsonl(shard), layout.chatDpoJsonl(shard)]) {
      for (const row of lines(await store.get(key)).map((l) => JSON.parse(l) as { images: string[] })) training.add(row.images[0]!);
    }
    for (const chat of lines(await store.get(layout.heldOutJsonl(shard))).map((l) => JSON.parse(l) as { image_path: string; turns: Array<{ question: string }> })) {
      held.set(
        chat.image_path,
        chat.turns.map((t) => t.question),
      );
    }
  }
  assert.ok(held.size > 0 && training.size > 0, `both sides are non-empty: ${held.size} held-out, ${training.size} training images`);
  assert.deepEqual(
    [...held.keys()].filter((image) => training.has(image)),
    [],
    'no image is in a training chat or pair and in the split',
  );
  assert.equal(report.heldOut?.instruct, held.size);
  await exportTrl(store, layout);
  const heldIds = (await getJson<{ ids: string[] }>(store, layout.mmifevalHoldoutIds))!.ids;
  await assertNoHeldOutInTraining(path.join(dir, buildId), new Set(heldIds), ['chat/parquet', 'chat/sharegpt', 'chat-dpo/parquet', 'chat-dpo/sharegpt', 'trl/sft', 'trl/dpo']);

  const root = path.join(dir, buildId);
  const split = lines(await store.get(layout.mmifevalHoldoutChats)).map((l) => JSON.parse(l) as { id: string; image: string; questions: string[] });
  assert.deepEqual(new Map(split.map((c) => [c.image, c.questions])), held, "the split holds each held-out chat's image and questions");
  assert.equal(await evalCommand(['--data', root, '--model', 'sim-chat', '--multiturn', '--samples', '2', '--max-instructions', '2']), 0);
  const evaluated = await readJson<MultiturnReport>(`${await reportBase(path.join(root, 'MM-IFEval', 'eval'), 'sim-chat.multiturn')}.json`);
  assert.equal(evaluated.chats, split.length);
  assert.equal(evaluated.simulated, true);
  assert.ok(evaluated.pif.corpus !== null, 'the held-out chats were scored');
});

test('bad eval input is named: a missing split fails at once, a missing image rejects its chat by name', async () => {
  const empty = path.join(dir, 'no-split');
  await mkdir(empty, { recursive: true });
  await assert.rejects(evalCommand(['--data', empty, '--model', 'm', '--no-judge', '--eval-id', 'no-split']), (err: unknown) => {
    assert.ok(err instanceof CliError);
    assert.equal(
      err.message,
      `eval no-split failed: ${path.join(empty, 'MM-IFEval', 'mmif_holdout.jsonl')}: not found (build with config holdout, or write it with mmif export --format mmifeval)`,
    );
    assert.equal(err.exitCode, EXIT.usage, 'an input error (EvalInputError): exit 2');
    return true;
  });
  const chats = path.join(empty, 'chats.jsonl');
  await writeFile(chats, JSON.stringify({ id: 'lost', image: 'cc3m/nowhere.jpg', questions: ['What is it?'] }) + '\n');
  await assert.rejects(evalCommand(['--data', empty, '--model', 'm', '--chats', chats]), /chat lost: image .*cc3m\/nowhere\.jpg is missing/);
});

test('cancelling an eval stops its model calls at once; the same eval id run again completes from what was stored', async () => {
  // One slice, one call at a time, slow replies: without cancellation reaching the calls, the
  // running activity would keep calling the endpoint for the rest of its slice.
  const input: EvalConfigInput = {
    evalId: 'cancel-me',
    data: ROOT(),
    out: path.join(dir, 'cancelled'),
    model: { model: 'sim-model' },
    judge: { model: 'mmif-sim-vlm' },
    responses: 4,
    prompt: 'numbered',
    sliceSize: 100,
    llm: { concurrency: 1 },
  };
  stack.simulator.setFaults({ latencyMs: 500 });
  try {
    const before = stack.simulator.stats().requests;
    const handle = await stack.client.workflow.start('evaluateModel', { taskQueue: stack.taskQueue, workflowId: evalWorkflowId('cancel-me'), args: [input] });
    await eventually(() => stack.simulator.stats().requests >= before + 4, 60_000, 'model calls under way');
    await handle.cancel();
    await assert.rejects(handle.result());
    // Allow the cancellation a heartbeat to arrive and the aborted requests to land.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const settled = stack.simulator.stats().requests;
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    assert.equal(stack.simulator.stats().requests, settled, 'requests reached the endpoint after the eval was cancelled');
  } finally {
    stack.simulator.setFaults({ latencyMs: 0 });
  }
  const summary = (await stack.client.workflow.execute('evaluateModel', { taskQueue: stack.taskQueue, workflowId: evalWorkflowId('cancel-me'), args: [input] })) as EvalSummary;
  assert.equal(summary.rejected, 0);
  const report = await readJson<EvalReport>(path.join(dir, 'cancelled', 'cancel-me.json'));
  assert.equal(report.samples, (await splitLines()).filter((l) => l.infer_type === 'main').length);
  assert.ok((report.usage.answer?.cachedRequests ?? 0) > 0, 'calls answered before the cancel came back from the cache');
});

/** A worker in its own process, as production runs it, on its own task queue. */
async function startWorker(taskQueue: string): Promise<ChildProcess> {
  const child = await startWorkerProcess({ temporalAddress: stack.server.address, taskQueue, baseUrl: stack.simulator.url });
  workers.push(child);
  return child;
}

test("a worker SIGKILLed mid-eval is replaced: the eval resumes, its report equals an uninterrupted run's, and no call is paid twice", async () => {
  const taskQueue = 'mmif-eval-crash';
  const config = (evalId: string, out: string): EvalConfigInput => ({
    evalId,
    data: ROOT(),
    out,
    model: { model: 'sim-model' },
    judge: { model: 'mmif-sim-vlm' },
    responses: 3,
    prompt: 'numbered',
    sliceSize: 1,
    maxParallelSlices: 2,
    retry: { maximumAttempts: 20, initialIntervalSeconds: 0.5, maximumIntervalSeconds: 1, heartbeatTimeoutSeconds: 3 },
    // The lease desk counts the killed worker's slots for a lease term plus its attempt timeout
    // (llm/concurrencyLeases.ts): the default 120 s kept the new worker from the endpoint that long.
    llm: { timeoutMs: 10_000 },
  });
  const first = await startWorker(taskQueue);
  stack.simulator.setFaults({ latencyMs: 150 });
  try {
    const refStart = stack.simulator.stats().completed;
    const reference = (await stack.client.workflow.execute('evaluateModel', {
      taskQueue,
      workflowId: evalWorkflowId('reference'),
      args: [config('reference', path.join(dir, 'ref'))],
    })) as EvalSummary;
    const referenceRequests = stack.simulator.stats().completed - refStart;
    assert.equal(reference.requests.paid, referenceRequests, 'uninterrupted: every answered request counted');

    const handle = await stack.client.workflow.start('evaluateModel', { taskQueue, workflowId: evalWorkflowId('crashed'), args: [config('crashed', path.join(dir, 'crashed'))] });
    const start = stack.simulator.stats();
    // A poll every 200 ms: after a couple of answered calls, while more are on the wire.
    await eventually(() => stack.simulator.stats().completed > start.completed + 2 && stack.simulator.stats().inFlight > 0, 60_000, 'calls in flight');
    const inFlightAtKill = stack.simulator.stats().inFlight;
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    await startWorker(taskQueue);
    const crashed = (await handle.result()) as EvalSummary;
    const answered = stack.simulator.stats().completed - start.completed;
    console.log(`eval killed mid-run: ${answered} requests answered (uninterrupted: ${referenceRequests}), ${inFlightAtKill} in flight at the kill`);
    assert.ok(answered <= referenceRequests + inFlightAtKill, `no call paid twice beyond those in flight at the kill: ${answered} vs ${referenceRequests} + ${inFlightAtKill}`);
    // The eval id and the settings naming it (id, output) differ by construction; the scores may not.
    const strip = (r: EvalReport) => ({ ...r, usage: undefined, evalId: undefined, config: undefined });
    const a = await readJson<EvalReport>(path.join(dir, 'crashed', 'crashed.json'));
    const b = await readJson<EvalReport>(path.join(dir, 'ref', 'reference.json'));
    assert.deepEqual(strip(a), strip(b), 'the resumed eval scores exactly what the uninterrupted one did');
    assert.equal(crashed.headline, reference.headline);

    // A new run over the same cache (cacheUri: the reference's output) pays for nothing.
    const before = stack.simulator.stats().requests;
    const cachedRun = (await stack.client.workflow.execute('evaluateModel', {
      taskQueue,
      workflowId: evalWorkflowId('cached'),
      args: [{ ...config('cached', path.join(dir, 'cached')), cacheUri: path.join(dir, 'ref') }],
    })) as EvalSummary;
    assert.equal(stack.simulator.stats().requests, before, 'every call answered from the cache');
    assert.equal(cachedRun.requests.paid, 0);
    assert.deepEqual(strip(await readJson<EvalReport>(path.join(dir, 'cached', 'cached.json'))), strip(b));
  } finally {
    stack.simulator.setFaults({ latencyMs: 0 });
  }
});
