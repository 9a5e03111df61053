/**
 * Every record of every source, accounted for: the build report's `accounting`, one entry per source.
 *
 *   read    = planned + notSelected(reason) + filtered(reason) + problems(code)
 *   planned = accepted + heldOut + rejected(reason) + uncommitted
 *
 * `read` is counted on its own while planning streams the source (every sample, filtered record and
 * damaged unit the reader yielded); `planned` is what the plan selected over all its rounds; the
 * right-hand side of the second line comes from the committed shards' manifests, so each identity
 * compares counts made in different places and fails when one of them loses a record.
 */
import { addCounts } from '../../domain/counts.js';
import type { BuildPlan, PlannedSource } from '../../pipeline/planning/planBuild.types.js';
import type { ShardManifest } from '../contracts/manifest.js';
import type { SourceAccount } from '../contracts/buildReport.js';

/** Samples of the seeded order no planning round drew (beyond the quota, or beyond what targets needed). */
export const NOT_DRAWN = 'not-drawn';
/** Prefix of candidates richness scored but did not select, e.g. `richness:below-min-score`. */
export const RICHNESS_PREFIX = 'richness:';

const total = (counts: Record<string, number>): number => Object.values(counts).reduce((n, c) => n + c, 0);

/** The accounting of each source, from the plan and the manifests of its shards (undefined: not committed). */
export function sourceAccounting(plan: BuildPlan, manifests: ReadonlyArray<ShardManifest | undefined>): SourceAccount[] {
  const accounts = plan.sources.map((s, source) => startAccount(s, source));
  for (let shard = 0; shard < plan.shardCount; shard++) {
    const account = accounts[plan.shardSources[shard]!]!;
    const manifest = manifests[shard];
    if (!manifest) {
      account.uncommitted += plan.shardSizes[shard]!;
      continue;
    }
    account.accepted += manifest.counts.instruct;
    account.heldOut += manifest.heldOut?.instruct ?? 0;
    addCounts(account.rejected, manifest.rejectedSamplesByReason);
  }
  for (const a of accounts) {
    a.balanced = a.read === a.planned + total(a.notSelected) + total(a.filtered) + total(a.problems) && a.planned === a.accepted + a.heldOut + total(a.rejected) + a.uncommitted;
  }
  return accounts;
}

function startAccount(s: PlannedSource, source: number): SourceAccount {
  const notSelected: Record<string, number> = {};
  const notDrawn = s.samples - s.ranked;
  if (notDrawn > 0) notSelected[NOT_DRAWN] = notDrawn;
  for (const [fate, n] of Object.entries(s.richness ?? {})) if (fate !== 'selected') notSelected[`${RICHNESS_PREFIX}${fate}`] = n;
  return {
    source,
    type: s.type,
    name: s.name,
    read: s.read,
    planned: s.selected,
    notSelected,
    filtered: { ...s.filtered },
    problems: { ...s.problems },
    accepted: 0,
    heldOut: 0,
    rejected: {},
    uncommitted: 0,
    balanced: false,
  };
}

/** A term of the identities: its total and its counts by key (`0` when there are none). */
export function countTerms(counts: Record<string, number>): string {
  const entries = Object.entries(counts).sort(([x], [y]) => (x < y ? -1 : 1));
  return entries.length === 0 ? '0' : `${total(counts)} (${entries.map(([k, n]) => `${k} ${n}`).join(', ')})`;
}

/** One line per source for the CLI: the two identities with their terms. */
export function formatAccount(a: SourceAccount): string {
  return (
    `${a.name} #${a.source}: read ${a.read} = planned ${a.planned} + not selected ${countTerms(a.notSelected)} + filtered ${countTerms(a.filtered)} + problems ${countTerms(a.problems)}; ` +
    `planned ${a.planned} = accepted ${a.accepted}${a.heldOut ? ` + held out ${a.heldOut}` : ''} + rejected ${countTerms(a.rejected)}${a.uncommitted ? ` + uncommitted ${a.uncommitted}` : ''}` +
    (a.balanced ? '' : ' -- DOES NOT BALANCE (a bug: please report it)')
  );
}
