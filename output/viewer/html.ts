/**
 * Escaping for the viewer's HTML (output/viewer/): every text a record, a report or a source holds
 * goes through `esc` before it reaches the page, attributes included. Pure.
 */

export function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** `n/of (p%)`, `-` for a share of nothing. */
export const share = (n: number, of: number): string => (of === 0 ? `${n}/0` : `${n}/${of} (${((100 * n) / of).toFixed(1)}%)`);
