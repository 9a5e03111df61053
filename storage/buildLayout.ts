/**
 * Where everything of a build lives, relative to the output root. One place, so the writer, the
 * resume logic, the CLI and the tests agree. The dataset root is `<output>/<buildId>/`; paths
 * inside records (images) are relative to it, as LLaMA-Factory expects.
 */
import type { StageName } from '../config/stages.js';

export const pad = (n: number): string => String(n).padStart(5, '0');
export const shardName = (shard: number): string => `shard-${pad(shard)}`;

export function imagePathInDataset(sha256: string): string {
  return `images/${sha256.slice(0, 2)}/${sha256}.jpg`;
}

/** The build's resume state, inside the dataset root: left out of what is uploaded. */
const WORK = '_work';

/** An image as the image stage stages it (under _work/), as a path inside the dataset root. */
export function stagedImagePathInDataset(sha256: string): string {
  return `${WORK}/${imagePathInDataset(sha256)}`;
}

/** The bench name the MM-IFEval scripts are given (`--bench_name`). */
export const MMIFEVAL_BENCH = 'mmif_holdout';

export function buildLayout(buildId: string) {
  const root = buildId;
  const work = `${root}/${WORK}`;
  return {
    root,
    /** `key` as a path inside the dataset root: what manifests list, what a store opened at the root reads. */
    inDataset: (key: string) => key.slice(root.length + 1),
    /** A record's image in the dataset (images/): written when a shard commits the records that use it. */
    image: (sha256: string) => `${root}/${imagePathInDataset(sha256)}`,
    /**
     * A normalized image as the image stage stores it, before any record uses it: a sample rejected
     * later leaves its image here, out of the folder that is uploaded.
     */
    stagedImage: (sha256: string) => `${root}/${stagedImagePathInDataset(sha256)}`,
    imageClaim: (dedupeKey: string) => `${work}/image-claims/${dedupeKey}.json`,
    /** A sample whose dedupe claim a lower rank took over (pipeline/stages/image/imageClaims.ts LostClaim). */
    lostClaim: (sampleId: string) => `${work}/image-claims-lost/${sampleId}.json`,
    lostClaimsPrefix: `${work}/image-claims-lost/`,
    stageState: (sampleId: string, stage: StageName) => `${work}/samples/${sampleId}/${stage}.json`,
    /** Every sample's stage results: what a budget stop or a failed shard leaves for the re-run to reuse. */
    samplesPrefix: `${work}/samples/`,
    config: `${work}/config.json`,
    shardPlan: (shard: number) => `${work}/plan/${shardName(shard)}.json`,
    /** A Batch API round of one stage of a shard: batch ids and where each reply goes. */
    batchRound: (shard: number, stage: string, round: number) => `${work}/batches/${shardName(shard)}/${stage}-${round}.json`,
    /** The batches of that round submitted so far (llm/batch.ts SubmissionLog): a retried submission skips them. */
    batchSubmissions: (shard: number, stage: string, round: number) => `${work}/batches/${shardName(shard)}/${stage}-${round}.submitted.json`,
    /** The call records (tokens, cost) of the replies collected in that round. */
    batchCalls: (shard: number, stage: string, round: number) => `${work}/batches/${shardName(shard)}/${stage}-${round}.calls.json`,
    batchCallsPrefix: (shard: number) => `${work}/batches/${shardName(shard)}/`,
    /** The usage of one pre-flight request (llm/preflight.ts), by check id; summed into the build report. */
    preflightUsage: (checkId: string) => `${work}/preflight/${checkId}.json`,
    preflightUsagePrefix: `${work}/preflight/`,
    /** How a `mmif build --local` run ended (cli/localRecord.ts): `mmif status <dataset root>` reads it from any folder. */
    localRun: `${work}/local-run.json`,
    /** The hard budget (llm.budget) the latest run of the build is held to (llm/buildBudget.ts). */
    budget: `${work}/budget.json`,
    /** What the build paid, one object per worker process that paid (llm/spendLedger.ts). */
    spendPrefix: `${work}/spend/`,
    /** The ranks of source `index` after round 0's, for a targets build's top-up rounds (pipeline/planning/planBuild.types.ts RankReserve). */
    rankReserve: (index: number) => `${work}/plan/reserve-source-${index}.json`,
    /** Written after every shard plan: a re-run finds the plan complete and lists no source again. */
    planSummary: `${work}/plan/summary.json`,
    sourceProblems: `${root}/rejects/source-problems.jsonl`,
    /** Richness selection: every scored candidate of a window of source `index` from rank `from`, with its fate. */
    richnessScores: (index: number, from: number) => `${root}/richness/source-${index}-from-${pad(from)}.jsonl`,
    richnessPrefix: `${root}/richness/`,
    /** The model calls (vlm-tags) made to score that window. */
    richnessCalls: (index: number, from: number) => `${work}/richness/source-${index}-from-${pad(from)}.calls.json`,
    richnessCallsPrefix: `${work}/richness/`,
    /** Records dropped by policy (multiple choice, dropped task types...), counted by source and reason. */
    sourceFiltered: `${root}/rejects/source-filtered.json`,
    instructParquet: (shard: number) => `${root}/instruct/parquet/${shardName(shard)}.parquet`,
    instructJsonl: (shard: number) => `${root}/instruct/sharegpt/${shardName(shard)}.jsonl`,
    dpoParquet: (shard: number) => `${root}/dpo/parquet/${shardName(shard)}.parquet`,
    dpoJsonl: (shard: number) => `${root}/dpo/sharegpt/${shardName(shard)}.jsonl`,
    /** Multiturn builds: chats (SFT) and turn-level pairs, in place of the instruct/ and dpo/ folders. */
    chatParquet: (shard: number) => `${root}/chat/parquet/${shardName(shard)}.parquet`,
    chatJsonl: (shard: number) => `${root}/chat/sharegpt/${shardName(shard)}.jsonl`,
    chatDpoParquet: (shard: number) => `${root}/chat-dpo/parquet/${shardName(shard)}.parquet`,
    chatDpoJsonl: (shard: number) => `${root}/chat-dpo/sharegpt/${shardName(shard)}.jsonl`,
    rejects: (shard: number) => `${root}/rejects/${shardName(shard)}.jsonl`,
    /** The shard's records held out for evaluation (config `holdout`): SFT records as sharegpt lines like instructJsonl, or (multiturn) chat records as JSON. */
    heldOutJsonl: (shard: number) => `${root}/heldout/${shardName(shard)}.jsonl`,
    /** Written last: its presence is what makes a shard committed. */
    manifest: (shard: number) => `${root}/manifests/${shardName(shard)}.json`,
    report: `${root}/build-report.json`,
    /** The quality report (output/reports/qualityReport.ts) and the Hugging Face dataset card (output/reports/datasetCard.ts). */
    quality: `${root}/quality.json`,
    datasetCard: `${root}/README.md`,
    /** The `mmif view` page of the first records, written by every build beside the card. */
    viewer: `${root}/viewer.html`,
    /** `mmif export --format trl`: TRL's vision rows, one file per committed shard. */
    trlSft: (shard: number) => `${root}/trl/sft/${shardName(shard)}.parquet`,
    trlDpo: (shard: number) => `${root}/trl/dpo/${shardName(shard)}.parquet`,
    /** `mmif export --format verl` / `rlvr`: RL prompt rows with their ground truth, one file per committed shard. */
    verl: (shard: number) => `${root}/verl/${shardName(shard)}.parquet`,
    rlvr: (shard: number) => `${root}/rlvr/${shardName(shard)}.parquet`,
    /** `mmif export --format llamafactory-v1`: LLaMA-Factory v1 samples and their registration YAMLs. */
    llamafactoryV1Sft: (shard: number) => `${root}/llamafactory-v1/sft/${shardName(shard)}.jsonl`,
    llamafactoryV1Dpo: (shard: number) => `${root}/llamafactory-v1/dpo/${shardName(shard)}.jsonl`,
    llamafactoryV1Registration: (split: 'sft' | 'dpo') => `${root}/llamafactory-v1/${split}.yaml`,
    /**
     * `mmif export --format mmifeval`: the dataset root is MM-IFEval's `data/` directory (its
     * scripts read `data/MM-IFEval/<bench>.jsonl` and open `data/<image>`), so no image is copied.
     */
    mmifevalBench: `${root}/MM-IFEval/${MMIFEVAL_BENCH}.jsonl`,
    mmifevalHoldoutIds: `${root}/MM-IFEval/${MMIFEVAL_BENCH}.ids.json`,
    /** A multiturn build's held-out chats as `mmif eval --chats` reads them: `{id, image, questions}` lines. */
    mmifevalHoldoutChats: `${root}/MM-IFEval/${MMIFEVAL_BENCH}_chats.jsonl`,
    manifestsPrefix: `${root}/manifests/`,
    datasetInfo: `${root}/dataset_info.json`,
  };
}
export type BuildLayout = ReturnType<typeof buildLayout>;

/** The model-call cache sits beside the builds so every build in an output root shares it. */
export const LLM_CACHE_PREFIX = '_cache/llm';
