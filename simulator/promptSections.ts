/**
 * How the simulator finds a part of a prompt: by the label or heading the prompt module exports
 * (prompts/*), never by a copy of its words, so rewording a prompt cannot silently break the
 * simulated replies that read it (test/unit/simulatorPromptLabels.test.ts). A section a prompt kind
 * always has is read with `section`: a missing label is a 400 naming it and the kind, never an empty
 * section answered as if it were the prompt's.
 */
import type { PromptKind } from '../domain/promptKinds.js';
import { HttpError } from './http.js';

/** The text after the first `label` in `text`, up to the first `end` after it (else to the end); undefined without the label. */
export function textAfter(text: string, label: string, end?: string): string | undefined {
  const at = text.indexOf(label);
  if (at < 0) return undefined;
  const from = at + label.length;
  const stop = end === undefined ? -1 : text.indexOf(end, from);
  return text.slice(from, stop >= 0 ? stop : undefined);
}

/** The section of a `kind` prompt after `label`, up to `end` if given: both must be there, else a 400 naming the missing one. */
export function section(text: string, kind: PromptKind, label: string, end?: string): string {
  const after = textAfter(text, label);
  if (after === undefined) throw missingLabel(kind, label);
  if (end === undefined) return after;
  const stop = after.indexOf(end);
  if (stop < 0) throw missingLabel(kind, end);
  return after.slice(0, stop);
}

const missingLabel = (kind: PromptKind, label: string): HttpError =>
  new HttpError(
    400,
    `The ${kind} prompt has no ${JSON.stringify(label)} where the simulator reads it: a label is missing or reworded in its renderer.`,
    'invalid_request_error',
    'prompt_label_missing',
  );
