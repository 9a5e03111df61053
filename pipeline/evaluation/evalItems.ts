/**
 * What an evaluation runs over, planned once and stored (`_work/<evalId>/items.json`), so every
 * slice, retry and resumed run sees the same items in the same order: single-turn, each `main` line
 * of the held-out split (`MM-IFEval/mmif_holdout.jsonl`, written by a build with `holdout` or by
 * `mmif export --format mmifeval`) with its `aux_cmp_gpt` twins; multi-turn, the chats of a file.
 */
import { evalFingerprintMaterial, type EvalConfig } from '../../config/evalConfig.js';
import { sha256Hex } from '../../domain/hashing.js';
import type { MmifevalLine } from '../../domain/mmifevalLine.js';
import { MAX_CHAT_TURNS } from '../../domain/multiturn/limits.js';
import { MMIFEVAL_BENCH } from '../../storage/buildLayout.js';
import { getJson, putJson, type ObjectStore } from '../../storage/objectStore.js';
import { openFileStore } from '../../storage/openStore.js';
import { EvalInputError, type EvalContext } from './evalContext.js';

export interface SampleItem {
  kind: 'sample';
  main: MmifevalLine;
  /** The line's compare-judge twins: the same prompt without one constraint (`del_cons`). */
  aux: MmifevalLine[];
}

export interface ChatInput {
  id: string;
  /** Relative to the dataset root. */
  image: string;
  questions: string[];
}

interface ChatItem {
  kind: 'chat';
  chat: ChatInput;
}

export type EvalItem = SampleItem | ChatItem;

interface StoredEvalConfig {
  fingerprint: string;
  config: EvalConfig;
}

const SPLIT_KEY = `MM-IFEval/${MMIFEVAL_BENCH}.jsonl`;

/**
 * Plans the run, or finds its plan: the same evalId with another config is refused (its stored
 * results answer other questions). Returns how many items there are.
 */
export async function planEvalItems(ctx: EvalContext): Promise<number> {
  const fingerprint = sha256Hex(evalFingerprintMaterial(ctx.config));
  const stored = await getJson<StoredEvalConfig>(ctx.out, ctx.layout.config);
  if (stored && stored.fingerprint !== fingerprint) {
    throw new EvalInputError(
      `eval '${ctx.config.evalId}' already exists in ${ctx.out.root} with a different config: pick another --eval-id (or leave it out: it defaults to one derived from the settings)`,
    );
  }
  const planned = await getJson<EvalItem[]>(ctx.out, ctx.layout.items);
  if (planned) return planned.length;
  const items = ctx.config.chats ? await readChats(ctx.config.chats.uri, ctx.config.s3) : await readSplit(ctx.data);
  await putJson(ctx.out, ctx.layout.items, items);
  if (!stored) await putJson(ctx.out, ctx.layout.config, { fingerprint, config: ctx.config } satisfies StoredEvalConfig);
  return items.length;
}

export async function loadEvalItems(ctx: EvalContext): Promise<EvalItem[]> {
  const items = await getJson<EvalItem[]>(ctx.out, ctx.layout.items);
  if (!items) throw new Error(`eval '${ctx.config.evalId}': no planned items at ${ctx.out.root}/${ctx.layout.items}`);
  return items;
}

const jsonLines = (text: string, where: string): unknown[] =>
  text.split('\n').flatMap((line, i) => {
    if (line.trim() === '') return [];
    try {
      return [JSON.parse(line) as unknown];
    } catch (err) {
      throw new EvalInputError(`${where} line ${i + 1}: not JSON (${(err as Error).message})`);
    }
  });

async function readSplit(data: ObjectStore): Promise<SampleItem[]> {
  const body = await data.get(SPLIT_KEY);
  const where = `${data.root.replace(/\/+$/, '')}/${SPLIT_KEY}`;
  if (!body) throw new EvalInputError(`${where}: not found (build with config holdout, or write it with mmif export --format mmifeval)`);
  const lines = jsonLines(body.toString('utf8'), where) as MmifevalLine[];
  const items: SampleItem[] = lines.filter((l) => l.infer_type === 'main').map((main) => ({ kind: 'sample', main, aux: [] }));
  const byId = new Map(items.map((item) => [item.main.id, item]));
  for (const [i, line] of lines.entries()) {
    if (typeof line.id !== 'string' || typeof line.image !== 'string' || typeof line.instruction !== 'string' || !Array.isArray(line.constraints)) {
      throw new EvalInputError(`${where} line ${i + 1}: expected MM-IFEval's {id, image, instruction, constraints, infer_type}`);
    }
    if (line.infer_type !== 'aux_cmp_gpt') continue;
    const owner = byId.get(line.id);
    if (!owner) throw new EvalInputError(`${where} line ${i + 1}: aux_cmp_gpt line of sample ${line.id}, which has no main line`);
    owner.aux.push(line);
  }
  if (items.length === 0) throw new EvalInputError(`${where}: no main line to evaluate`);
  return items;
}

async function readChats(uri: string, s3: EvalConfig['s3']): Promise<ChatItem[]> {
  const { store, key } = openFileStore(uri, s3);
  const body = await store.get(key);
  if (!body) throw new EvalInputError(`${uri}: not found (mmif eval --multiturn reads the held-out chats a multiturn build with config holdout writes; --chats FILE names others)`);
  return jsonLines(body.toString('utf8'), uri).map((line, i) => {
    const chat = line as Partial<ChatInput>;
    if (
      typeof chat.id !== 'string' ||
      typeof chat.image !== 'string' ||
      !Array.isArray(chat.questions) ||
      chat.questions.length === 0 ||
      !chat.questions.every((q) => typeof q === 'string')
    ) {
      throw new EvalInputError(`${uri} line ${i + 1}: expected {id, image, questions: [string, ...]}`);
    }
    if (chat.questions.length > MAX_CHAT_TURNS)
      throw new EvalInputError(`${uri} line ${i + 1}: chat ${chat.id} has ${chat.questions.length} questions, at most ${MAX_CHAT_TURNS} (seed 002)`);
    return { kind: 'chat', chat: chat as ChatInput };
  });
}
