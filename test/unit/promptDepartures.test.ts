/**
 * Each paper figure's prompt as the engine renders it equals the paper's text (test/fixtures/
 * paperFigures.ts) once the changes prompts/departures.ts lists are undone: a sentence added to a
 * figure without a listed reason fails here, and so does a listed change the engine no longer makes.
 * The extra messages are sent from the list's own texts; the judge reminders and the JSON-only
 * instruction are driven through the code that sends them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONSTRAINT_TYPES } from '../../domain/constraints/catalogue.js';
import { adapt, baseDialect, requestBody } from '../../llm/dialect.js';
import { compareJudgeVerdict, directJudgeScores } from '../../pipeline/judges.js';
import type { RenderedPrompt } from '../../prompts/chat.js';
import { renderAnswerPrompt } from '../../prompts/answerPrompt.js';
import { renderCompareJudgePrompt } from '../../prompts/compareJudgePrompt.js';
import { OUTPUT_FORMAT as CONSTRAINT_FORMAT, renderConstraintPrompt, constraintTypeLine } from '../../prompts/constraintPrompt.js';
import { EXTRA_MESSAGES, FIGURE_CHANGES, promptDeparturesMarkdown, type FigureChange } from '../../prompts/departures.js';
import { renderDirectJudgePrompt } from '../../prompts/directJudgePrompt.js';
import { OUTPUT_FORMAT as INSTRUCTION_FORMAT, renderInstructionPrompt } from '../../prompts/instructionPrompt.js';
import { OUTPUT_FORMAT as VERIFIER_FORMAT, renderVerifierSelectionPrompt } from '../../prompts/verifierSelectionPrompt.js';
import { PAPER_FIGURES } from '../fixtures/paperFigures.js';
import { readFile } from 'node:fs/promises';
import { DATA_QUALITY_DOC, withDeparturesTable } from '../../cli/writeConfigReference.js';

type Figure = keyof typeof PAPER_FIGURES;

/** What the PDF's text lost is not compared: Markdown emphasis and heading marks, line breaks. */
const normalised = (s: string): string => s.replace(/[*#]/g, '').replace(/\s+/g, ' ').trim();
const escaped = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A pattern for `text` whose `{name}` parts match anything (the last one to the end). */
function patternOf(text: string): RegExp {
  const parts = text.split(/\{[^}]+\}/);
  return new RegExp(
    parts
      .map(escaped)
      .join('([\\s\\S]*?)')
      .replace(/\(\[\\s\\S\]\*\?\)$/, '([\\s\\S]*)'),
  );
}

const ONE_TYPE_EACH = CONSTRAINT_TYPES.slice(0, 3);
const FUNCTIONS = [{ name: 'check_length', signature: 'min, max', example: 'check_length(3, 10000)' }];
const renders: Record<Figure, RenderedPrompt[]> = {
  'Fig. 14': [renderInstructionPrompt(['EXAMPLE-A', 'EXAMPLE-B']), renderInstructionPrompt(['EXAMPLE-A', 'EXAMPLE-B'], 'VISIBLE-TEXT')],
  'Fig. 15': [renderConstraintPrompt('INSTRUCTION-X', ONE_TYPE_EACH)],
  'Fig. 20': [renderVerifierSelectionPrompt('CONSTRAINT-X', FUNCTIONS)],
  'Fig. 21': [renderCompareJudgePrompt('CONSTRAINT-X', 'WITH-X', 'WITHOUT-X')],
  'Fig. 22': [renderDirectJudgePrompt('RESPONSE-X', ['C-ONE', 'C-TWO'])],
};
/** What each of the paper's placeholders holds in the renders above. */
const filled: Record<string, string> = {
  '{original instructions list}': '1. EXAMPLE-A\n2. EXAMPLE-B',
  '{original_instruction}': 'INSTRUCTION-X',
  '{constraints_list_str}': ONE_TYPE_EACH.map(constraintTypeLine).join('\n'),
  '{constraint value}': 'CONSTRAINT-X',
  '{all candidate validation function names and parameters}': '- check_length(min, max) e.g. check_length(3, 10000)',
  '{constraint}': 'CONSTRAINT-X',
  '{pred_with_constraint}': 'WITH-X',
  '{pred_without_constraint}': 'WITHOUT-X',
  '{prediction}': 'RESPONSE-X',
  '{constraints_str}': 'Constraint_1: C-ONE\nConstraint_2: C-TWO',
};
const outputFormat: Partial<Record<Figure, string>> = { 'Fig. 14': INSTRUCTION_FORMAT, 'Fig. 15': CONSTRAINT_FORMAT, 'Fig. 20': VERIFIER_FORMAT };

/** `text` with `change` undone: the engine's words back to the paper's (or gone); whether it was found. */
function undone(text: string, change: FigureChange): { text: string; found: boolean } {
  const pattern = patternOf(change.engine);
  return { text: text.replace(pattern, change.paper ?? ''), found: pattern.test(text) };
}

for (const figure of Object.keys(PAPER_FIGURES) as Figure[]) {
  test(`${figure} as the engine renders it is the paper's text plus the changes prompts/departures.ts lists`, () => {
    const changes = FIGURE_CHANGES.filter((c) => c.figure === figure);
    const found = new Set<FigureChange>();
    // Placeholders become markers first, so that the JSON output format put in its place is text.
    const placeholders = [...PAPER_FIGURES[figure].matchAll(/\{[^}]+\}/g)].map((m) => m[0]).filter((name) => !(name === '{output format}' && outputFormat[figure]));
    let paper: string = PAPER_FIGURES[figure];
    for (const name of placeholders) paper = paper.replace(name, '\u0000');
    paper = paper.replace('{output format}', outputFormat[figure] ?? '');
    for (const prompt of renders[figure]) {
      assert.equal(prompt.messages.length, 1, `${figure} is one message; any other is an extra message`);
      let text = prompt.messages[0]!.text;
      for (const change of changes) {
        const result = undone(text, change);
        if (result.found) found.add(change);
        text = result.text;
      }
      const m = new RegExp(`^${normalised(paper).split('\u0000').map(escaped).join('(.*?)')}$`).exec(normalised(text));
      assert.ok(m, `${figure} departs from the paper beyond the listed changes:\n  engine: ${normalised(text)}\n  paper:  ${normalised(paper)}`);
      placeholders.forEach((name, i) => assert.equal(m[i + 1], normalised(filled[name]!), `${figure}: ${name}`));
    }
    for (const change of changes) assert.ok(found.has(change), `${figure}: the listed change "${change.engine}" is no longer made`);
  });
}

test('the extra messages are sent with the listed texts: the JSON-only instruction and both judges’ reminders', async () => {
  const listed = (name: string) => patternOf(EXTRA_MESSAGES.find((m) => m.name === name)!.text);
  const stepped = adapt(baseDialect('gpt-4o'), 'response_format', "Invalid schema for response_format 'x'")!;
  const body = requestBody({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], temperature: 0, maxTokens: 9, schema: { name: 'x', schema: {} } }, stepped);
  assert.match(String(body.messages[0]!.content), listed('JSON-only instruction'));

  const asked: RenderedPrompt[] = [];
  const ask = async (prompt: RenderedPrompt) => (asked.push(prompt), 'Judgement: fine, but no summary');
  await directJudgeScores(ask, 'RESPONSE-X', ['C-ONE']);
  await compareJudgeVerdict(ask, 'C-ONE', 'WITH-X', 'WITHOUT-X');
  assert.match(asked[1]!.messages.at(-1)!.text, listed('direct judge reminder'));
  assert.match(asked[3]!.messages.at(-1)!.text, listed('compare judge reminder'));
  assert.match(renderAnswerPrompt('Q', [], 'FACT-X').messages[0]!.preface!, listed('reference answer framing'));
});

test('docs/data-quality.md lists the changes and extra messages as prompts/departures.ts gives them (npm run docs:config)', async () => {
  const doc = await readFile(DATA_QUALITY_DOC, 'utf8');
  assert.equal(doc, withDeparturesTable(doc), 'run npm run docs:config');
  assert.ok(doc.includes(promptDeparturesMarkdown()));
});
