/**
 * The stage registry (pipeline/stages/registry.ts) is the one definition of each pipeline step. What
 * cannot import it — workflow code, which keeps the step names and order (domain/stages.ts) and each
 * step's task queue and Batch API use (config/endpointRouting.ts) — must agree with it, and the step
 * table in docs/architecture.md is written from it. Each failure names what to change. That each
 * step calls only the model roles its definition names is tested against the simulator in
 * test/integration/stageRegistry.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { MODEL_ROLES, parseBuildConfig } from '../../config/buildConfig.js';
import { BATCHABLE_STAGES, stageTaskQueues } from '../../config/endpointRouting.js';
import { ALL_STAGE_NAMES, stagesFor } from '../../domain/stages.js';
import { stageDefinitions, type BuildMode } from '../../pipeline/stages/registry.js';

const MODES: readonly BuildMode[] = ['single', 'multiturn'];

test('each mode runs its registered steps in the order domain/stages.ts gives workflow code, each after the steps it builds on', () => {
  for (const mode of MODES) {
    const steps = stageDefinitions(mode);
    assert.deepEqual(
      steps.map((s) => s.name),
      [...stagesFor(mode)],
    );
    steps.forEach((step, i) => {
      const earlier = steps.slice(0, i).map((s) => s.name);
      for (const dep of step.buildsOn) assert.ok(earlier.includes(dep), `${mode}: '${step.name}' builds on '${dep}', which does not run before it`);
    });
  }
  const registered = new Set(MODES.flatMap((mode) => stageDefinitions(mode).map((s) => s.name)));
  assert.deepEqual([...ALL_STAGE_NAMES].sort(), [...registered].sort(), 'every stage name has a definition');
});

test("a step's activities run on its first model role's task queue, and the Batch API sends the first calls of the steps that define one", () => {
  const models = Object.fromEntries([['default', { model: 'm' }], ...MODEL_ROLES.map((role) => [role, { model: 'm', taskQueue: `queue-${role}` }])]);
  for (const mode of MODES) {
    const config = parseBuildConfig({ buildId: 'b', output: '/tmp/out', sources: [{ type: 'cc3m', uri: '/data' }], maxSamples: 1, mode, models });
    const queues: Partial<Record<string, string>> = stageTaskQueues(config);
    for (const step of stageDefinitions(mode)) {
      assert.equal(queues[step.name], step.modelRoles[0] && `queue-${step.modelRoles[0]}`, `${mode}: config/endpointRouting.ts stageTaskQueues, step '${step.name}'`);
    }
  }
  const batchable = stageDefinitions('single').filter((s) => s.firstRequest);
  assert.deepEqual(
    [...BATCHABLE_STAGES],
    batchable.map((s) => s.name),
    'config/endpointRouting.ts BATCHABLE_STAGES',
  );
  for (const step of batchable) assert.equal(step.name, step.modelRoles[0] as string, `${step.name}: a batched step's first call is its own role's`);
});

/** The step table of docs/architecture.md, as the registry gives it: one row per definition. */
function stepTable(): string {
  const code = (xs: readonly string[]) => (xs.length ? xs.map((x) => `\`${x}\``).join(', ') : '-');
  const definitions = [...new Set(MODES.flatMap((mode) => stageDefinitions(mode)))];
  const rows = definitions.map((s) => {
    const modes = MODES.filter((mode) => stageDefinitions(mode).includes(s)).join(', ');
    return `| \`${s.name}\` | ${modes} | ${s.summary} | ${code(s.buildsOn)} | ${code(s.modelRoles)} | ${code(s.prompts)} | ${s.firstRequest ? 'yes' : '-'} |`;
  });
  return ['| step | modes | result | builds on | model roles | prompts | Batch API |', '|---|---|---|---|---|---|---|', ...rows].join('\n');
}

test('docs/architecture.md shows the step table the registry gives', async () => {
  const doc = await readFile(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
  const table = stepTable();
  assert.ok(doc.includes(table), `docs/architecture.md's step table differs from the registry; it should read:\n${table}`);
});
