/**
 * Whether two images are the same picture, from their grey renderings (image/perceptualHash.ts): the
 * second stage of decontamination, after a perceptual hash named the candidates. Pure. Align: each
 * axis's mean profile is matched over a scale of ±10% and a shift of ±8 pixels, so a slightly cropped
 * or resized copy lines up. Compare: both renderings blurred (3x3), every 16x16 window (stride 8) is
 * fitted linearly one from the other, its slope within half and twice the whole image's: a copy fits
 * everywhere (brightness, contrast, moderate recolouring are linear), a distinct picture leaves some
 * window unexplained. `worst` is the largest unexplained deviation in grey levels, `correlation` the
 * whole rendering's. `colour`: what one coarse chroma rendering leaves unexplained by the other under
 * one rotation and scaling of the colour plane (a hue shift, a saturation change), so a chart redrawn
 * in another palette, grey-identical, is told apart. Thresholds: docs/adr/0019 and 0051.
 */

/** Side of the square grey rendering compared. */
export const RENDERING_SIDE = 128;
/** Side of the square chroma rendering of the same box. */
export const CHROMA_SIDE = 32;
const SIDE = RENDERING_SIDE;
const MARGIN = 8;
const WINDOW = 16;
const CENTRE = (SIDE - 1) / 2;

export interface Rendering {
  /** SIDE² grey levels, row by row, of the image with its uniform border trimmed. */
  pixels: Uint8Array;
  /** Derived once (renderingOf), compared with every candidate: the row and column mean profiles, and the 8x8 block sums. */
  rows: Float32Array;
  cols: Float32Array;
  blocks: Float32Array;
  /** CHROMA_SIDE² (Cb, Cr) pairs, interleaved, of the same box. */
  chroma: Float32Array;
}

/** A rendering with what every comparison reads of it computed once. */
export function renderingOf(pixels: Uint8Array, chroma: Float32Array): Rendering {
  return { pixels, rows: profile(pixels, 'rows'), cols: profile(pixels, 'cols'), blocks: blockSums(pixels), chroma };
}

export interface Likeness {
  correlation: number;
  worst: number;
  /** 0 when one chroma rendering is a rotated, scaled other (or either has next to no colour); 1 when unrelated. */
  colour: number;
}

/** Largest unexplained deviation (grey levels) of a copy: the same picture at or below it. */
export const SAME_PICTURE_WORST = 24;
/** Above SAME_PICTURE_WORST and at or below this, a candidate is a near miss: listed, not removed. */
export const NEAR_MISS_WORST = 48;

/** Largest colour residual of a copy (Likeness.colour). */
const SAME_PICTURE_COLOUR = 0.25;

export const isSamePicture = (likeness: Likeness): boolean => likeness.worst <= SAME_PICTURE_WORST && likeness.colour <= SAME_PICTURE_COLOUR;

/** A cheap bound first: the renderings' 16x16 block means must correlate at least this much. */
const COARSE_MIN = 0.4;

export function likeness(a: Rendering, b: Rendering): Likeness {
  if (fit(a.blocks, b.blocks, CELLS, 0, 0, CELLS).correlation < COARSE_MIN) return { correlation: 0, worst: Infinity, colour: 1 };
  // Each axis's profile proposes a few alignments; the pair that correlates best in 2D is taken (a
  // profile alone can be matched at a wrong scale where it has one strong feature, say an axis line).
  const xs = align(a.cols, b.cols);
  const ys = align(a.rows, b.rows);
  let best = { r: -2, x: IDENTITY, y: IDENTITY };
  for (const x of xs) {
    for (const y of ys) {
      const half = Math.floor((SIDE - 2 * MARGIN) / 2);
      const r = fit(...warped(a, b, x, y, 2), half, 0, 0, half).correlation;
      if (r > best.r) best = { r, x, y };
    }
  }
  const n = SIDE - 2 * MARGIN;
  const [ownA, ownB] = warped(a, b, best.x, best.y, 1);
  return { ...compareAligned(blur3(ownA, n), blur3(ownB, n), n), colour: colourResidual(a.chroma, b.chroma, best.x, best.y) };
}

/** Mean squared chroma below which an image counts as colourless: its colour says nothing. */
const COLOURLESS = 16;
/** The largest hue rotation a copy is allowed (the benchmark's copies turn up to 30°). */
const MAX_TURN = Math.PI / 3;

/**
 * 1 - |Σ a·conj(b)|² / (Σ|a|² Σ|b|²) over `a`'s chroma cells inside the margin, `b` sampled where the
 * grey alignment maps them: 0 when `b` is `a` turned and scaled in the colour plane, 1 when unrelated;
 * 1 also when the turn exceeds MAX_TURN; 0 when either image is next to colourless.
 */
function colourResidual(a: Float32Array, b: Float32Array, x: Alignment, y: Alignment): number {
  const cell = SIDE / CHROMA_SIDE;
  const edge = Math.ceil(MARGIN / cell);
  let [aa, bb, re, im, cells] = [0, 0, 0, 0, 0];
  for (let row = edge; row < CHROMA_SIDE - edge; row++) {
    for (let col = edge; col < CHROMA_SIDE - edge; col++) {
      const [px, py] = [(col + 0.5) * cell - 0.5, (row + 0.5) * cell - 0.5];
      const bx = (CENTRE + (px - CENTRE) / x.scale + x.shift + 0.5) / cell - 0.5;
      const by = (CENTRE + (py - CENTRE) / y.scale + y.shift + 0.5) / cell - 0.5;
      const [u1, u2] = [a[2 * (row * CHROMA_SIDE + col)]!, a[2 * (row * CHROMA_SIDE + col) + 1]!];
      const [v1, v2] = [chromaAt(b, bx, by, 0), chromaAt(b, bx, by, 1)];
      aa += u1 * u1 + u2 * u2;
      bb += v1 * v1 + v2 * v2;
      re += u1 * v1 + u2 * v2;
      im += u2 * v1 - u1 * v2;
      cells++;
    }
  }
  if (aa / cells < COLOURLESS || bb / cells < COLOURLESS) return 0;
  if (Math.abs(Math.atan2(im, re)) > MAX_TURN) return 1;
  return 1 - (re * re + im * im) / (aa * bb);
}

function chromaAt(p: Float32Array, x: number, y: number, channel: 0 | 1): number {
  const last = CHROMA_SIDE - 1;
  const [cx, cy] = [Math.min(last, Math.max(0, x)), Math.min(last, Math.max(0, y))];
  const [x0, y0] = [Math.floor(cx), Math.floor(cy)];
  const [x1, y1] = [Math.min(last, x0 + 1), Math.min(last, y0 + 1)];
  const [fx, fy] = [cx - x0, cy - y0];
  const at = (col: number, row: number) => p[2 * (row * CHROMA_SIDE + col) + channel]!;
  return (at(x0, y0) * (1 - fx) + at(x1, y0) * fx) * (1 - fy) + (at(x0, y1) * (1 - fx) + at(x1, y1) * fx) * fy;
}

interface Alignment {
  scale: number;
  shift: number;
}
const IDENTITY: Alignment = { scale: 1, shift: 0 };

/** `a`'s inner square and `b` mapped onto it, every `step`-th pixel. */
function warped(a: Rendering, b: Rendering, x: Alignment, y: Alignment, step: number): [Float32Array, Float32Array] {
  const n = Math.floor((SIDE - 2 * MARGIN) / step);
  const ownA = new Float32Array(n * n);
  const ownB = new Float32Array(n * n);
  for (let row = 0; row < n; row++) {
    for (let col = 0; col < n; col++) {
      const [r, c] = [row * step + MARGIN, col * step + MARGIN];
      ownA[row * n + col] = a.pixels[r * SIDE + c]!;
      ownB[row * n + col] = bilinear(b.pixels, CENTRE + (c - CENTRE) / x.scale + x.shift, CENTRE + (r - CENTRE) / y.scale + y.shift);
    }
  }
  return [ownA, ownB];
}

function compareAligned(a: Float32Array, b: Float32Array, n: number): Omit<Likeness, 'colour'> {
  const whole = fit(a, b, n, 0, 0, n);
  let worst = 0;
  for (let top = 0; top + WINDOW <= n; top += WINDOW / 2) {
    for (let left = 0; left + WINDOW <= n; left += WINDOW / 2) {
      const w = fit(a, b, n, top, left, WINDOW);
      // What one window leaves unexplained by the other, either way, with a contrast of its own
      // (a recoloured region) but at most twice or half the whole image's; a window whose contrast
      // is inverted; and a shift of its mean beyond the whole image's fit.
      const slopeBA = w.varianceA > FLAT ? w.covariance / w.varianceA : 0;
      const [ab, ba] = [within(w.slope, whole.slope), within(slopeBA, whole.slope > FLAT ? 1 / whole.slope : 0)];
      const unexplained = Math.max(w.varianceA - 2 * ab * w.covariance + ab * ab * w.varianceB, w.varianceB - 2 * ba * w.covariance + ba * ba * w.varianceA);
      const inverted = w.covariance < 0 ? Math.sqrt(w.varianceA) : 0;
      const meanShift = Math.abs(w.meanA - whole.meanA - whole.slope * (w.meanB - whole.meanB));
      worst = Math.max(worst, Math.sqrt(Math.max(unexplained, 0)) + inverted + meanShift / 2);
    }
  }
  return { correlation: whole.correlation, worst };
}

interface Fit {
  meanA: number;
  meanB: number;
  varianceA: number;
  varianceB: number;
  covariance: number;
  slope: number;
  correlation: number;
}

function fit(a: Float32Array, b: Float32Array, n: number, top: number, left: number, size: number): Fit {
  let sa = 0;
  let sb = 0;
  let saa = 0;
  let sbb = 0;
  let sab = 0;
  for (let row = top; row < top + size; row++) {
    for (let col = left; col < left + size; col++) {
      const u = a[row * n + col]!;
      const v = b[row * n + col]!;
      sa += u;
      sb += v;
      saa += u * u;
      sbb += v * v;
      sab += u * v;
    }
  }
  const m = size * size;
  const meanA = sa / m;
  const meanB = sb / m;
  const varianceA = Math.max(0, saa / m - meanA * meanA);
  const varianceB = Math.max(0, sbb / m - meanB * meanB);
  const covariance = sab / m - meanA * meanB;
  const flat = FLAT;
  return {
    meanA,
    meanB,
    varianceA,
    varianceB,
    covariance,
    slope: varianceB > flat ? covariance / varianceB : 1,
    correlation: varianceA > flat && varianceB > flat ? covariance / Math.sqrt(varianceA * varianceB) : varianceA <= flat && varianceB <= flat ? 1 : 0,
  };
}

/** A window's own slope, kept within half and twice the whole image's (`whole`). */
const within = (slope: number, whole: number): number => (whole > FLAT ? Math.min(2 * whole, Math.max(whole / 2, slope)) : slope);
const FLAT = 1e-6;

/** The coarse grid whose block sums correlate, unaligned, before anything else: distinct layouts fall below COARSE_MIN. */
const CELLS = 8;

function blockSums(p: Uint8Array): Float32Array {
  const size = SIDE / CELLS;
  const out = new Float32Array(CELLS * CELLS);
  for (let row = 0; row < SIDE; row++) for (let col = 0; col < SIDE; col++) out[Math.floor(row / size) * CELLS + Math.floor(col / size)]! += p[row * SIDE + col]!;
  return out;
}

function profile(pixels: Uint8Array, axis: 'rows' | 'cols'): Float32Array {
  const out = new Float32Array(SIDE);
  for (let row = 0; row < SIDE; row++) for (let col = 0; col < SIDE; col++) out[axis === 'rows' ? row : col]! += pixels[row * SIDE + col]! / SIDE;
  return out;
}

/**
 * Scales and shifts that map `b`'s profile onto `a`'s: the identity and the best few, each refined
 * around itself (distinct proposals at least 4 pixels or 4% apart).
 */
function align(a: Float32Array, b: Float32Array): Alignment[] {
  const m = SIDE - 2 * MARGIN;
  const score = (scale: number, shift: number) => {
    let sa = 0;
    let sb = 0;
    let saa = 0;
    let sbb = 0;
    let sab = 0;
    for (let i = MARGIN; i < SIDE - MARGIN; i++) {
      const u = a[i]!;
      const v = linear(b, CENTRE + (i - CENTRE) / scale + shift);
      sa += u;
      sb += v;
      saa += u * u;
      sbb += v * v;
      sab += u * v;
    }
    const va = saa - (sa * sa) / m;
    const vb = sbb - (sb * sb) / m;
    return va > 1e-6 && vb > 1e-6 ? (sab - (sa * sb) / m) / Math.sqrt(va * vb) : va <= 1e-6 && vb <= 1e-6 ? 1 : 0;
  };
  const grid: Array<Alignment & { r: number }> = [];
  for (let scale = 0.9; scale <= 1.1001; scale += 0.02) for (let shift = -8; shift <= 8; shift += 1) grid.push({ scale, shift, r: score(scale, shift) });
  grid.sort((p, q) => q.r - p.r);
  const proposals: Array<Alignment & { r: number }> = [];
  for (const p of grid) {
    if (proposals.length === PROPOSALS) break;
    if (proposals.every((q) => Math.abs(q.shift - p.shift) >= 4 || Math.abs(q.scale - p.scale) >= 0.04)) proposals.push(p);
  }
  const refined = proposals.map((p) => {
    let best = p;
    for (let scale = p.scale - 0.01; scale <= p.scale + 0.01001; scale += 0.005) {
      for (let shift = p.shift - 0.75; shift <= p.shift + 0.75; shift += 0.25) {
        const r = score(scale, shift);
        if (r > best.r) best = { scale, shift, r };
      }
    }
    return { scale: best.scale, shift: best.shift };
  });
  return [IDENTITY, ...refined];
}
const PROPOSALS = 3;

function linear(p: Float32Array, x: number): number {
  const at = Math.min(SIDE - 1, Math.max(0, x));
  const i = Math.floor(at);
  const f = at - i;
  return p[i]! * (1 - f) + p[Math.min(SIDE - 1, i + 1)]! * f;
}

function bilinear(p: Uint8Array, x: number, y: number): number {
  const cx = Math.min(SIDE - 1, Math.max(0, x));
  const cy = Math.min(SIDE - 1, Math.max(0, y));
  const x0 = Math.floor(cx);
  const y0 = Math.floor(cy);
  const x1 = Math.min(SIDE - 1, x0 + 1);
  const y1 = Math.min(SIDE - 1, y0 + 1);
  const fx = cx - x0;
  const fy = cy - y0;
  const top = p[y0 * SIDE + x0]! * (1 - fx) + p[y0 * SIDE + x1]! * fx;
  const bottom = p[y1 * SIDE + x0]! * (1 - fx) + p[y1 * SIDE + x1]! * fx;
  return top * (1 - fy) + bottom * fy;
}

function blur3(p: Float32Array, n: number): Float32Array {
  const out = new Float32Array(n * n);
  for (let row = 0; row < n; row++) {
    for (let col = 0; col < n; col++) {
      let sum = 0;
      let count = 0;
      for (let dy = -1; dy <= 1; dy++) {
        for (let dx = -1; dx <= 1; dx++) {
          const r = row + dy;
          const c = col + dx;
          if (r >= 0 && r < n && c >= 0 && c < n) {
            sum += p[r * n + c]!;
            count += 1;
          }
        }
      }
      out[row * n + col] = sum / count;
    }
  }
  return out;
}
