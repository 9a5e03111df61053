/**
 * Parsing judge replies as the reference does, made robust to the mess real models produce.
 * Direct judge (Fig. 22): `Summary: Score of constraint_1: 1/1, ...`, read case-insensitively after
 * removing `*`; the last score given for a constraint wins (the summary comes after the reasoning).
 * Compare judge (Fig. 21): the first True/False after the last "summary".
 */

/** Per constraint (1-based in the reply, 0-based here): passed, failed, or undefined when no score was given. */
export function parseDirectJudge(reply: string, constraintCount: number): Array<boolean | undefined> {
  const scores = new Array<boolean | undefined>(constraintCount).fill(undefined);
  const text = reply.replace(/\*/g, '');
  for (const m of text.matchAll(/score\s+of\s+constraint[\s_]*(\d+)\s*[:=]\s*(\d+(?:\.\d+)?)\s*\/\s*(\d+(?:\.\d+)?)/gi)) {
    const index = Number(m[1]) - 1;
    if (index < 0 || index >= constraintCount) continue;
    const [got, of] = [Number(m[2]), Number(m[3])];
    scores[index] = of > 0 && got >= of;
  }
  return scores;
}

/**
 * The verdict after the last "summary"; a reply without one (the prompt also allows a bare
 * "True"/"False") is read whole. Undefined when no True/False word is found.
 */
export function parseCompareJudge(reply: string): boolean | undefined {
  const text = reply.replace(/\*/g, '');
  const last = text.toLowerCase().lastIndexOf('summary');
  const tail = last >= 0 ? text.slice(last + 'summary'.length) : text;
  const m = /\b(true|false)\b/i.exec(tail);
  return m ? m[1]!.toLowerCase() === 'true' : undefined;
}
