/**
 * The held-out split a build reserves for evaluation (`holdout.fraction`): an accepted sample whose
 * normalized image is drawn is kept out of the training data. The draw is a function of the build
 * seed and the image's sha256 only, so every sample of one image (ChartQA's questions per chart,
 * MultiUI's tasks per page, one picture under two source paths) falls on the same side: no image is
 * in both the training data and the eval split. Its SFT record (or chat) goes to the eval split; its
 * DPO pair (or turn-level pairs) is dropped (the same image).
 */
import { isHeldOutImage } from '../formats/mmifeval.js';
import type { AssembledSample, InstructRecord } from '../contracts/records.js';

export interface HoldoutSettings {
  seed: number;
  fraction: number;
}

export interface HeldOutShare {
  /** SFT records moved to the eval split. */
  instruct: InstructRecord[];
  /** DPO pairs left out of the training data because their image is held out. */
  dpo: number;
}

/** Takes the held-out samples' records out of `assembled` (in place) and returns them. */
export function reserveHeldOut(assembled: AssembledSample[], holdout: HoldoutSettings): HeldOutShare {
  const share: HeldOutShare = { instruct: [], dpo: 0 };
  for (const a of assembled) {
    const image = a.instruct?.image_sha256 ?? a.dpo?.image_sha256;
    if (image === undefined || !isHeldOutImage(holdout.seed, image, holdout.fraction)) continue;
    if (a.instruct) share.instruct.push(a.instruct);
    if (a.dpo) share.dpo += 1;
    a.instruct = undefined;
    a.dpo = undefined;
  }
  return share;
}

/** A multiturn shard's split: chats whose image is held out go to the eval split, their turn-level pairs nowhere. */
export function splitHeldOutChats<C extends { image_sha256: string }, P extends { image_sha256: string }>(
  chats: readonly C[],
  pairs: readonly P[],
  holdout: HoldoutSettings,
): { chats: C[]; pairs: P[]; heldOut: C[]; droppedPairs: number } {
  const held = (r: { image_sha256: string }) => isHeldOutImage(holdout.seed, r.image_sha256, holdout.fraction);
  const kept = pairs.filter((p) => !held(p));
  return { chats: chats.filter((c) => !held(c)), pairs: kept, heldOut: chats.filter(held), droppedPairs: pairs.length - kept.length };
}
