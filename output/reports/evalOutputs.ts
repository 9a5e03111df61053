/**
 * The end of an evaluation: every item's result read back and turned into the report, written to
 * the eval's output as `<name>.json`, `<name>.md` and the responses (`.responses.jsonl` single-turn,
 * `.turns.jsonl` multi-turn) for audit. Deterministic from the results, so re-writing is idempotent.
 */
import path from 'node:path';
import { evalFingerprintMaterial, evalOutput, type EvalConfig } from '../../config/evalConfig.js';
import { mapLimit } from '../../domain/mapLimit.js';
import type { EvalContext } from '../../pipeline/evaluation/evalContext.js';
import { loadEvalItems } from '../../pipeline/evaluation/evalItems.js';
import { turnsFollowed } from '../../pipeline/evaluation/chatEval.js';
import type { ItemResult } from '../../pipeline/evaluation/evalSlice.js';
import { evalReportName } from '../../storage/evalLayout.js';
import { getJson, putIfChanged } from '../../storage/objectStore.js';
import { evalMarkdown, scoreSingleTurn, type EvalIdentity } from './evalReport.js';
import { summarizeUsage } from '../commit/manifest.js';
import { multiturnMarkdown, scoredBySample, scoreMultiturn } from './multiturnEvalReport.js';
import { jsonl } from '../formats/sharegpt.js';

/** What the workflow returns: small, with where to find the rest. */
export interface EvalSummary {
  evalId: string;
  mode: 'single-turn' | 'multi-turn';
  /** The prompt form (`inline`, `numbered`), or `multiturn`. */
  prompt: EvalIdentity['prompt'];
  simulated: boolean;
  /** The report files, as URIs under the eval's output. */
  files: string[];
  /** Constraint-level accuracy (single-turn) or corpus PIF (multi-turn); null when nothing was scored. */
  headline: number | null;
  rejected: number;
  /** Model calls made (paid) and answered from the cache, over the whole run. */
  requests: { paid: number; cached: number };
}

/**
 * The settings as a report states them: local paths relative to the report's folder, so a report
 * beside its dataset (the default) names no absolute path and still points at its data after the
 * dataset is moved or shared (S3 URIs stay as they are).
 */
export function reportedSettings(config: EvalConfig): Record<string, unknown> {
  const settings = JSON.parse(evalFingerprintMaterial(config)) as Record<string, unknown> & { chats?: { uri: string } };
  const folder = path.resolve(evalOutput(config));
  const portable = (uri: string): string => (uri.startsWith('s3://') ? uri : path.relative(folder, path.resolve(uri)) || '.');
  settings.data = portable(config.data);
  if (config.out) settings.out = portable(config.out);
  if (settings.chats && config.chats) settings.chats.uri = portable(config.chats.uri);
  return settings;
}

export async function writeEvalReports(ctx: EvalContext): Promise<EvalSummary> {
  const { config } = ctx;
  const items = await loadEvalItems(ctx);
  const results = await mapLimit(items, 32, async (_, i) => {
    const result = await getJson<ItemResult>(ctx.out, ctx.layout.result(i));
    if (!result) throw new Error(`eval '${config.evalId}': item ${i} has no result at ${ctx.out.root}/${ctx.layout.result(i)}`);
    return result;
  });
  const calls = results.flatMap((r) => r.calls);
  const usage = summarizeUsage(calls);
  const simulated = calls.some((c) => c.simulated);
  const name = evalReportName(config.evalId);
  // What the report was made with: its id, prompt form and every setting that shapes it (no secret: keys are named by env var).
  const identity = {
    evalId: config.evalId,
    prompt: config.chats ? ('multiturn' as const) : config.prompt,
    config: reportedSettings(config),
  };
  const rejected = results.flatMap((r) => (r.rejected !== undefined ? [{ id: r.id, reason: r.rejected }] : []));
  let json: unknown;
  let markdown: string;
  let audit: { key: string; lines: string[] };
  let headline: number | null;
  if (config.chats) {
    const report = scoreMultiturn(scoredBySample(results, config.responses, config.vacuous), {
      ...identity,
      model: config.model.model,
      simulated,
      instructionsAppended: config.chats.appendInstructions,
      chats: results.length - rejected.length,
      rejected,
      usage,
    });
    [json, markdown, headline] = [report, multiturnMarkdown(report), report.pif.corpus?.mean ?? null];
    audit = {
      key: `${name}.turns.jsonl`,
      lines: results.flatMap((r) =>
        (r.turns ?? []).map((t) =>
          JSON.stringify({
            chat: r.id,
            turn: t.turn,
            instructions: t.instructions,
            question: t.question,
            responses: t.responses,
            pif: t.pif,
            followed: turnsFollowed(t, config.vacuous),
            verdicts: t.verdicts,
          }),
        ),
      ),
    };
  } else {
    const report = scoreSingleTurn(results, { ...identity, model: config.model.model, judgeModel: config.judge?.model ?? null, simulated, usage });
    [json, markdown, headline] = [report, evalMarkdown(report), report.constraintLevel.accuracy];
    audit = {
      key: `${name}.responses.jsonl`,
      lines: results.map((r) =>
        JSON.stringify({ id: r.id, responses: r.responses ?? [], verdicts: r.verdicts ?? [], ...(r.rejected !== undefined ? { rejected: r.rejected } : {}) }),
      ),
    };
  }
  await putIfChanged(ctx.out, `${name}.json`, `${JSON.stringify(json, null, 2)}\n`, 'application/json');
  await putIfChanged(ctx.out, `${name}.md`, markdown);
  await putIfChanged(ctx.out, audit.key, jsonl(audit.lines));
  const root = evalOutput(config).replace(/\/+$/, '');
  return {
    evalId: config.evalId,
    mode: config.chats ? 'multi-turn' : 'single-turn',
    prompt: identity.prompt,
    simulated,
    files: [`${name}.json`, `${name}.md`, audit.key].map((k) => `${root}/${k}`),
    headline,
    rejected: rejected.length,
    requests: { paid: calls.filter((c) => !c.cached).length, cached: calls.filter((c) => c.cached).length },
  };
}
