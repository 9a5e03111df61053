/** Checks of a finished build's output shared by the integration tests. */
import assert from 'node:assert/strict';
import { readdir, readFile, stat } from 'node:fs/promises';
import { ParquetReader } from '@dsnp/parquetjs';
import path from 'node:path';
import { sha256Hex } from '../../domain/hashing.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { reasonCode } from '../../config/rejectionReasons.js';
import type { ShardManifest } from '../../output/contracts/manifest.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { RejectRecord } from '../../output/contracts/records.js';
import { NOT_DRAWN, RICHNESS_PREFIX } from '../../output/reports/sourceAccounting.js';
import type { BuildPlan } from '../../pipeline/planning/planBuild.types.js';
import { getJson, type ObjectStore } from '../../storage/objectStore.js';

/**
 * Every committed shard is whole: each file its manifest lists exists with the listed checksum.
 * Returns the checksums by path, to compare runs.
 */
export async function assertCommittedShardsIntact(store: ObjectStore, buildId: string, shardCount: number): Promise<Map<string, string>> {
  const layout = buildLayout(buildId);
  const sums = new Map<string, string>();
  for (let shard = 0; shard < shardCount; shard++) {
    const manifest = await getJson<ShardManifest>(store, layout.manifest(shard));
    if (!manifest) continue;
    for (const file of manifest.files) {
      const body = await store.get(`${layout.root}/${file.path}`);
      assert.ok(body, `${file.path} of committed shard ${shard} exists`);
      assert.equal(sha256Hex(body), file.sha256, `${file.path} matches its manifest`);
      sums.set(file.path, file.sha256);
    }
  }
  return sums;
}

/** Polls until `check` holds (or throws after `timeoutMs`). */
export async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 60_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Modification time of every file under a local folder, by relative path: compare runs to see what was written. */
export async function mtimesOf(root: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    out.set(path.relative(root, file), (await stat(file)).mtimeMs);
  }
  return out;
}

const sum = (counts: Record<string, number>): number => Object.values(counts).reduce((n, c) => n + c, 0);
const lines = <T>(text: string | undefined): T[] =>
  (text ?? '')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);

/**
 * The build report's accounting (docs/outputs.md): for every source, read = planned + notSelected +
 * filtered + problems and planned = accepted + heldOut + rejected + uncommitted, each term checked against the
 * files a user sees rather than taken from the report: filtered against rejects/source-filtered.json,
 * problems against rejects/source-problems.jsonl, accepted against the shards' instruct JSONL rows,
 * rejected against their rejects JSONL, richness fates against richness/*.jsonl. `read`, when the
 * test knows how many records its fixtures hold (by source index), must equal that too.
 */
export async function assertAccounting(store: ObjectStore, report: BuildReport, expectedRead: Record<number, number> = {}): Promise<void> {
  const layout = buildLayout(report.buildId);
  const plan = await getJson<BuildPlan>(store, layout.planSummary);
  assert.ok(plan, 'the build has a plan');
  assert.equal(report.accounting.length, plan.sources.length, 'one account per source');
  const filteredFile = (await getJson<Record<string, Record<string, number>>>(store, layout.sourceFiltered)) ?? {};
  const problemLines = lines<{ sourceIndex: number; code: string }>((await store.get(layout.sourceProblems))?.toString('utf8'));
  const richnessLines: Array<{ source: number; fate: string }> = [];
  for await (const { key } of store.list(layout.richnessPrefix)) {
    const source = Number(/source-(\d+)-from/.exec(key)![1]);
    for (const l of lines<{ fate: string }>((await store.get(key))!.toString('utf8'))) richnessLines.push({ source, fate: l.fate });
  }
  const seen = plan.sources.map(() => ({ accepted: 0, heldOut: 0, rejected: {} as Record<string, number>, uncommitted: 0 }));
  for (let shard = 0; shard < plan.shardCount; shard++) {
    const tally = seen[plan.shardSources[shard]!]!;
    if (!(await getJson<ShardManifest>(store, layout.manifest(shard)))) {
      tally.uncommitted += plan.shardSizes[shard]!;
      continue;
    }
    tally.accepted += lines((await store.get(layout.instructJsonl(shard)))!.toString('utf8')).length;
    tally.heldOut += lines((await store.get(layout.heldOutJsonl(shard)))?.toString('utf8')).length;
    for (const r of lines<RejectRecord>((await store.get(layout.rejects(shard)))!.toString('utf8'))) {
      if (r.kind === 'sample') tally.rejected[reasonCode(r.reason)] = (tally.rejected[reasonCode(r.reason)] ?? 0) + 1;
    }
  }
  for (const [i, a] of report.accounting.entries()) {
    const name = `${a.type} #${i}`;
    assert.equal(a.source, i);
    assert.equal(a.read, a.planned + sum(a.notSelected) + sum(a.filtered) + sum(a.problems), `${name}: read = planned + notSelected + filtered + problems: ${JSON.stringify(a)}`);
    assert.equal(a.planned, a.accepted + a.heldOut + sum(a.rejected) + a.uncommitted, `${name}: planned = accepted + heldOut + rejected + uncommitted: ${JSON.stringify(a)}`);
    assert.ok(a.balanced, `${name} is reported balanced`);
    if (expectedRead[i] !== undefined) assert.equal(a.read, expectedRead[i], `${name}: every record the fixture holds is read`);
    assert.deepEqual(a.filtered, filteredFile[`${i}:${a.name}`] ?? {}, `${name}: filtered as in source-filtered.json`);
    const problems: Record<string, number> = {};
    for (const p of problemLines.filter((p) => p.sourceIndex === i)) problems[p.code] = (problems[p.code] ?? 0) + 1;
    assert.deepEqual(a.problems, problems, `${name}: problems as listed in source-problems.jsonl`);
    assert.equal(a.accepted, seen[i]!.accepted, `${name}: accepted = MM-IFInstruct rows of its shards`);
    assert.equal(a.heldOut, seen[i]!.heldOut, `${name}: held out = rows of its shards' heldout/ files`);
    assert.deepEqual(a.rejected, seen[i]!.rejected, `${name}: rejected samples as listed in its shards' rejects`);
    assert.equal(a.uncommitted, seen[i]!.uncommitted, `${name}: uncommitted = samples of its shards without a manifest`);
    const fates: Record<string, number> = {};
    for (const r of richnessLines.filter((r) => r.source === i && r.fate !== 'selected')) fates[`${RICHNESS_PREFIX}${r.fate}`] = (fates[`${RICHNESS_PREFIX}${r.fate}`] ?? 0) + 1;
    const { [NOT_DRAWN]: _notDrawn, ...scoredOut } = a.notSelected;
    assert.deepEqual(scoredOut, fates, `${name}: candidates richness left out, as listed in richness/`);
  }
}

/**
 * Every training file of every format under a dataset root (sharegpt JSONL and Parquet of every
 * config, the card's default config among them, and a TRL export): the sample ids of its rows. Ids of
 * pairs are mapped to their sample (`<id>-dpo`, `<id>-t<turn>-dpo`). Held-out, rejected, eval and
 * work files are not training files and are skipped.
 */
export async function trainingFileSampleIds(root: string): Promise<Map<string, Set<string>>> {
  const sampleOf = (id: string) => id.replace(/(-t\d+)?-dpo$/, '');
  const byFile = new Map<string, Set<string>>();
  for (const folder of ['instruct', 'dpo', 'chat', 'chat-dpo', 'trl']) {
    let files: string[];
    try {
      files = (await readdir(path.join(root, folder), { recursive: true })).map(String);
    } catch {
      continue; // a format this build or export does not have
    }
    for (const file of files.filter((f) => f.endsWith('.jsonl') || f.endsWith('.parquet'))) {
      const full = path.join(root, folder, file);
      const ids = new Set<string>();
      if (file.endsWith('.jsonl')) {
        for (const line of (await readFile(full, 'utf8')).split('\n').filter(Boolean)) ids.add(sampleOf(String((JSON.parse(line) as { id: unknown }).id)));
      } else {
        const reader = await ParquetReader.openFile(full);
        const cursor = reader.getCursor([['id']]);
        for (let row = (await cursor.next()) as { id?: string } | null; row; row = (await cursor.next()) as { id?: string } | null) ids.add(sampleOf(String(row.id)));
        await reader.close();
      }
      byFile.set(path.join(folder, file), ids);
    }
  }
  return byFile;
}
