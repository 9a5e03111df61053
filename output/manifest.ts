/** The shard manifest: written last, it is the commit marker and the shard's table of contents. */
import type { CallRecord } from '../llm/modelCaller.js';
import type { RejectRecord } from '../domain/records.js';

export const MANIFEST_FORMAT = 'mmif-engine/shard-manifest@1';

export interface StageUsage {
  requests: number;
  /** Requests answered from the cache (made and paid before). */
  cachedRequests: number;
  promptTokens: number;
  completionTokens: number;
}

export interface ManifestFile {
  /** Relative to the dataset root. */
  path: string;
  sha256: string;
  bytes: number;
  rows: number;
}

export interface ShardManifest {
  format: typeof MANIFEST_FORMAT;
  buildId: string;
  shard: number;
  configFingerprint: string;
  /** True when any model reply came from the mmif simulator: such data is for testing only. */
  simulated: boolean;
  counts: { planned: number; instruct: number; dpo: number; rejectedSamples: number; rejectedPairs: number };
  rejectsByStage: Record<string, number>;
  files: ManifestFile[];
  models: Record<string, string>;
  usage: Record<string, StageUsage>;
}

export function summarizeUsage(calls: readonly CallRecord[]): Record<string, StageUsage> {
  const usage: Record<string, StageUsage> = {};
  for (const c of calls) {
    const u = (usage[c.stage] ??= { requests: 0, cachedRequests: 0, promptTokens: 0, completionTokens: 0 });
    u.requests += 1;
    if (c.cached) u.cachedRequests += 1;
    u.promptTokens += c.promptTokens;
    u.completionTokens += c.completionTokens;
  }
  return usage;
}

export function modelsByStage(calls: readonly CallRecord[]): Record<string, string> {
  const models: Record<string, string> = {};
  for (const c of calls) models[c.stage] ??= c.model;
  return models;
}

export function countByStage(rejects: readonly RejectRecord[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of rejects) counts[r.stage] = (counts[r.stage] ?? 0) + 1;
  return counts;
}
