/**
 * The image.richness stage: selects a source's images by semantic richness while the build is
 * planned, in the role of the paper's IC9600 complexity score and RAM++ tag count, with one of four
 * scorers (imported scores, edge density from image/complexity.ts, the `models.richness` VLM's tag
 * count, or a user-served HTTP scorer: docs/sources.md). Only windows of the source's seeded order are
 * scored, each sized to what is still wanted over the expected pass rate, until enough pass or the
 * source runs out; every scored candidate is written to `richness/` with its score and fate, and
 * computed scores are cached by scorer and image content.
 */
import { type BuildConfig } from '../../config/buildConfig.js';
import { endpointFor } from '../../config/endpointRouting.js';
import { sourceImageConfig } from '../../config/sourceConfig.js';
import type { RichnessConfig } from '../../config/sourceFields.js';
import { sha256Hex } from '../../domain/hashing.js';
import { mapLimit } from '../../domain/mapLimit.js';
import { judgeWindow, topFractionCutoff, type RichnessRule, type ScoreOutcome } from '../../domain/richness.js';
import type { SourceSample } from '../../domain/sample.js';
import { imageComplexity } from '../../image/complexity.js';
import { normalizeImage } from '../../image/normalize.js';
import type { ModelCaller } from '../../llm/modelCaller.js';
import type { CallRecord } from '../../llm/callRecord.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import { distinctTags, renderTagPrompt, TAG_SCHEMA_NAME, tagReplySchema } from '../../prompts/tagPrompt.js';
import { importedScoreOf, parseImportedScores, scoresByStem } from '../../sources/importedScores.js';
import type { SourceReader } from '../../sources/contract.js';
import { getJson, putJson, type ObjectStore } from '../../storage/objectStore.js';
import { openStore } from '../../storage/openStore.js';
import { rankedSlice } from './ranking.js';
import { readSecret } from '../../config/secrets.js';
import { RichnessError } from './richnessError.js';
import { replicaUrls } from '../../config/endpointReplicas.js';

/** Scored at once per window: reads and model calls in flight. */
const SCORING_CONCURRENCY = 8;

/** The statistic's revision: part of its cache key, so a change of formula rescores. */
const STATISTIC_VERSION = 'edge-density-v1';

/** What planning needs to score images: the build's model caller (vlm-tags) and a cache. */
export interface RichnessTools {
  models: ModelCaller;
  /** Where computed scores are cached (the model-call cache's store). */
  cache: ObjectStore;
  /** The dataset root of this build, for the `richness/` listing. */
  store: ObjectStore;
  layout: BuildLayout;
}

interface RichnessTaken {
  samples: SourceSample[];
  /** Ranks of the source's order consumed (scored), from the start. */
  ranked: number;
  exhausted: boolean;
  /** Candidates by fate: selected, not needed (a window gave more than wanted), or the rule's reason code. */
  fates: Record<string, number>;
}

/**
 * Takes up to `wanted` images of source `index` that pass its richness rule, scoring windows of
 * its seeded order from rank `from` on.
 */
export async function takeRichSamples(
  config: BuildConfig,
  index: number,
  reader: SourceReader,
  from: number,
  wanted: number,
  tools: RichnessTools,
  /** The first window, when the caller already ranked it (planning's own scan of the source). */
  firstWindow?: SourceSample[],
): Promise<RichnessTaken> {
  const settings = config.sources[index]!.richness!;
  const scorer = await scorerFor(config, index, reader, settings, tools);
  const taken: SourceSample[] = [];
  const fates: Record<string, number> = {};
  let cursor = from;
  let exhausted = false;
  let prefetched = firstWindow;
  while (taken.length < wanted && !exhausted) {
    const size = richnessWindow(settings, wanted - taken.length);
    const window = prefetched ?? (await rankedSlice(config, reader, cursor, cursor + size));
    prefetched = undefined;
    exhausted = window.length < size;
    const calls: CallRecord[] = [];
    const outcomes = await mapLimit(window, SCORING_CONCURRENCY, (sample) => scorer.score(sample, calls));
    const decisions = judgeWindow(outcomes, scorer.rule);
    const lines = window.map((sample, i) => {
      const outcome = outcomes[i]!;
      const decision = decisions[i]!;
      const fate = decision.selected ? (taken.length < wanted ? 'selected' : 'not-needed') : decision.reason.split(':')[0]!;
      if (fate === 'selected') taken.push({ ...sample, richness: (outcome as Extract<ScoreOutcome, { ok: true }>).value });
      fates[fate] = (fates[fate] ?? 0) + 1;
      return JSON.stringify({
        sample_id: sample.sampleId,
        source_id: sample.sourceId,
        rank: cursor + i,
        ...(outcome.ok ? { score: outcome.value.score, tags: outcome.value.tags, entropy_bits: outcome.value.entropyBits } : {}),
        fate,
        ...(decision.selected ? {} : { reason: decision.reason }),
      });
    });
    await tools.store.put(tools.layout.richnessScores(index, cursor), lines.map((l) => `${l}\n`).join(''));
    if (calls.length > 0) await putJson(tools.store, tools.layout.richnessCalls(index, cursor), calls);
    cursor += window.length;
  }
  return { samples: taken, ranked: cursor, exhausted, fates };
}

/** Candidates scored to find `wanted` passing images: wanted / the expected pass rate. */
export function richnessWindow(settings: RichnessConfig, wanted: number): number {
  return Math.ceil(wanted / (settings.expectedPassRate ?? settings.topFraction ?? 0.5));
}

interface Scorer {
  rule: RichnessRule;
  score(sample: SourceSample, calls: CallRecord[]): Promise<ScoreOutcome>;
}

async function scorerFor(config: BuildConfig, index: number, reader: SourceReader, settings: RichnessConfig, tools: RichnessTools): Promise<Scorer> {
  const rule: RichnessRule = { minScore: settings.minScore, minTags: settings.minTags, topFraction: settings.topFraction };
  if (settings.scorer === 'imported') return importedScorer(config, settings, rule, reader);
  const imageConfig = sourceImageConfig(config.image, config.sources[index]!);
  const compute = computeFor(config, settings, imageConfig, tools);
  return {
    rule,
    async score(sample, calls) {
      let bytes: Buffer;
      try {
        bytes = await reader.readImage(sample.image);
      } catch (err) {
        return { ok: false, reason: `missing-image: ${(err as Error).message}` };
      }
      const key = `_cache/richness/${sha256Hex(`${compute.identity}\u0000${sha256Hex(bytes)}`)}.json`;
      const cached = await getJson<ScoreOutcome>(tools.cache, key);
      if (cached) return cached;
      const outcome = await compute.run(bytes, calls);
      // A failed HTTP scorer is not cached: the next plan asks again.
      if (outcome.ok || settings.scorer !== 'endpoint') await putJson(tools.cache, key, outcome);
      return outcome;
    },
  };
}

async function importedScorer(config: BuildConfig, settings: RichnessConfig, rule: RichnessRule, reader: SourceReader): Promise<Scorer> {
  const file = settings.scores!;
  const slash = file.lastIndexOf('/');
  const store = openStore(slash < 0 ? '.' : file.slice(0, slash) || '/', config.s3);
  const body = await store.get(file.slice(slash + 1));
  if (!body) throw new RichnessError(`richness scores file ${file} does not exist`);
  const scores = parseImportedScores(body.toString('utf8'), file);
  const stems = scoresByStem(scores);
  // The authors sorted by score and kept the top: over the whole file, that is a score threshold.
  const fileCutoff =
    rule.topFraction === undefined
      ? undefined
      : {
          score: topFractionCutoff(
            [...scores.values()].map((s) => s.score),
            rule.topFraction,
          ),
          fraction: rule.topFraction,
        };
  return {
    rule: { minScore: rule.minScore, minTags: rule.minTags, fileCutoff },
    async score(sample) {
      const found = importedScoreOf(scores, stems, reader.origin(sample.image.locator), file);
      if (!found.ok) return found;
      const entry = found.score;
      return { ok: true, value: { scorer: 'imported', score: entry.score, ...(entry.tags !== undefined ? { tags: entry.tags } : {}) } };
    },
  };
}

function computeFor(
  config: BuildConfig,
  settings: RichnessConfig,
  imageConfig: ReturnType<typeof sourceImageConfig>,
  tools: RichnessTools,
): { identity: string; run(bytes: Buffer, calls: CallRecord[]): Promise<ScoreOutcome> } {
  switch (settings.scorer) {
    case 'statistic':
      return {
        identity: STATISTIC_VERSION,
        async run(bytes) {
          try {
            const { edgeDensity, entropyBits } = await imageComplexity(bytes, imageConfig.maxInputPixels);
            return { ok: true, value: { scorer: 'statistic', score: round(edgeDensity), entropyBits: round(entropyBits) } };
          } catch (err) {
            return { ok: false, reason: `corrupt: ${(err as Error).message}` };
          }
        },
      };
    case 'vlm-tags': {
      const endpoint = endpointFor(config, 'richness');
      return {
        // The model-call cache holds the replies; this cache keeps the count, keyed by the model.
        identity: `vlm-tags\u0000${replicaUrls(endpoint).join(' ')}\u0000${endpoint.model}`,
        async run(bytes, calls) {
          const image = await normalizeImage(bytes, imageConfig);
          if (!image.ok) return { ok: false, reason: image.reason };
          const made: CallRecord[] = [];
          const reply = await tools.models.json(
            { stage: 'richness', endpoint, prompt: renderTagPrompt(), image: { jpeg: image.jpeg, sha256: image.sha256 }, temperature: config.llm.judgeTemperature },
            TAG_SCHEMA_NAME,
            tagReplySchema,
            made,
          );
          calls.push(...made);
          const tags = distinctTags(reply.tags).length;
          return { ok: true, value: { scorer: 'vlm-tags', score: tags, tags, ...(made.some((c) => c.simulated) ? { simulated: true } : {}) } };
        },
      };
    }
    case 'endpoint':
      return {
        identity: `endpoint\u0000${settings.url}`,
        async run(bytes) {
          const image = await normalizeImage(bytes, imageConfig);
          if (!image.ok) return { ok: false, reason: image.reason };
          return callScoringEndpoint(settings, image.jpeg);
        },
      };
    default:
      throw new RichnessError(`no computed scorer '${settings.scorer}'`);
  }
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

/** POST {image: base64 JPEG} to the user's scorer; it answers {score, tags?} (tags a count or a list). */
async function callScoringEndpoint(settings: RichnessConfig, jpeg: Buffer): Promise<ScoreOutcome> {
  const key = settings.apiKeyEnv ? readSecret(settings.apiKeyEnv) : undefined;
  if (settings.apiKeyEnv && !key) throw new RichnessError(`richness endpoint ${settings.url}: env var ${settings.apiKeyEnv} is not set`);
  const response = await fetch(settings.url!, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ image: jpeg.toString('base64') }),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  // 5xx and 429 are worth a retry (the activity's); anything else is this image's answer.
  if (response.status >= 500 || response.status === 429) throw new Error(`richness endpoint ${settings.url}: HTTP ${response.status}: ${text.slice(0, 200)}`);
  if (!response.ok) return { ok: false, reason: `scorer-refused: HTTP ${response.status}: ${text.slice(0, 200)}` };
  let body: { score?: unknown; tags?: unknown };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return { ok: false, reason: `scorer-reply: not JSON: ${text.slice(0, 200)}` };
  }
  const score = Number(body.score);
  if (typeof body.score !== 'number' || !Number.isFinite(score)) return { ok: false, reason: `scorer-reply: no numeric "score" in ${text.slice(0, 200)}` };
  const tags = Array.isArray(body.tags) ? distinctTags(body.tags.map(String)).length : typeof body.tags === 'number' ? body.tags : undefined;
  return { ok: true, value: { scorer: 'endpoint', score, ...(tags !== undefined ? { tags } : {}) } };
}
