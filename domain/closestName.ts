/**
 * The known name a mistyped one was meant to be: for "did you mean" in config errors
 * (config/parseConfig.ts) and CLI flags (config/commandFlags.ts).
 */

/** The known name closest to `name`: the same letters in another case, or within a few edits (a swap of two letters is one). */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const sameLetters = known.find((k) => k.toLowerCase() === lower);
  if (sameLetters) return sameLetters;
  let best: { key: string; distance: number } | undefined;
  for (const key of known) {
    const distance = editDistance(lower, key.toLowerCase());
    if (distance <= Math.max(1, Math.floor(key.length / 4)) && (!best || distance < best.distance)) best = { key, distance };
  }
  return best?.key;
}

/**
 * Edits from `a` to `b`: insertions, deletions, substitutions and swaps of adjacent letters
 * (`conifg` is one edit from `config`), the optimal string alignment distance.
 */
function editDistance(a: string, b: string): number {
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, rows[i - 2]![j - 2]! + 1);
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}
