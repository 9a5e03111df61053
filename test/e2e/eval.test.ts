/**
 * `mmif eval` against the HTTP simulator: a held-out split in the layout `mmif export --format
 * mmifeval` writes (MM-IFEval's input lines, github.com/SYuan03/MM-IFEngine `eval_mmifeval/`:
 * `{id, index, image, tag, infer_type, instruction, constraints: [{key, value, judge}]}`, images
 * relative to the dataset root), answered over HTTP, scored, and the report checked against an
 * independent re-scoring of the responses the command saved.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evalCommand } from '../../cli/commands/eval.js';
import type { EvalReport } from '../../output/evalReport.js';
import type { MultiturnReport } from '../../output/multiturnEvalReport.js';
import type { MmifevalLine } from '../../output/mmifeval.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { runVerifierCall } from '../../verification/functions.js';

let simulator: SimulatorHandle;
let root: string;

const rule = (key: string, value: string, func: string, params: unknown[]) => ({ key, value, judge: { method: 'rule_based' as const, verify_funcs: [{ func, params }] } });
const lines: MmifevalLine[] = [
  {
    id: 's1', index: 0, image: 'cc3m/000000000.jpg', tag: 'C-Level', infer_type: 'main', instruction: 'Describe the scene in the picture.',
    constraints: [
      rule('sentence_number_limit', 'Use exactly 3 sentences.', 'check_whether_response_sentence_number_in_range', [3, 3]),
      rule('not_mention', "Do not mention the word 'very'.", 'check_whether_whole_response_not_contain_certain_substrings', [['very']]),
      { key: 'tone_requirement', value: 'Write in a cheerful tone.', judge: { method: 'direct_gpt' } },
    ],
  },
  {
    id: 's2', index: 1, image: 'cc3m/000000001.jpg', tag: 'C-Level', infer_type: 'main', instruction: 'What stands out in this image?',
    constraints: [
      rule('mention', "Mention the word 'light' at least twice.", 'check_whether_each_keyword_in_list_mentioned_in_range', [['light'], 2, 10000]),
      rule('word_count_range_limit', 'Write between 40 and 80 words.', 'check_whether_response_word_count_in_range', [40, 80]),
    ],
  },
];

before(async () => {
  simulator = await startSimulator({ seed: 3 });
  root = await mkdtemp(join(tmpdir(), 'mmif-eval-'));
  await mkdir(join(root, 'MM-IFEval'), { recursive: true });
  await mkdir(join(root, 'cc3m'));
  for (const n of ['000000000', '000000001']) await copyFile(`samples/cc3m/00000/${n}.jpg`, join(root, 'cc3m', `${n}.jpg`));
  await writeFile(join(root, 'MM-IFEval', 'mmif_holdout.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
});

after(async () => {
  await simulator?.close();
  await rm(root, { recursive: true, force: true });
});

test('mmif eval scores the simulator over HTTP; the report matches a re-scoring of its saved responses', async () => {
  const code = await evalCommand(['--data', root, '--model', 'sim-model', '--samples', '2', '--base-url', simulator.url, '--prompt', 'numbered']);
  assert.equal(code, 0);
  const dir = join(root, 'MM-IFEval', 'eval');
  const report = JSON.parse(await readFile(join(dir, 'sim-model.json'), 'utf8')) as EvalReport;
  assert.equal(report.simulated, true);
  assert.equal(report.samples, 2);
  assert.equal(report.responsesPerSample, 2);
  assert.equal(report.judgeConstraintsNotScored, 2); // s1's tone constraint, for each of 2 responses
  const saved = (await readFile(join(dir, 'sim-model.responses.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { id: string; responses: string[] });
  assert.deepEqual(saved.map((s) => s.id), ['s1', 's2']);
  assert.ok(saved.every((s) => s.responses.length === 2 && s.responses.every((r) => r.length > 0)));
  assert.notEqual(saved[0]!.responses[0], saved[0]!.responses[1], 'the two samples are different draws');

  // Re-score independently: every rule constraint of every response.
  let followed = 0, scored = 0, allFollowed = 0;
  const byType: Record<string, [number, number]> = {};
  for (const { id, responses } of saved) {
    const line = lines.find((l) => l.id === id)!;
    for (const r of responses) {
      let all = true;
      for (const c of line.constraints.filter((k) => k.judge.method === 'rule_based')) {
        const passed = c.judge.verify_funcs!.every((call) => { const o = runVerifierCall(r, call); return 'passed' in o && o.passed; });
        scored++; if (passed) followed++; else all = false;
        const t = (byType[c.key] ??= [0, 0]); t[1]++; if (passed) t[0]++;
      }
      if (all) allFollowed++;
    }
  }
  assert.equal(scored, 8);
  assert.deepEqual([report.constraintLevel.followed, report.constraintLevel.scored], [followed, scored]);
  assert.deepEqual([report.instructionLevel.followed, report.instructionLevel.scored], [allFollowed, 4]);
  assert.deepEqual(Object.fromEntries(Object.entries(report.byType).map(([k, a]) => [k, [a.followed, a.scored]])), byType);
  // Categories come from the catalogue: mention/not_mention are Keyword, the two limits Text Length limit.
  assert.deepEqual(Object.keys(report.byCategory).sort(), ['Keyword', 'Text Length limit']);
  assert.equal(report.byCategory['Keyword']!.scored, 4);
  const markdown = await readFile(join(dir, 'sim-model.md'), 'utf8');
  assert.match(markdown, /SIMULATED/);
  assert.match(markdown, new RegExp(`Constraint-level accuracy: .*\\(${followed}/8\\)`));
});

test('the verifiers discriminate: inline prompts (which the simulator does not parse into constraints) score lower', async () => {
  // The simulator follows only the numbered "## Constraints" form, so under MM-IFEval's inline form
  // it answers the bare instruction and misses constraints such as "mention 'light' at least twice".
  await evalCommand(['--data', root, '--model', 'sim-inline', '--base-url', simulator.url]);
  const report = JSON.parse(await readFile(join(root, 'MM-IFEval', 'eval', 'sim-inline.json'), 'utf8')) as EvalReport;
  assert.equal(report.constraintLevel.scored, 4);
  assert.ok(report.constraintLevel.followed < 4, JSON.stringify(report.byType));
  assert.equal(report.byType['mention']!.followed, 0);
});

test('multi-turn eval: PIF per turn, corpus PIF and PIF-N-K match the saved turns; appending the instructions helps', async () => {
  const questions = ['What is in the picture?', 'Describe the colours.', 'What might happen next?', 'Where could this be?', 'Who would enjoy this scene?'];
  const chats = join(root, 'chats.jsonl');
  await writeFile(chats, ['000000000', '000000001'].map((n, i) => JSON.stringify({ id: `chat${i}`, image: `cc3m/${n}.jpg`, questions })).join('\n') + '\n');
  const run = async (extra: string[]) => {
    await evalCommand(['--data', root, '--model', 'sim-chat', '--base-url', simulator.url, '--chats', chats, '--samples', '3', '--seed', '5', '--max-instructions', '3', ...extra]);
    const name = `sim-chat.multiturn${extra.length ? '.appended' : ''}`;
    const report = JSON.parse(await readFile(join(root, 'MM-IFEval', 'eval', `${name}.json`), 'utf8')) as MultiturnReport;
    const turns = (await readFile(join(root, 'MM-IFEval', 'eval', `${name}.turns.jsonl`), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { chat: string; turn: number; instructions: string[]; pif: Array<number | null>; verdicts: Array<{ passed: boolean }> });
    return { report, turns };
  };
  const plain = await run([]);
  assert.equal(plain.report.simulated, true);
  assert.equal(plain.turns.length, 10);
  for (const t of plain.turns) {
    assert.ok(t.instructions.length <= 3);
    assert.equal(t.pif.length, 3);
    // the first response's PIF is its verdicts' pass fraction over the instructions given so far
    assert.equal(t.verdicts.length, t.instructions.length);
    assert.equal(t.pif[0], t.instructions.length === 0 ? null : t.verdicts.filter((v) => v.passed).length / t.instructions.length);
  }
  for (const { report, turns } of [plain, await run(['--append-instructions'])]) {
    const scored = turns.filter((t) => t.pif[0] !== null);
    assert.ok(scored.length > 0);
    assert.equal(report.pif.turnsBeforeInstruction, turns.length - scored.length);
    const mean = scored.reduce((a, t) => a + t.pif[0]!, 0) / scored.length;
    assert.ok(Math.abs(report.pif.corpus!.mean - mean) < 1e-12);
    const nk = [1, 2, 3].map((k) => scored.filter((t) => t.pif.filter((p) => p === 1).length >= k).length / scored.length);
    assert.deepEqual(report.nk.map((r) => r.value), nk);
    assert.deepEqual(report.pif.perTurn.map((p) => p.n), [1, 2, 3, 4, 5].map((turn) => scored.filter((t) => t.turn === turn).length).filter((n) => n > 0));
  }
  const appended = (await run(['--append-instructions'])).report;
  // The simulator follows only constraints listed in the last user turn: retrieval is the whole gap here.
  assert.ok(appended.pif.corpus!.mean > plain.report.pif.corpus!.mean, `${appended.pif.corpus!.mean} vs ${plain.report.pif.corpus!.mean}`);
});

test('mmif eval names the sample whose image is missing', async () => {
  const broken = await mkdtemp(join(tmpdir(), 'mmif-eval-broken-'));
  await mkdir(join(broken, 'MM-IFEval'));
  await writeFile(join(broken, 'MM-IFEval', 'mmif_holdout.jsonl'), JSON.stringify(lines[1]) + '\n');
  await assert.rejects(evalCommand(['--data', broken, '--model', 'm', '--base-url', simulator.url]), /sample s2: image .*cc3m\/000000001\.jpg: ENOENT/);
  await assert.rejects(evalCommand(['--data', join(broken, 'nowhere'), '--model', 'm', '--base-url', simulator.url]), /mmif_holdout\.jsonl: not found \(write it with mmif export --format mmifeval\)/);
  await rm(broken, { recursive: true, force: true });
});
