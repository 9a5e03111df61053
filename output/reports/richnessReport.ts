/**
 * The richness selection of a build, for its report: per source with `richness`, the scorer and
 * rule, the scored candidates by fate, and the distributions of scores and tag counts over all
 * scored candidates and over the selected ones (read from `richness/*.jsonl`), plus the model
 * calls planning made to score them.
 */
import { addCounts } from '../../domain/counts.js';
import { distribution } from '../../domain/richness.js';
import type { CallRecord } from '../../llm/callRecord.js';
import type { BuildPlan, StoredConfig } from '../../pipeline/planning/planBuild.types.js';
import { getJson, type ObjectStore } from '../../storage/objectStore.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import type { SourceRichness } from '../contracts/buildReport.js';

interface ScoredLine {
  score?: number;
  tags?: number | null;
  fate: string;
}

export async function richnessReport(store: ObjectStore, layout: BuildLayout): Promise<{ sources: SourceRichness[]; calls: CallRecord[] } | undefined> {
  const config = (await getJson<StoredConfig>(store, layout.config))?.config;
  const plan = await getJson<BuildPlan>(store, layout.planSummary);
  if (!config || !plan || !config.sources.some((s) => s.richness)) return undefined;
  const lines = new Map<number, ScoredLine[]>();
  for await (const { key } of store.list(layout.richnessPrefix)) {
    const index = Number(/source-(\d+)-from-/.exec(key)?.[1]);
    const body = await store.get(key);
    const parsed = (body ?? Buffer.alloc(0))
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as ScoredLine);
    lines.set(index, [...(lines.get(index) ?? []), ...parsed]);
  }
  const calls: CallRecord[] = [];
  for await (const { key } of store.list(layout.richnessCallsPrefix)) calls.push(...((await getJson<CallRecord[]>(store, key)) ?? []));
  const sources = config.sources.flatMap((source, index): SourceRichness[] => {
    if (!source.richness) return [];
    const scored = lines.get(index) ?? [];
    const fates: Record<string, number> = {};
    for (const line of scored) addCounts(fates, { [line.fate]: 1 });
    const values = (pick: (l: ScoredLine) => number | null | undefined, only?: string) =>
      scored
        .filter((l) => !only || l.fate === only)
        .flatMap((l) => {
          const v = pick(l);
          return typeof v === 'number' ? [v] : [];
        });
    return [
      {
        source: index,
        type: plan.sources[index]!.type,
        name: plan.sources[index]!.name,
        settings: source.richness,
        fates,
        scores: { scored: distribution(values((l) => l.score)), selected: distribution(values((l) => l.score, 'selected')) },
        tags: { scored: distribution(values((l) => l.tags)), selected: distribution(values((l) => l.tags, 'selected')) },
      },
    ];
  });
  return { sources, calls };
}
