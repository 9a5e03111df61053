/** The first of the unit tier's two processes (test/harness/unitTier.ts). */
import { runUnitHalf } from './unitTier.js';

await runUnitHalf(1);
