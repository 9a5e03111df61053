/**
 * A shard's contribution to the quality report (quality.json, the dataset card): verdicts per
 * constraint type on each sample's first answer and on its final one, the judge-vs-rule sample,
 * how often rejected answers failed the constraints at stake, answer lengths, and what the
 * accepted records hold. Pure: computed from the samples' stage states and records when the shard
 * commits, stored in its manifest, added up over manifests when the build finishes.
 */
import { addCounts } from '../../domain/counts.js';
import type { Verdict } from '../../domain/verdict.js';
import type { ChatPairRecord, ChatRecord, DpoRecord, InstructRecord, RejectRecord, SampleStates } from '../contracts/records.js';
import type { AgreementCount, ShardQuality, TurnTally, VacuousCount, VisionTally } from '../contracts/quality.js';
import { VISION_INDEPENDENT } from '../../pipeline/stages/answer/visionDependence.js';

/** Vision-dependence tallies of a shard's samples, or undefined when none was checked. */
export function visionTallies(samples: ReadonlyArray<{ source: string; states: SampleStates }>): ShardQuality['visionDependence'] {
  const bySource: Record<string, VisionTally> = {};
  const byTaskType: Record<string, VisionTally> = {};
  for (const { source, states } of samples) {
    const answer = states.answer;
    const checked = answer?.status === 'ok' ? answer.result.visionDependence : undefined;
    const filtered = answer?.status === 'rejected' && answer.reason.startsWith(`answer: ${VISION_INDEPENDENT}:`);
    if (!checked && !filtered) continue;
    const independent = filtered || checked?.dependent === false;
    const kind = states.constraints?.status === 'ok' ? states.constraints.result.instructionKind : 'unknown';
    for (const tally of [(bySource[source] ??= { checked: 0, independent: 0 }), (byTaskType[kind] ??= { checked: 0, independent: 0 })]) {
      tally.checked += 1;
      if (independent) tally.independent += 1;
    }
  }
  return Object.keys(bySource).length > 0 ? { bySource, byTaskType } : undefined;
}

export const emptyAgreement = (): AgreementCount => ({ audited: 0, bothPassed: 0, bothFailed: 0, judgePassedRuleFailed: 0, judgeFailedRulePassed: 0, unscored: 0 });

export function shardQuality(
  samples: readonly SampleStates[],
  written: { instruct: readonly InstructRecord[]; dpo: readonly DpoRecord[]; rejects: readonly RejectRecord[] },
): ShardQuality {
  const quality: ShardQuality = {
    passRates: {},
    judgeAgreement: {},
    vacuous: {},
    atStakeFailures: {},
    lengths: {
      answerWords: written.instruct.map((r) => wordCount(r.answer)),
      chosenWords: written.dpo.map((r) => wordCount(r.chosen)),
      rejectedWords: written.dpo.map((r) => wordCount(r.rejected)),
    },
    composition: composition(written),
  };
  for (const states of samples) {
    const image = states.image?.status === 'ok' ? states.image.result : undefined;
    for (const miss of image?.nearMisses ?? []) (quality.nearMisses ??= []).push({ image: image!.sha256, ...miss });
    const answer = answerVerdicts(states);
    if (answer) {
      for (const v of answer.first) count(quality.passRates, v, 'firstAnswer');
      for (const v of answer.final) count(quality.passRates, v, 'finalAnswer');
      for (const v of answer.final) countVacuous(quality.vacuous!, v);
      addAgreement(quality.judgeAgreement, answer.first);
      if (answer.final !== answer.first) addAgreement(quality.judgeAgreement, answer.final);
    }
    const rejected = rejectedVerdicts(states);
    if (rejected) {
      addAgreement(quality.judgeAgreement, rejected.verdicts);
      const byType = (quality.atStakeFailures[rejected.strategy] ??= {});
      const stake = new Set(rejected.atStake);
      for (const v of rejected.verdicts.filter((v) => stake.has(v.index))) {
        const tally = (byType[v.type] ??= { failed: 0, total: 0 });
        tally.total += 1;
        if (!v.passed) tally.failed += 1;
      }
    }
  }
  return quality;
}

export function wordCount(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** The first and the final answer's verdicts of a sample that reached verification; one list when it was not regenerated. */
function answerVerdicts(states: SampleStates): { first: Verdict[]; final: Verdict[] } | undefined {
  const state = states.answer;
  if (!state) return undefined;
  const [final, first] = state.status === 'ok' ? [state.result.verdicts, state.result.firstVerdicts] : [state.details?.verdicts, state.details?.firstVerdicts];
  if (!final) return undefined;
  return { first: first ?? final, final };
}

/** The last rejected answer's verdicts, with its strategy and the constraints at stake (kept or discarded pair). */
function rejectedVerdicts(states: SampleStates): { verdicts: Verdict[]; strategy: string; atStake: number[] } | undefined {
  const state = states.rejected;
  if (!state) return undefined;
  if (state.status === 'ok') return { verdicts: state.result.verdicts, strategy: state.result.strategy, atStake: state.result.atStake };
  const { verdicts, strategy, atStake } = state.details ?? {};
  return verdicts && strategy && atStake ? { verdicts, strategy, atStake } : undefined;
}

function count(into: ShardQuality['passRates'], v: Verdict, which: 'firstAnswer' | 'finalAnswer'): void {
  const entry = (into[v.type] ??= { firstAnswer: { passed: 0, total: 0 }, finalAnswer: { passed: 0, total: 0 } });
  entry[which].total += 1;
  if (v.passed) entry[which].passed += 1;
}

function countVacuous(into: Record<string, VacuousCount>, v: Verdict): void {
  if (v.method !== 'rule' || v.vacuous === undefined) return;
  const tally = (into[v.type] ??= { rule: 0, vacuous: 0, vacuousPasses: 0 });
  tally.rule += 1;
  if (v.vacuous) tally.vacuous += 1;
  if (v.vacuous && v.passed) tally.vacuousPasses += 1;
}

function addAgreement(into: Record<string, AgreementCount>, verdicts: readonly Verdict[]): void {
  for (const v of verdicts) {
    if (v.method !== 'rule' || !v.judgeAudit) continue;
    const tally = (into[v.type] ??= emptyAgreement());
    tally.audited += 1;
    const judge = v.judgeAudit.passed;
    if (judge === null) tally.unscored += 1;
    else if (judge && v.passed) tally.bothPassed += 1;
    else if (!judge && !v.passed) tally.bothFailed += 1;
    else if (judge) tally.judgePassedRuleFailed += 1;
    else tally.judgeFailedRulePassed += 1;
  }
}

function composition(written: { instruct: readonly InstructRecord[]; dpo: readonly DpoRecord[]; rejects: readonly RejectRecord[] }): ShardQuality['composition'] {
  const bySource: ShardQuality['composition']['bySource'] = {};
  const of = (source: string) => (bySource[source] ??= { instruct: 0, dpo: 0, rejectedSamples: 0, rejectedPairs: 0 });
  for (const r of written.instruct) of(r.source).instruct += 1;
  for (const r of written.dpo) of(r.source).dpo += 1;
  for (const r of written.rejects) of(r.source)[r.kind === 'sample' ? 'rejectedSamples' : 'rejectedPairs'] += 1;
  const constraintTypes: Record<string, number> = {};
  for (const r of written.instruct) for (const c of r.constraints) addCounts(constraintTypes, { [c.type]: 1 });
  return { bySource, constraintTypes, constraintsPerRecord: written.instruct.map((r) => r.constraints.length) };
}

/**
 * A multiturn shard's stats: composition (chats and turn-level pairs per source, global instructions
 * per type), lengths (kept answers, chosen and rejected pair answers), vacuous verdicts of the kept
 * answers, and the per-turn tallies behind the quality report's per-turn PIF.
 */
export function chatQuality(chats: readonly ChatRecord[], pairs: readonly ChatPairRecord[], rejects: readonly RejectRecord[]): ShardQuality {
  const bySource: ShardQuality['composition']['bySource'] = {};
  const of = (source: string) => (bySource[source] ??= { instruct: 0, dpo: 0, rejectedSamples: 0, rejectedPairs: 0 });
  for (const c of chats) of(c.source).instruct += 1;
  for (const p of pairs) of(p.source).dpo += 1;
  for (const r of rejects) of(r.source)[r.kind === 'sample' ? 'rejectedSamples' : 'rejectedPairs'] += 1;
  const constraintTypes: Record<string, number> = {};
  for (const c of chats) for (const i of c.instructions) addCounts(constraintTypes, { [i.type]: 1 });
  const vacuous: Record<string, VacuousCount> = {};
  const turns: Record<string, TurnTally> = {};
  const at = (turn: number) => (turns[String(turn)] ??= { answers: 0, pifSum: 0, followsAll: 0, attempts: 0, inForce: 0, pairs: 0, rejectedPifSum: 0 });
  for (const c of chats) {
    for (const t of c.turns) {
      const tally = at(t.turn);
      tally.answers += 1;
      tally.pifSum += t.pif;
      if (t.pif === 1) tally.followsAll += 1;
      tally.attempts += t.attempts;
      tally.inForce += t.verdicts.length;
      for (const v of t.verdicts) countVacuous(vacuous, v);
    }
  }
  for (const p of pairs) {
    at(p.turn).pairs += 1;
    at(p.turn).rejectedPifSum += p.rejected_pif;
  }
  return {
    passRates: {},
    judgeAgreement: {},
    vacuous,
    atStakeFailures: {},
    lengths: {
      answerWords: chats.flatMap((c) => c.turns.map((t) => wordCount(t.answer))),
      chosenWords: pairs.map((p) => wordCount(p.chosen)),
      rejectedWords: pairs.map((p) => wordCount(p.rejected)),
    },
    composition: { bySource, constraintTypes, constraintsPerRecord: chats.map((c) => c.instructions.length) },
    turns,
  };
}
