/**
 * How the simulator finds a part of a prompt: by the label or heading the prompt module exports
 * (prompts/*), never by a copy of its words, so rewording a prompt cannot silently break the
 * simulated replies that read it (test/unit/simulatorPromptLabels.test.ts).
 */

/** The text after the first `label` in `text`, up to the first of `ends` found after it (else to the end); undefined without the label. */
export function textAfter(text: string, label: string, ...ends: string[]): string | undefined {
  const at = text.indexOf(label);
  if (at < 0) return undefined;
  const from = at + label.length;
  const stops = ends.map((end) => text.indexOf(end, from)).filter((i) => i >= 0);
  return text.slice(from, stops.length > 0 ? Math.min(...stops) : undefined);
}
