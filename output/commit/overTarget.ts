/**
 * Trimming a shard to what its source still owes (targets): the shard's samples are in rank order,
 * so keeping the first `caps[kind]` accepted records of each kind keeps the lowest-ranked ones.
 * The others stay out of the data files and are listed as `over-target:` rejects, with what they passed.
 */
import type { Goals } from '../../domain/targets.js';
import type { AssembledSample, RejectRecord } from '../contracts/records.js';

export function trimToCaps(assembled: AssembledSample[], caps: Goals): RejectRecord[] {
  const trimmed: RejectRecord[] = [];
  let instruct = 0;
  let dpo = 0;
  for (const a of assembled) {
    if (a.instruct && caps.instruct !== undefined && ++instruct > caps.instruct) {
      const { id, source, source_id } = a.instruct;
      trimmed.push({ id, source, source_id, kind: 'sample', stage: 'answer', reason: "over-target: the source's instruct target was met by lower-ranked samples", ...a.passed });
      a.instruct = undefined;
    }
    if (a.dpo && caps.dpo !== undefined && ++dpo > caps.dpo) {
      const { sample_id, source, source_id, strategy } = a.dpo;
      trimmed.push({
        id: sample_id,
        source,
        source_id,
        kind: 'pair',
        stage: 'rejected',
        strategy,
        reason: "over-target: the source's dpo target was met by lower-ranked samples",
        ...a.passed,
      });
      a.dpo = undefined;
    }
  }
  return trimmed;
}
