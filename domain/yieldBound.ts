/**
 * How many samples to plan so that a source meets a target with a chosen confidence, given the
 * yield measured so far. Pure arithmetic (domain/targets.ts sizes top-up rounds with it). A bound,
 * not the point estimate plus a share: the records of the new samples vary with their number, not
 * with the deficit (docs/adr/0016-top-up-rounds-sized-by-a-yield-bound.md).
 */

/**
 * Samples to plan so that, with probability about `confidence`, they yield at least `missing` more
 * accepted records, when `accepted` of `observed` samples were accepted so far. The yield is not
 * known: after those observations (uniform prior) it is Beta(accepted + 1, rejected + 1), so the
 * records that N more samples yield follow a beta-binomial (the binomial draw and the yield's own
 * uncertainty together); N is the fewest whose normal-approximated lower `confidence` quantile
 * reaches `missing`. Never more than twice the point estimate (missing / observed yield): when so few
 * were accepted that the bound cannot be met, the yield is too uncertain to plan against, and the
 * exact count after the round decides. Needs accepted >= 1 (nothing accepted has no yield to scale).
 */
export function samplesForRecords(missing: number, observed: number, accepted: number, confidence: number): number {
  if (missing <= 0) return 0;
  if (accepted < 1 || accepted > observed) throw new RangeError(`samplesForRecords: ${accepted} accepted of ${observed} observed`);
  const a = accepted + 1;
  const b = observed - accepted + 1;
  const mean = a / (a + b);
  // Var[records of N samples] = N * a * b * (a + b + N) / ((a + b)^2 * (a + b + 1)), the beta-binomial's.
  const spread = (a * b) / ((a + b) ** 2 * (a + b + 1));
  const z = normalQuantile(confidence);
  const lower = (n: number) => mean * n - z * Math.sqrt(spread * n * (a + b + n));
  const cap = 2 * Math.ceil((missing * observed) / accepted);
  if (lower(cap) < missing) return cap;
  // lower() is convex with lower(0) = 0 < missing: the N that reach `missing` are one interval [N*, ∞).
  let low = 0;
  let high = cap;
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (lower(mid) >= missing) high = mid;
    else low = mid;
  }
  return high;
}

/** The standard normal's quantile: the z with P(Z <= z) = p, 0 < p < 1 (bisection on normalCdf, to 1e-9). */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile: p must be in (0, 1), got ${p}`);
  let low = -10;
  let high = 10;
  while (high - low > 1e-9) {
    const mid = (low + high) / 2;
    if (normalCdf(mid) < p) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}

/** P(Z <= z) for a standard normal Z: Abramowitz and Stegun 7.1.26 for erf (absolute error below 1.5e-7). */
export function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-x * x);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}
