/**
 * The evaluation's activities (workflows/evaluateModel.ts): plan the items, evaluate a slice of them,
 * write the reports. They take the eval config (small, secret-free JSON) and keep everything else in
 * the eval's output; bad input fails at once, non-retryably, with the record and the cause.
 */
import { parseEvalConfig } from '../config/evalConfig.js';
import { writeEvalReports, type EvalSummary } from '../output/reports/evalOutputs.js';
import { planEvalItems } from '../pipeline/evaluation/evalItems.js';
import { evaluateSlice } from '../pipeline/evaluation/evalSlice.js';
import { withHeartbeat } from './heartbeat.js';
import { evalContextFor } from './runtime.js';

/** Reads the split (or chats) once and stores the items; a re-run finds them. Returns how many. */
export function planEvaluation(input: unknown): Promise<{ items: number }> {
  return withHeartbeat(async () => ({ items: await planEvalItems(evalContextFor(parseEvalConfig(input))) }));
}

/** Evaluates items [from, to): answers, verdicts and judges, one stored result per item. */
export function runEvalSlice(input: { config: unknown; from: number; to: number }): Promise<{ evaluated: number; skipped: number }> {
  return withHeartbeat(() => evaluateSlice(evalContextFor(parseEvalConfig(input.config)), input.from, input.to));
}

export function finalizeEvaluation(input: unknown): Promise<EvalSummary> {
  return withHeartbeat(() => writeEvalReports(evalContextFor(parseEvalConfig(input))));
}
