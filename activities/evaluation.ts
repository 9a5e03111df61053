/**
 * The evaluation's activities (workflows/evaluateModel.ts): plan the items, evaluate a slice of them,
 * write the reports. They take the eval config (small, secret-free JSON) and keep everything else in
 * the eval's output; bad input fails at once, non-retryably, with the record and the cause.
 */
import { ConfigError } from '../config/configError.js';
import { parseEvalConfig } from '../config/evalConfig.js';
import { EndpointError } from '../llm/endpointError.js';
import { writeEvalReports, type EvalSummary } from '../output/evalOutputs.js';
import { EvalInputError } from '../pipeline/evaluation/evalContext.js';
import { planEvalItems } from '../pipeline/evaluation/evalItems.js';
import { evaluateSlice } from '../pipeline/evaluation/evalSlice.js';
import { failPermanentlyOn } from './failures.js';
import { withHeartbeat } from './heartbeat.js';
import { evalContextFor } from './runtime.js';

const PERMANENT = [ConfigError, EvalInputError, EndpointError];

function evalActivity<T>(work: () => Promise<T>): Promise<T> {
  return failPermanentlyOn(PERMANENT, () => withHeartbeat(work));
}

/** Reads the split (or chats) once and stores the items; a re-run finds them. Returns how many. */
export function planEvaluation(input: unknown): Promise<{ items: number }> {
  return evalActivity(async () => ({ items: await planEvalItems(evalContextFor(parseEvalConfig(input))) }));
}

/** Evaluates items [from, to): answers, verdicts and judges, one stored result per item. */
export function runEvalSlice(input: { config: unknown; from: number; to: number }): Promise<{ evaluated: number; skipped: number }> {
  return evalActivity(() => evaluateSlice(evalContextFor(parseEvalConfig(input.config)), input.from, input.to));
}

export function finalizeEvaluation(input: unknown): Promise<EvalSummary> {
  return evalActivity(() => writeEvalReports(evalContextFor(parseEvalConfig(input))));
}
