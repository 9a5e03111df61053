/**
 * Replies that are not what they claim. An endpoint can answer 200 with something that is no chat
 * completion: a captive portal's or login proxy's HTML page, an empty body, JSON of another shape
 * (a gateway's own envelope, another API's reply). It can also send far more than any reply to the
 * engine's requests needs (a runaway model without a token limit, a proxy streaming a file), or
 * send it so slowly that it never ends. Each is an unusable reply that names the endpoint, never a
 * TypeError deep in the caller, and no retry of the same request changes it, so it is not retried.
 */
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { RecordError } from '../domain/errors.js';

type UnusableKind = 'not-a-completion' | 'reply-too-large';

export class UnusableReply extends RecordError {
  override name = 'UnusableReply';
  constructor(
    readonly kind: UnusableKind,
    /** What came back, for the message: "HTTP 200 text/html: <!DOCTYPE html>…". */
    readonly detail: string,
  ) {
    super(`${kind}: ${detail}`);
  }
}

/** Bytes of a body shown in a message. */
const SHOWN_CHARS = 120;

/** The start of a body on one line, for a message. */
function bodyExcerpt(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  if (!line) return '(an empty body)';
  return line.length > SHOWN_CHARS ? `${line.slice(0, SHOWN_CHARS)}…` : line;
}

/**
 * The body of a 2xx reply as a chat completion, or UnusableReply('not-a-completion') saying what
 * it is instead. A chat completion is a JSON object with a `choices` array whose first entry has a
 * `message` (https://platform.openai.com/docs/api-reference/chat/object); `content` may be null.
 */
export function chatCompletionOf(text: string, contentType: string | null): ChatCompletion {
  const what = `HTTP 200${contentType ? ` ${contentType.split(';')[0]!.trim()}` : ''}`;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new UnusableReply('not-a-completion', `${what}, not JSON: ${bodyExcerpt(text)}`);
  }
  const choices = (data as { choices?: unknown } | null)?.choices;
  const first: unknown = Array.isArray(choices) ? choices[0] : undefined;
  const message = (first as { message?: unknown } | undefined)?.message;
  if (typeof message !== 'object' || message === null) {
    throw new UnusableReply('not-a-completion', `${what}, JSON without choices[0].message: ${bodyExcerpt(text)}`);
  }
  const content = (message as { content?: unknown }).content;
  if (content !== undefined && content !== null && typeof content !== 'string') {
    throw new UnusableReply('not-a-completion', `${what}, choices[0].message.content is not text: ${bodyExcerpt(text)}`);
  }
  return data as ChatCompletion;
}

/** The UnusableReply an SDK error stands for: the fetch failed with one (a capped body), which the SDK wraps as its cause. */
export function unusableOf(err: unknown): UnusableReply | undefined {
  if (err instanceof UnusableReply) return err;
  const cause = (err as { cause?: unknown } | null)?.cause;
  return cause instanceof UnusableReply ? cause : undefined;
}
