/**
 * `mmif export`: writes a build's committed data in the trainer and evaluator formats (TRL, MM-IFEval,
 * verl, RLVR, LLaMA-Factory) beside it, without any model call.
 */
import { parseFlags } from '../../config/commandFlags.js';
import {
  EXPORT_FORMATS,
  exportMmifeval,
  exportRl,
  exportTrl,
  MultiturnExportError,
  NoCommittedShardError,
  NoReservedSplitError,
  ReservedSplitError,
  type ExportFormat,
} from '../../output/formats/export.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { openStore } from '../../storage/openStore.js';
import { CliError, EXIT } from '../exitCodes.js';
import { s3FromEnv } from '../s3FromEnv.js';

export const EXPORT_USAGE = `usage: mmif export --output URI --build-id ID --format trl|mmifeval|verl|rlvr|llamafactory-v1 [--all | --holdout F]
  Writes trainer and evaluator formats beside a build's data (<output>/<build-id>/), from its
  committed shards; no model call. Re-running rewrites the same bytes.
  trl       trl/sft/shard-N.parquet {id, images, messages} and trl/dpo/shard-N.parquet
            {id, images, prompt, chosen, rejected}: TRL's vision conventions, images inside.
  mmifeval  MM-IFEval/mmif_holdout.jsonl: the eval split in the input layout of MM-IFEval's scripts
            (the dataset root is their data/ directory); MM-IFEval/mmif_holdout.ids.json lists its
            samples and images. Eval splits are made only at build time (config holdout: its images
            are in no training file); every such build writes it itself. A build without one is
            refused (--holdout is refused too: a split drawn now would leave its samples in the
            training files), unless --all: every accepted sample in that layout, to score the data
            itself with the reference scripts (the ids file marks it trainingData).
  verl      verl/shard-N.parquet: verl's RL prompt rows {data_source, prompt, images, ability,
            reward_model: {style, ground_truth}, extra_info}, images inside (docs/rl-rewards.md).
  rlvr      rlvr/shard-N.parquet: open-instruct's RLVR rows {messages, ground_truth, dataset,
            constraint_type, constraint} plus images.
  llamafactory-v1  llamafactory-v1/{sft,dpo}/shard-N.jsonl in LLaMA-Factory v1's messages format,
            registered by llamafactory-v1/sft.yaml and dpo.yaml (paths relative to the build root).
  The RL formats carry each prompt's ground truth (mmif schema --ground-truth); single-turn builds,
  accepted non-held-out records only.
  --all       (mmifeval) every accepted sample, for scoring the data itself (see above)
  --holdout F (mmifeval) a fraction in (0, 1): never drawn now; refused, naming the config holdout
            with that fraction to build a new version with
  S3 endpoints come from the environment (MMIF_S3_ENDPOINT, AWS_*).`;

export async function exportCommand(args: string[]): Promise<number> {
  const { values } = parseFlags({
    args,
    options: {
      output: { type: 'string' },
      'build-id': { type: 'string' },
      format: { type: 'string' },
      holdout: { type: 'string' },
      all: { type: 'boolean', default: false },
    },
  });
  const format = values.format as ExportFormat | undefined;
  if (!values.output || !values['build-id'] || !format || !EXPORT_FORMATS.includes(format)) throw new CliError(EXPORT_USAGE, EXIT.usage);
  // Still read, to answer with the build-time way (config holdout) instead of "unknown option".
  const fraction = values.holdout === undefined ? undefined : Number(values.holdout);
  if (fraction !== undefined && !(fraction > 0 && fraction < 1)) throw new CliError(`--holdout must be a fraction in (0, 1), got '${values.holdout}'`, EXIT.usage);
  const store = openStore(values.output, s3FromEnv());
  const layout = buildLayout(values['build-id']);
  const summary = await (
    format === 'trl' ? exportTrl(store, layout) : format === 'mmifeval' ? exportMmifeval(store, layout, { fraction, all: values.all }) : exportRl(store, layout, format)
  ).catch((err: unknown) => {
    if (err instanceof NoCommittedShardError) throw new CliError(err.message, EXIT.notFound);
    throw err instanceof ReservedSplitError || err instanceof NoReservedSplitError || err instanceof MultiturnExportError ? new CliError(err.message, EXIT.usage) : err;
  });
  console.log(`${summary.format}: ${summary.rows} rows`);
  for (const file of summary.files) console.log(`  ${store.root.replace(/\/+$/, '')}/${file}`);
  return EXIT.ok;
}
