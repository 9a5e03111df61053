/**
 * `mmif eval --chats FILE`: multi-turn instruction following (seed 002). Each chat (one JSON line
 * `{id, image, questions: [..]}`, image relative to --data) gets a seeded plan of global
 * instructions (pipeline/multiturn/globalInstructions.ts); turn t's user message is the instruction given at t
 * (if any) then the question, the image on the first turn. N responses are sampled per turn; each is
 * verified against every instruction given so far; the chat continues with the first response.
 * `--append-instructions` is the paper's ablation: every instruction given so far is appended to the
 * user turn (as the numbered constraint list the builds use).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type OpenAI from 'openai';
import { mapLimit } from '../../domain/mapLimit.js';
import { SIMULATOR_FINGERPRINT } from '../../llm/modelCaller.js';
import type { ScoredResponse } from '../../domain/multiturn/pif.js';
import { multiturnMarkdown, scoreMultiturn } from '../../output/multiturnEvalReport.js';
import { instructionsInForce } from '../../domain/multiturn/chatPlan.js';
import { planEvalChat } from '../../pipeline/multiturn/globalInstructions.js';
import { scoreTurn } from '../../pipeline/multiturn/turnScore.js';
import { answerPromptText } from '../../prompts/answerPrompt.js';
import { CliError, EXIT } from '../exitCodes.js';
import { imageDataUrl } from './eval.js';

export interface ChatEvalOptions {
  client: OpenAI;
  model: string;
  data: string;
  chatsFile: string;
  samples: number;
  seed: number;
  maxInstructions: number;
  appendInstructions: boolean;
  concurrency: number;
  out: string;
}

interface ChatInput {
  id: string;
  image: string;
  questions: string[];
}

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

export async function runChatEval(o: ChatEvalOptions): Promise<number> {
  const chats = await readChats(o.chatsFile);
  let simulated = false;
  const transcripts: unknown[] = [];
  const perChat = await mapLimit(chats, o.concurrency, async (chat) => {
    const plan = planEvalChat(chat.id, { seed: o.seed, turns: chat.questions.length, maxInstructions: o.maxInstructions });
    const image = await imageDataUrl(o.data, chat);
    const history: Message[] = [];
    const scored: ScoredResponse[][] = Array.from({ length: o.samples }, () => []);
    for (const [i, question] of chat.questions.entries()) {
      const turn = i + 1;
      const inForce = instructionsInForce(plan.instructions, turn);
      const given = inForce.map((x) => x.constraint);
      const now = plan.instructions.find((g) => g.turn === turn)?.constraint;
      const asked = [now?.value, question].filter(Boolean).join(' ');
      const text = o.appendInstructions && given.length > 0 ? answerPromptText(asked, given) : asked;
      history.push({ role: 'user', content: turn === 1 ? [{ type: 'image_url', image_url: { url: image } }, { type: 'text', text }] : text });
      const responses: string[] = [];
      for (let s = 0; s < o.samples; s++) {
        const completion = await o.client.chat.completions.create({ model: o.model, seed: s, messages: history });
        if (completion.system_fingerprint === SIMULATOR_FINGERPRINT) simulated = true;
        const content = completion.choices[0]?.message.content;
        if (typeof content !== 'string') throw new Error(`chat ${chat.id} turn ${turn}: the endpoint returned no text`);
        responses.push(content);
      }
      const verified = responses.map((r) => scoreTurn(r, inForce));
      verified.forEach((v, s) => scored[s]!.push({ chatId: chat.id, turn, followed: v.verdicts.map((d) => d.passed) }));
      transcripts.push({ chat: chat.id, turn, instructions: given.map((g) => g.value), question, responses, pif: verified.map((v) => v.pif), verdicts: verified[0]!.verdicts.map((v) => ({ type: v.type, passed: v.passed })) });
      history.push({ role: 'assistant', content: responses[0]! });
    }
    return scored;
  });
  const bySample = Array.from({ length: o.samples }, (_, s) => perChat.flatMap((chat) => chat[s]!));
  const report = scoreMultiturn(bySample, { model: o.model, simulated, instructionsAppended: o.appendInstructions, chats: chats.length });
  await mkdir(o.out, { recursive: true });
  const name = `${o.model.replace(/[^A-Za-z0-9._-]+/g, '_')}.multiturn${o.appendInstructions ? '.appended' : ''}`;
  const markdown = multiturnMarkdown(report);
  await writeFile(join(o.out, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(join(o.out, `${name}.md`), markdown);
  await writeFile(join(o.out, `${name}.turns.jsonl`), transcripts.map((t) => `${JSON.stringify(t)}\n`).join(''));
  console.log(markdown);
  console.log(`wrote ${join(o.out, `${name}.json`)}, ${name}.md and ${name}.turns.jsonl`);
  return EXIT.ok;
}

async function readChats(path: string): Promise<ChatInput[]> {
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new CliError(`${path}: ${err.code ?? err.message}`, EXIT.notFound);
  });
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l, i) => {
      let chat: Partial<ChatInput>;
      try {
        chat = JSON.parse(l) as Partial<ChatInput>;
      } catch (err) {
        throw new CliError(`${path} line ${i + 1}: not JSON (${(err as Error).message})`, EXIT.usage);
      }
      if (typeof chat.id !== 'string' || typeof chat.image !== 'string' || !Array.isArray(chat.questions) || chat.questions.length === 0 || !chat.questions.every((q) => typeof q === 'string')) {
        throw new CliError(`${path} line ${i + 1}: expected {id, image, questions: [string, ...]}`, EXIT.usage);
      }
      return chat as ChatInput;
    });
}
