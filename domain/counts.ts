/**
 * Tallies kept as plain `{key: count}` records (rejections by reason, usage by role, reports by
 * source) are summed in one place, so every report adds them the same way.
 */

/** Adds counts by key into `into`. */
export function addCounts(into: Record<string, number>, from: Record<string, number>): void {
  for (const [key, n] of Object.entries(from)) into[key] = (into[key] ?? 0) + n;
}
