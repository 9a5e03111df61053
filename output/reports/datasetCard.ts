/**
 * The dataset card: `README.md` at the dataset root, with the Hugging Face YAML front matter
 * (https://github.com/huggingface/hub-docs/blob/main/datasetcard.md, the `configs:` field of
 * https://huggingface.co/docs/hub/datasets-manual-configuration) that lets
 * `datasets.load_dataset(<dataset root>)` find the `instruct` and `dpo` configs, and a body that says
 * what the data is, how it was built, what it holds and how good it is (from the build report and
 * the quality report). Pure: the caller reads its inputs and writes the text.
 */
import type { BuildConfig } from '../../config/buildConfig.js';
import { chatSettings } from '../../config/generationConfig.js';
import { sourceNames } from '../../config/sourceConfig.js';
import { SOURCE_TYPES } from '../../sources/registry.js';
import type { BuildReport } from '../contracts/buildReport.js';
import { countTerms } from './sourceAccounting.js';
import type { QualityReport, LengthStats } from './qualityReport.js';
import { formatCost, formatPricedBy } from './costSummary.js';
import { replicaSharesLine } from '../../domain/replicaShares.js';
import { PARQUET_COLUMNS } from '../formats/parquet.js';

/** The configs `load_dataset(<root>, name)` offers, and where their Parquet shards are (relative to the root). */
const CARD_CONFIGS = [
  { name: 'instruct', path: 'instruct/parquet/*.parquet', what: 'MM-IFInstruct: image, instruction with constraints, answer (SFT)' },
  { name: 'dpo', path: 'dpo/parquet/*.parquet', what: 'MM-IFDPO: the same prompts with a chosen and a rejected answer (preference pairs)' },
] as const;

/** The main columns of each config; every name here is a column of the written Parquet (checked by the tests). */
export const CARD_FEATURES: Record<(typeof CARD_CONFIGS)[number]['name'], Array<[column: string, type: string, meaning: string]>> = {
  instruct: [
    ['id', 'string', 'stable sample id'],
    ['source', 'string', `source dataset type (${SOURCE_TYPES.join(', ')})`],
    ['source_id', 'string', "the record's id in its source"],
    ['license', 'string', "the source's licence note"],
    ['image', 'Image', 'the normalized RGB JPEG'],
    ['instruction', 'string', 'the task, generated (Fig. 14) or refined from the source question'],
    ['constraints', 'list of struct', 'type, value, verification method, verifier calls (JSON text)'],
    ['prompt', 'string', 'the user turn for training (`prompt_template` form)'],
    ['answer', 'string', 'the answer that passed the post-filter'],
    ['verdicts', 'list of struct', 'one per constraint: method, passed (the reference verdict), vacuous (rule verdicts: nothing to check), detail'],
    ['pass_rate', 'float64', 'share of constraints passed (vacuous passes not credited under verification.vacuous "fail")'],
    ['simulated', 'bool', 'true when a model reply came from the mmif simulator'],
    ['vision_dependent', 'bool', 'false when the sample was answered as well without its image (quality.visionDependence); null when not checked'],
  ],
  dpo: [
    ['id', 'string', 'pair id (`<sample id>-dpo`)'],
    ['source', 'string', 'source dataset type'],
    ['source_id', 'string', "the record's id in its source"],
    ['license', 'string', "the source's licence note"],
    ['image', 'Image', 'the normalized RGB JPEG'],
    ['prompt', 'string', 'the user turn, with every constraint'],
    ['constraints', 'list of struct', 'every constraint of the prompt, as in `instruct`'],
    ['verdicts', 'list of struct', 'verdicts of the chosen answer, one per constraint'],
    ['chosen', 'string', 'answer generated with every constraint'],
    ['rejected', 'string', 'answer generated under the DPO strategy'],
    ['dropped_constraints', 'list of struct', 'constraints the rejected answer was generated without'],
    ['strategy', 'string', 'drop33, drop66, drop100 or no_image'],
    ['rejected_verdicts', 'list of struct', 'verdicts of the rejected answer'],
    ['pair_validation', 'string', 'the pair rules it was kept under (`dpo.validate`: strict or paper)'],
    ['simulated', 'bool', 'true when a model reply came from the mmif simulator'],
  ],
};

/** The columns of a config's Parquet files its table leaves out: named under it, so the card accounts for every column. */
const otherColumns = (name: string, features: ReadonlyArray<readonly [string, string, string]>): string[] => {
  const all: readonly string[] = name === 'instruct' ? PARQUET_COLUMNS.instruct : name === 'dpo' ? PARQUET_COLUMNS.dpo : [];
  return all.filter((column) => !features.some(([named]) => named === column));
};

/** The provenance columns of both chat configs (CHAT_PROVENANCE_COLUMNS), as the single-turn configs have them. */
const CHAT_PROVENANCE = [
  ['source', 'string', 'the source the chat came from'],
  ['source_id', 'string', "the image's id in its source"],
  ['license', 'string', "the source's licence note"],
  ['image_sha256', 'string', 'SHA-256 of the image bytes'],
  ['simulated', 'bool', 'true when any answer came from the bundled simulator'],
] as const;

/** A multiturn build's configs (output/formats/chatFormats.ts): chats and turn-level pairs. */
export const CHAT_CARD_CONFIGS = [
  {
    name: 'chat',
    path: 'chat/parquet/*.parquet',
    what: 'multi-turn chats (seed 002): questions with global instructions added at some turns, every answer verified against every instruction in force (SFT)',
    features: [
      ['id', 'string', 'stable sample id'],
      ['image', 'Image', 'the normalized RGB JPEG'],
      ['system', 'string', 'the system message the answers were generated under'],
      ['conversations', 'list of struct', "from (human/gpt) and value: each turn's instruction (if added there) and question, then its answer"],
      ['metadata', 'string', 'JSON: instructions with their turn and verifier calls, per-turn verdicts and PIF, models, source, licence'],
      ...CHAT_PROVENANCE,
    ],
  },
  {
    name: 'chat_dpo',
    path: 'chat-dpo/parquet/*.parquet',
    what: 'turn-level pairs: the chat up to a turn, its chosen answer, and one generated with an earlier instruction left out of the context',
    features: [
      ['id', 'string', 'pair id (`<sample id>-t<turn>-dpo`)'],
      ['image', 'Image', 'the normalized RGB JPEG'],
      ['system', 'string', 'the system message'],
      ['conversations', 'list of struct', 'the chat up to the turn, ending with its human turn'],
      ['chosen', 'struct', 'the kept answer (from: gpt)'],
      ['rejected', 'struct', 'the answer made without the forgotten instruction (from: gpt)'],
      ['metadata', 'string', 'JSON: turn, forgotten turn and instruction, chosen and rejected verdicts and PIF'],
      ...CHAT_PROVENANCE,
    ],
  },
] as const;

/** The configs a build's card names, with their columns. */
function cardConfigs(config: BuildConfig | undefined): ReadonlyArray<{ name: string; path: string; what: string; features: ReadonlyArray<readonly [string, string, string]> }> {
  return config?.mode === 'multiturn' ? CHAT_CARD_CONFIGS : CARD_CONFIGS.map((c) => ({ ...c, features: CARD_FEATURES[c.name] }));
}

interface CardInput {
  report: BuildReport;
  quality: QualityReport;
  config?: BuildConfig;
}

export function datasetCard({ report, quality, config }: CardInput): string {
  return `${frontMatter(report, config)}\n${body(report, quality, config)}`;
}

/** The HF size category of the larger config. */
export function sizeCategory(n: number): string {
  const bounds: Array<[number, string]> = [
    [1e3, 'n<1K'],
    [1e4, '1K<n<10K'],
    [1e5, '10K<n<100K'],
    [1e6, '100K<n<1M'],
    [1e7, '1M<n<10M'],
  ];
  return bounds.find(([limit]) => n < limit)?.[1] ?? '10M<n<100M';
}

function frontMatter(report: BuildReport, config: BuildConfig | undefined): string {
  const q = JSON.stringify; // a JSON string is a valid YAML double-quoted scalar
  const configs = cardConfigs(config)
    .map((c, i) => `- config_name: ${c.name}\n${i === 0 ? '  default: true\n' : ''}  data_files:\n  - split: train\n    path: ${q(c.path)}`)
    .join('\n');
  const sources = [...new Set((config?.sources ?? []).map((s) => s.type))];
  return [
    '---',
    `pretty_name: ${q(`MM-IF ${report.buildId}`)}`,
    'language:\n- en',
    // Records mix sources under different licences: the card's Licences section lists them.
    'license: other',
    'license_name: mixed-source-licenses',
    'task_categories:\n- image-text-to-text\n- visual-question-answering',
    `size_categories:\n- ${sizeCategory(Math.max(report.counts.instruct, report.counts.dpo))}`,
    'annotations_creators:\n- machine-generated',
    `tags:\n${['multimodal', 'instruction-following', 'dpo', 'synthetic', 'mm-ifengine', ...(report.simulated ? ['simulated'] : []), ...sources].map((t) => `- ${t}`).join('\n')}`,
    `configs:\n${configs}`,
    '---',
    '',
  ].join('\n');
}

function body(report: BuildReport, quality: QualityReport, config: BuildConfig | undefined): string {
  const parts: string[] = [`# MM-IF dataset \`${report.buildId}\``, ''];
  if (report.simulated) {
    parts.push(
      '> **SIMULATED DATA — NOT FOR TRAINING.** Model replies in this build came from the mmif simulator',
      '> (an offline fake of a VLM endpoint), not from a real model. Records carry `simulated: true`.',
      '> It exists to test the pipeline and the tools that read its output.',
      '',
    );
  }
  const multiturn = config?.mode === 'multiturn';
  const [sftConfig, dpoConfig] = cardConfigs(config);
  parts.push(
    `Multimodal instruction-following data made by mmif-engine (an implementation of MM-IFEngine): ` +
      (multiturn
        ? `**${report.counts.instruct}** multi-turn chats (SFT) and **${report.counts.dpo}** turn-level preference pairs `
        : `**${report.counts.instruct}** MM-IFInstruct records (SFT) and **${report.counts.dpo}** MM-IFDPO preference pairs `) +
      `from ${report.counts.planned} planned samples.`,
    '',
    '## Loading',
    '',
    '```python',
    'from datasets import load_dataset',
    `sft = load_dataset("<this folder or repo id>", "${sftConfig!.name}", split="train")   # the default config`,
    `dpo = load_dataset("<this folder or repo id>", "${dpoConfig!.name}", split="train")`,
    '```',
    '',
    multiturn
      ? 'LLaMA-Factory: point `dataset_dir` at this folder (`dataset_info.json` names `mmif_chat` and `mmif_chat_dpo`, in `chat*/sharegpt/`).'
      : 'LLaMA-Factory: point `dataset_dir` at this folder (`dataset_info.json` names `mmif_instruct` and `mmif_dpo`, in `*/sharegpt/`).',
    '',
    '## Configs and features',
    '',
    ...cardConfigs(config).flatMap((c) => {
      const more = otherColumns(c.name, c.features);
      return [
        `**\`${c.name}\`** (\`${c.path}\`): ${c.what}.`,
        '',
        '| column | type | meaning |',
        '|---|---|---|',
        ...c.features.map(([column, type, meaning]) => `| \`${column}\` | ${type} | ${meaning} |`),
        '',
        ...(more.length
          ? [`Also in every row: ${more.map((column) => `\`${column}\``).join(', ')} (provenance, prompts as sent, attempts; see mmif-engine's docs/outputs.md).`, '']
          : []),
      ];
    }),
    ...sourcesSection(quality, config),
    ...buildSection(report, quality, config),
    ...costSection(report),
    ...compositionSection(quality, multiturn),
    ...acceptanceSection(report, quality, multiturn),
    ...(multiturn ? multiturnSection(quality) : qualitySection(quality)),
  );
  return parts.join('\n');
}

function sourcesSection(quality: QualityReport, config: BuildConfig | undefined): string[] {
  const configured = config?.sources ?? [];
  const names = sourceNames(configured);
  const notes = new Map<string, string>(configured.map((s, i) => [names[i]!, s.licenseNote]));
  const types = [...new Set([...notes.keys(), ...Object.keys(quality.composition.bySource)])];
  return [
    '## Sources and licences',
    '',
    "Each record keeps its source and licence note (`source`, `license`). The images belong to their owners; check each source's terms before use.",
    '',
    config?.mode === 'multiturn'
      ? '| source | chats (SFT) | turn-level pairs | rejected chats | rejected pairs | licence note |'
      : '| source | SFT records | DPO pairs | rejected samples | rejected pairs | licence note |',
    '|---|---|---|---|---|---|',
    ...types.map((t) => {
      const c = quality.composition.bySource[t] ?? { instruct: 0, dpo: 0, rejectedSamples: 0, rejectedPairs: 0 };
      return `| ${t} | ${c.instruct} | ${c.dpo} | ${c.rejectedSamples} | ${c.rejectedPairs} | ${cell(notes.get(t) ?? 'unknown')} |`;
    }),
    '',
  ];
}

function buildSection(report: BuildReport, quality: QualityReport, config: BuildConfig | undefined): string[] {
  const lines = [
    '## How it was built',
    '',
    `- Config fingerprint: \`${report.configFingerprint}\``,
    `- Seed: ${config ? config.seed : 'unknown'}`,
    `- Shards: ${report.shards.committed} committed of ${report.shards.planned} planned, ${report.shards.failed} failed`,
    `- Simulated: ${report.simulated ? '**yes**' : 'no'}`,
    ...(report.replicas ? [`- Replicas (share of requests, image-affine routing): ${replicaSharesLine(report.replicas)}`] : []),
  ];
  if (config?.mode === 'multiturn') {
    const chat = chatSettings(config);
    lines.push(
      `- Chats: ${chat.turns} question turns each, up to ${chat.maxInstructions} global instructions (seed 002), all rule-checked`,
      `- Turn filter: a turn's answer is kept when its PIF reaches ${chat.pifThreshold}, up to ${config.verification.maxRegenerations} regenerations, else the chat is rejected`,
      '- Turn-level pairs: the rejected answer is generated with one earlier instruction left out of the context; kept under the pair rules (it must fail that instruction, the chosen answer may lose on none)',
    );
  } else if (config) {
    lines.push(
      `- Post-filter: at least ${config.verification.passThreshold} of the constraints passed, up to ${config.verification.maxRegenerations} regenerations`,
      `- DPO strategies: ${config.dpo.strategies.join(', ')} (validation: ${config.dpo.validate})`,
      `- Training prompt template: ${config.training.promptTemplate}`,
      `- Judge-vs-rule sample: ${config.verification.judgeAgreementSample} of rule-checked constraints`,
    );
  }
  if (config) {
    lines.push(
      `- Vacuous rule passes: ${config.verification.vacuous === 'fail' ? 'not credited (fail closed)' : 'counted (reference semantics)'}`,
      ...(config.holdout ? [`- Held out for evaluation: ${config.holdout.fraction} of the images (seeded), in no training file`] : []),
      `- Decontamination: ${
        config.decontaminate?.length
          ? `against ${config.decontaminate.map((s) => `${s.name} (${s.format})`).join(', ')}; ${quality.rejections.byReason.contaminated ?? 0} samples rejected as contaminated (images: identical bytes, or the same picture confirmed pixel by pixel after a perceptual-hash candidate; instructions: a shared 13-gram, or a short question together with its image); ${quality.nearMisses?.length ?? 0} near misses kept and listed in quality.json (\`nearMisses\`)`
          : 'none (no `decontaminate` sets configured)'
      }`,
    );
  }
  lines.push(
    '',
    '| stage | model |',
    '|---|---|',
    ...Object.entries(report.models)
      .sort()
      .map(([stage, model]) => `| ${stage} | \`${model}\` |`),
    '',
  );
  return lines;
}

function costSection(report: BuildReport): string[] {
  const lines = [...formatCost(report.cost, report.mode), ...(report.prices ? [formatPricedBy(report.prices)] : [])];
  return ['## Cost', '', ...lines.map((line) => `- ${line}`), ''];
}

function compositionSection(quality: QualityReport, multiturn: boolean): string[] {
  const c = quality.composition;
  const counts = (title: string, tally: Record<string, number>) => [
    `| ${title} | constraints |`,
    '|---|---|',
    ...Object.entries(tally)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .map(([k, n]) => `| ${k} | ${n} |`),
    '',
  ];
  return [
    multiturn ? '## Composition (chats: their global instructions)' : '## Composition (SFT records)',
    '',
    `${multiturn ? 'Global instructions per chat' : 'Constraints per record'}: ${summary(c.constraintsPerRecord)}.`,
    '',
    ...counts('constraint type', c.constraintTypes),
    ...counts('category (Table 5)', c.categories),
    ...counts('WildIFEval class', c.wildIfEvalClasses),
  ];
}

function acceptanceSection(report: BuildReport, quality: QualityReport, multiturn: boolean): string[] {
  const n = report.counts;
  const sorted = (tally: Record<string, number>) => Object.entries(tally).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const heldOut = report.heldOut?.instruct ?? 0;
  const uncommitted = report.accounting.reduce((sum, a) => sum + a.uncommitted, 0);
  const [records, pairs] = multiturn ? ['chats', 'Turn-level pairs'] : ['SFT records', 'DPO pairs'];
  return [
    '## Acceptance and rejection',
    '',
    `- Samples planned: ${n.planned} = accepted as ${records} ${n.instruct} (${pct(n.instruct, n.planned)}) + held out for evaluation ${heldOut} + rejected ${n.rejectedSamples}` +
      (uncommitted ? ` + in shards not committed ${uncommitted}` : ''),
    `- ${pairs} kept: ${n.dpo}; discarded: ${n.rejectedPairs} (${pct(n.dpo, n.dpo + n.rejectedPairs)} kept)${report.heldOut?.dpo ? `; dropped with held-out samples: ${report.heldOut.dpo}` : ''}`,
    `- Answers that needed a regeneration: ${report.verification.regeneratedAnswers}`,
    '',
    ...accountingTable(report),
    '| rejected at stage | count |',
    '|---|---|',
    ...sorted(quality.rejections.byStage).map(([k, v]) => `| ${k} | ${v} |`),
    '',
    '| rejection reason | count |',
    '|---|---|',
    ...sorted(quality.rejections.byReason).map(([k, v]) => `| ${k} | ${v} |`),
    '',
  ];
}

/** Where the full figures are, and what share of the shards they cover. */
const qualityHeader = (quality: QualityReport): string[] => [
  '## Quality report',
  '',
  `Full figures: \`quality.json\` (${quality.coverage.shardsWithStats} of ${quality.coverage.committedShards} committed shards carry quality stats).`,
  '',
];

function qualitySection(quality: QualityReport): string[] {
  const agreement = quality.judgeAgreement;
  return [
    ...qualityHeader(quality),
    '### Pass rate per constraint type, first answer vs final answer',
    '',
    '| type | category | first answer | final answer |',
    '|---|---|---|---|',
    ...Object.entries(quality.passRates).map(
      ([type, p]) => `| ${type} | ${p.category} | ${fraction(p.firstAnswer.passed, p.firstAnswer.total)} | ${fraction(p.finalAnswer.passed, p.finalAnswer.total)} |`,
    ),
    '',
    '### Judge vs rule',
    '',
    'A seeded sample of rule-checked constraints is also scored by the direct judge (the rule still decides). ' +
      '"judge passes rule fails" is the error that lets an answer through the post-filter; the advice says, for constraints ' +
      `of the type that get no rule, whether to keep the judge (≤ ${agreement.thresholds.keepJudgeAtMost}), add a second judge ` +
      `(≤ ${agreement.thresholds.secondJudgeAtMost}) or require a rule (above), given at least ${agreement.thresholds.minRuleFailures} rule failures.`,
    '',
    '| type | audited | agreement | kappa | judge passes rule fails | unscored | advice |',
    '|---|---|---|---|---|---|---|',
    ...Object.entries({ ...agreement.byType, '**all**': agreement.total }).map(
      ([type, a]) =>
        `| ${type} | ${a.audited} | ${num(a.agreement)} | ${num(a.kappa)} | ${a.judgePassedRuleFailed}/${a.judgePassedRuleFailed + a.bothFailed} (${num(a.judgePassesRuleFailsRate)}) | ${a.unscored} | ${a.advice} |`,
    ),
    '',
    ...vacuousTable(quality),
    ...visionTable(quality),
    '### DPO strategies',
    '',
    '| strategy | kept | discarded | share of kept pairs | discarded by reason |',
    '|---|---|---|---|---|',
    ...Object.entries(quality.dpo.strategyMix).map(
      ([s, m]) =>
        `| ${s} | ${m.kept} | ${m.discarded} | ${num(m.share)} | ${
          Object.entries(m.discardedByReason)
            .map(([r, n]) => `${r}: ${n}`)
            .join(', ') || '-'
        } |`,
    ),
    '',
    'Rejected answers failing the constraints at stake (dropped ones; all under no_image):',
    '',
    '| strategy | type | failed / verified |',
    '|---|---|---|',
    ...Object.entries(quality.dpo.atStakeFailureRates).flatMap(([s, byType]) => Object.entries(byType).map(([type, t]) => `| ${s} | ${type} | ${fraction(t.failed, t.total)} |`)),
    '',
    '### Lengths (words)',
    '',
    '| text | distribution |',
    '|---|---|',
    `| SFT answers | ${lengths(quality.lengths.answerWords)} |`,
    `| DPO chosen | ${lengths(quality.lengths.chosenWords)} |`,
    `| DPO rejected | ${lengths(quality.lengths.rejectedWords)} |`,
    '',
  ];
}

/**
 * Every record each source yielded, accounted for (output/reports/sourceAccounting.ts): the samples planning
 * did not select (not drawn, refused by richness), records the source's filters dropped, damaged
 * units, and what became of the planned ones; the card shows both identities.
 */
function accountingTable(report: BuildReport): string[] {
  const terms = (counts: Record<string, number>) => cell(countTerms(counts));
  return [
    'Every record each source yielded, accounted for (read = planned + not selected + filtered + damaged; planned = accepted + held out + rejected + not committed):',
    '',
    '| source | read | not selected (not drawn, richness) | filtered by the source | damaged | planned | accepted | held out | rejected | not committed | balances |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...report.accounting.map(
      (a) =>
        `| ${a.name} #${a.source} | ${a.read} | ${terms(a.notSelected)} | ${terms(a.filtered)} | ${terms(a.problems)} | ${a.planned} | ${a.accepted} | ${a.heldOut} | ${terms(a.rejected)} | ${a.uncommitted} | ${a.balanced ? 'yes' : '**no**'} |`,
    ),
    '',
  ];
}

/** A multiturn build's quality: per-turn PIF of the data, vacuous verdicts of the kept answers, lengths. */
function multiturnSection(quality: QualityReport): string[] {
  const m = quality.multiturn;
  return [
    ...qualityHeader(quality),
    '### Instruction following of the data, per turn (seed 002)',
    '',
    "PIF: the kept answers' mean share of the instructions in force they follow; PIF-1-1: the share of kept answers " +
      'that follow every one (one kept answer per turn, so N = 1, K = 1). A turn before the first instruction counts as PIF 1 (seed 002, Fig. 5).',
    '',
    `Corpus: ${m?.corpus.turns ?? 0} turns, PIF ${num(m?.corpus.pif ?? null)}, PIF-1-1 ${num(m?.corpus.pif_1_1 ?? null)}.`,
    '',
    "| turn | chats | PIF | PIF-1-1 | instructions in force | answers generated per kept one | pairs kept | rejected answers' PIF |",
    '|---|---|---|---|---|---|---|---|',
    ...(m?.turns ?? []).map(
      (t) => `| ${t.turn} | ${t.chats} | ${num(t.pif)} | ${num(t.pif_1_1)} | ${num(t.instructionsInForce)} | ${num(t.attemptsPerAnswer)} | ${t.pairs} | ${num(t.rejectedPif)} |`,
    ),
    '',
    ...vacuousTable(quality),
    '### Lengths (words)',
    '',
    '| text | distribution |',
    '|---|---|',
    `| kept answers (every turn) | ${lengths(quality.lengths.answerWords)} |`,
    `| pairs: chosen | ${lengths(quality.lengths.chosenWords)} |`,
    `| pairs: rejected | ${lengths(quality.lengths.rejectedWords)} |`,
    '',
  ];
}

/** quality.visionDependence's rates, per source and task type (method: docs/data-quality.md, after VC-IFEval). */
function visionTable(quality: QualityReport): string[] {
  const v = quality.visionDependence;
  if (!v) return [];
  const rows = (title: string, t: Record<string, { checked: number; independent: number; independentRate: number | null }>) => [
    `| ${title} | checked | answered as well without the image | share |`,
    '|---|---|---|---|',
    ...Object.entries(t).map(([k, r]) => `| ${k} | ${r.checked} | ${r.independent} | ${num(r.independentRate)} |`),
    '',
  ];
  return [
    '### Vision dependence',
    '',
    'Each accepted sample was also answered without its image, and the direct judge (shown the image) scored that answer on the ' +
      'image-grounded constraints and against a reference answer (after VC-IFEval, arXiv 2601.03198). A sample answered as well ' +
      `without its image is marked \`vision_dependent: false\`: ${v.total.independent} of ${v.total.checked} (${num(v.total.independentRate)}).`,
    '',
    ...rows('source', v.bySource),
    ...rows('task type', v.byTaskType),
  ];
}

function vacuousTable(quality: QualityReport): string[] {
  return [
    '### Vacuous rule verdicts (final answers)',
    '',
    'A rule verdict is vacuous when the answer holds nothing the constraint speaks of (no number for a precision ' +
      'check, no paragraph, an empty answer): the reference functions pass it. ' +
      (quality.settings.vacuous === 'pass'
        ? 'This build counted such passes (`verification.vacuous: "pass"`, the reference semantics).'
        : 'This build credited none of them (`verification.vacuous: "fail"`): they count neither toward the post-filter nor the pair rule.'),
    '',
    '| type | rule verdicts | vacuous | of which reference passes | rate |',
    '|---|---|---|---|---|',
    ...Object.entries({ ...quality.vacuous.byType, '**all**': quality.vacuous.total }).map(
      ([type, v]) => `| ${type} | ${v.rule} | ${v.vacuous} | ${v.vacuousPasses} | ${num(v.rate)} |`,
    ),
    '',
  ];
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const num = (x: number | null) => (x === null ? '-' : x.toFixed(2));
const pct = (n: number, of: number) => (of === 0 ? '-' : `${((100 * n) / of).toFixed(1)}%`);
const fraction = (n: number, of: number) => `${n}/${of} (${pct(n, of)})`;
function summary(d: QualityReport['composition']['constraintsPerRecord']): string {
  return d ? `min ${d.min}, median ${d.p50}, mean ${d.mean.toFixed(1)}, max ${d.max} (n = ${d.count})` : 'no records';
}
function lengths(l: LengthStats): string {
  return l.summary ? `${summary(l.summary)}; p10 ${l.summary.p10}, p90 ${l.summary.p90}` : 'none';
}
