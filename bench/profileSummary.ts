// Summarizes a V8 .cpuprofile (from bench/throughput.ts --cpu-prof): self time by function and by
// file, the top entries, so a hot spot can be named with its share of the worker's CPU.
//
// Run:   npx tsx bench/profileSummary.ts FILE.cpuprofile [--top 25]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fmt, table } from './harness.js';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' } } });
const profile = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const idle = [...self].filter(([id]) => ['(idle)', '(program)', '(garbage collector)'].includes(byId.get(id)!.callFrame.functionName));

const short = (url: string) => url.replace(/^file:\/\/.*?\/work\/main\//, '').replace(/^.*node_modules\//, 'node_modules/');
const fnKey = (n: Node) => `${n.callFrame.functionName || '(anonymous)'} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const fileKey = (n: Node) => short(n.callFrame.url) || n.callFrame.functionName;

/** Inclusive time too: a function's self time plus its callees', counted once per sample stack. */
const inclusive = new Map<string, number>();
profile.samples.forEach((id, i) => {
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const key = fnKey(byId.get(at)!);
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
});

function top(key: (n: Node) => string): Array<[string, number]> {
  const sums = new Map<string, number>();
  for (const [id, us] of self) sums.set(key(byId.get(id)!), (sums.get(key(byId.get(id)!)) ?? 0) + us);
  return [...sums].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top));
}

const pct = (us: number) => `${fmt((100 * us) / total, 1)}%`;
console.log(`${fmt(total / 1e6, 1)} s sampled; idle/program/GC: ${idle.map(([id, us]) => `${byId.get(id)!.callFrame.functionName} ${pct(us)}`).join(', ')}\n`);
console.log(
  table(
    ['self time by function', 'share'],
    top(fnKey).map(([k, us]) => [k, pct(us)]),
  ),
);
console.log();
console.log(
  table(
    ['self time by file', 'share'],
    top(fileKey).map(([k, us]) => [k, pct(us)]),
  ),
);
console.log();
const ours = [...inclusive]
  .filter(([k]) => !k.includes('node_modules/') && !k.startsWith('(') && /\.ts:/.test(k))
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(values.top));
console.log(
  table(
    ['inclusive time, project functions', 'share'],
    ours.map(([k, us]) => [k, pct(us)]),
  ),
);
