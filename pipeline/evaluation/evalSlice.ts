/**
 * Evaluates items [from, to) of a planned run. Each item's result is written once, when it is
 * complete; an item with a result is skipped, so a retried slice (a killed worker) or a re-run with
 * the same evalId continues where it stopped, and the calls of a half-done item come back from the
 * model-call cache, unpaid.
 */
import { mapLimit } from '../../domain/mapLimit.js';
import { SampleRejection } from '../../domain/rejection.js';
import type { CallRecord } from '../../llm/callRecord.js';
import { getJson, putJson } from '../../storage/objectStore.js';
import { evaluateChat, type EvalTurnResult } from './chatEval.js';
import type { EvalContext } from './evalContext.js';
import { loadEvalImage } from './evalImage.js';
import { loadEvalItems, type EvalItem } from './evalItems.js';
import { answerLine, scoreResponse, type ConstraintVerdict } from './singleTurn.js';

export interface ItemResult {
  id: string;
  /** Why the item could not be evaluated (an unusable image, a refused or unusable reply after every try, a bad verifier call). */
  rejected?: string;
  /** The rejection came from a model call (refused, or unusable after every try): a re-run tries the item again. */
  modelCall?: boolean;
  /** Single-turn: the N responses and each one's verdict per constraint. */
  responses?: string[];
  verdicts?: ConstraintVerdict[][];
  /** Multi-turn: every turn. */
  turns?: EvalTurnResult[];
  calls: CallRecord[];
}

export async function evaluateSlice(ctx: EvalContext, from: number, to: number): Promise<{ evaluated: number; skipped: number }> {
  const items = (await loadEvalItems(ctx)).slice(from, to);
  let skipped = 0;
  await mapLimit(items, ctx.config.llm.concurrency, async (item, i) => {
    const key = ctx.layout.result(from + i);
    const done = await getJson<ItemResult>(ctx.out, key);
    if (done && !done.modelCall) {
      skipped += 1;
      return;
    }
    await putJson(ctx.out, key, await evaluateItem(ctx, item));
  });
  return { evaluated: items.length - skipped, skipped };
}

async function evaluateItem(ctx: EvalContext, item: EvalItem): Promise<ItemResult> {
  const calls: CallRecord[] = [];
  const id = item.kind === 'sample' ? item.main.id : item.chat.id;
  try {
    if (item.kind === 'chat') {
      const image = await loadEvalImage(ctx.data, `chat ${id}`, item.chat.image);
      return { id, turns: await evaluateChat(ctx, item.chat, image, calls), calls };
    }
    const image = await loadEvalImage(ctx.data, `sample ${id}`, item.main.image);
    const responses: string[] = [];
    const verdicts: ConstraintVerdict[][] = [];
    for (let seed = 0; seed < ctx.config.responses; seed++) {
      const response = await answerLine(ctx, item.main, image, seed, calls);
      responses.push(response);
      verdicts.push(await scoreResponse(ctx, item, response, image, seed, calls));
    }
    return { id, responses, verdicts, calls };
  } catch (err) {
    if (!(err instanceof SampleRejection)) throw err;
    return { id, rejected: err.reason, ...(err.details?.modelCall ? { modelCall: true } : {}), calls };
  }
}
