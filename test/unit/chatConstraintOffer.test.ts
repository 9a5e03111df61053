/**
 * What the constraint stage of a multiturn build offers (pipeline/stages/constraints/constraintStage.ts):
 * a chat keeps only instructions verified by code, so every type offered must be shown with an example
 * the phrase parser maps to the type's own verifiers; otherwise models write the example's judged form
 * and the chat drops it ("not rule-checked"). Read off the Fig. 15 request the stage really sends.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBuildConfig } from '../../config/buildConfig.js';
import type { SourceSample } from '../../domain/sample.js';
import { constraintRequest } from '../../pipeline/stages/constraints/constraintStage.js';
import type { StageContext } from '../../pipeline/run/context.js';
import { catalogueRuleCalls } from '../../verification/selection.js';

const TYPE_LINE = /^- ([a-z_]+) \([^)]*\): .* Example: "(.*)"$/gm;

function offeredLines(mode: 'single' | 'multiturn', sampleId: string): Array<{ type: string; example: string }> {
  const config = parseBuildConfig({
    buildId: 'offer',
    seed: 7,
    output: '/tmp/offer',
    maxSamples: 1,
    models: { default: { model: 'm' } },
    sources: [{ type: 'cc3m', uri: '/tmp/none', layout: 'files' }],
    mode,
    ...(mode === 'multiturn' ? { chat: { turns: 4, maxInstructions: 3 } } : {}),
  });
  // The request is built from the config alone: no store, reader or model is touched.
  const ctx = { config } as StageContext;
  const sample = { sampleId, image: { sourceIndex: 0 } } as SourceSample;
  const { request } = constraintRequest(ctx, sample, 'Describe the scene in detail, then say what might happen next.', { jpeg: Buffer.alloc(0), sha256: '0'.repeat(64) });
  const text = request.prompt.messages.map((m) => m.text).join('\n');
  return [...text.matchAll(TYPE_LINE)].map(([, type, example]) => ({ type: type!, example: example! }));
}

test('a multiturn build offers only types shown with an example the parser maps to their verifiers', () => {
  const offered = new Set<string>();
  for (let i = 0; i < 60; i++) {
    const lines = offeredLines('multiturn', `s${i}`);
    assert.ok(lines.length > 0, 'the prompt lists offered types');
    for (const { type, example } of lines) {
      offered.add(type);
      assert.ok(catalogueRuleCalls(type, example), `${type} is offered with "${example}", which no rule function checks as phrased`);
    }
  }
  // Table 5's examples of these two have no code check ("Replace all periods with semicolons."), so a chat would drop them.
  assert.ok(!offered.has('punctuation_requirements') && !offered.has('scientific_notation'), [...offered].join(', '));
  for (const type of ['paragraph_number_limit', 'word_count_range_limit', 'mention', 'not_mention', 'prefix_and_suffix', 'precision']) {
    assert.ok(offered.has(type), `${type} is offered over 60 samples`);
  }
});

test('a single-turn build still shows Table 5 examples, judged phrasings included', () => {
  const lines = Array.from({ length: 60 }, (_, i) => offeredLines('single', `s${i}`)).flat();
  assert.ok(lines.some((l) => l.type === 'punctuation_requirements' && l.example === 'Replace all periods with semicolons.'));
});
