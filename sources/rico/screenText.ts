/**
 * The text a RICO view hierarchy shows (the release's `combined/<N>.json`, or RICO-Screen2Words'
 * `view_hierarchy` string): the grounding of RICO's generated instructions.
 */
import { asObject } from '../readers/jsonFiles.js';

/** Screen text budget: the labels and headings that say what the screen is, not every list row. */
const SCREEN_TEXT_LIMIT = 2000;

/**
 * A node's visible `text`, then its `content-desc` labels (a list, e.g. `["Navigate up"]`): icon-only
 * controls have no text, and their accessibility label is all that says what they do.
 */
function nodeLabels(node: Record<string, unknown>): string[] {
  const desc = node['content-desc'];
  const raw = [node.text, ...(Array.isArray(desc) ? desc : [desc])];
  return raw
    .filter((v): v is string => typeof v === 'string')
    .map((v) => v.replace(/\s+/g, ' ').trim())
    .filter((v) => v !== '');
}

/**
 * The `text` and `content-desc` labels of the hierarchy's visible nodes in document order, one per line, each once, up to
 * `limit` characters. A node hidden from the user hides its subtree too.
 */
export function visibleText(hierarchy: unknown, limit = SCREEN_TEXT_LIMIT): string | undefined {
  const top = asObject(hierarchy);
  const root = asObject(asObject(top?.activity)?.root) ?? top;
  const stack = root ? [root] : [];
  const seen = new Set<string>();
  let length = 0;
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node['visible-to-user'] === false || node.visibility === 'invisible' || node.visibility === 'gone') continue;
    for (const text of nodeLabels(node)) {
      if (seen.has(text)) continue;
      if (length + text.length > limit) return [...seen].join('\n');
      seen.add(text);
      length += text.length + 1;
    }
    const children = Array.isArray(node.children) ? node.children : [];
    for (let i = children.length - 1; i >= 0; i--) {
      const child = asObject(children[i]);
      if (child) stack.push(child);
    }
  }
  return seen.size > 0 ? [...seen].join('\n') : undefined;
}
