/**
 * The unit tier in two processes instead of one per file: `npm run test:unit` gives node:test the two
 * entries test/harness/unitHalf1.ts and unitHalf2.ts (one per core), and each imports every other file
 * of test/unit/ into its own process, so the packages and product modules the files share are loaded
 * and compiled once per half, not once per file (docs/adr/0057-unit-tier-in-two-processes.md has the
 * figures). The files share a process: a test that changes process-wide state (process.env, a
 * module's registry) restores it; top-level hooks are the root's (a file's `after` runs when its half
 * ends, a top-level `beforeEach` would wrap every test of the half: keep those in a `describe`). A file
 * that fails to load is one failed test naming it; the other files still run. One file alone runs as
 * before: `node --import tsx --import ./test/harness/unitGuard.ts --test test/unit/x.test.ts`.
 */
import { test } from 'node:test';
import { readdir } from 'node:fs/promises';

const UNIT = new URL('../unit/', import.meta.url);

/** Imports (runs) the unit files of one half: the 1st, 3rd, ... by name for half 1, the 2nd, 4th, ... for half 2. */
export async function runUnitHalf(half: 1 | 2): Promise<void> {
  const files = (await readdir(UNIT)).filter((name) => name.endsWith('.test.ts')).sort();
  for (const [i, name] of files.entries()) {
    if (i % 2 !== half - 1) continue;
    try {
      await import(new URL(name, UNIT).href);
    } catch (err) {
      test(`test/unit/${name} loads`, () => {
        throw err;
      });
    }
  }
}
