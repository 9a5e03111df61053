/**
 * Test tiers. `npm run test:unit` (MMIF_TEST_TIER=unit) runs test/unit with what a plain `npm install`
 * provides; `npm test` first installs the external tools (`tools/install.sh test`: versitygw,
 * pyarrow/datasets venvs, Chromium, Temporal's Java test server) and runs everything. A test in test/unit that needs one of those
 * tools says so with `needs`, so the unit tier skips it by name instead of failing on a missing tool.
 */
import { localBackend, s3Backend, type Backend } from '../fixtures/backends.js';

export const UNIT_TIER = process.env.MMIF_TEST_TIER === 'unit';

/** External tools of `tools/install.sh test` that a test may need. */
export type Tool = 'pyarrow (tools/venv)' | "LLaMA-Factory's datasets venvs (tools/datasets-*)" | 'versitygw (tools/bin)' | 'temporal-test-server (tools/bin)';

/** Test options for a test that needs `tool`: skipped in the unit tier, saying why. */
export function needs(tool: Tool): { skip?: string } {
  return UNIT_TIER ? { skip: `needs ${tool}; npm test runs it` } : {};
}

/** The stores source tests run on: local disk, and S3 (versitygw) outside the unit tier. */
export function testBackends(): Backend[] {
  return UNIT_TIER ? [localBackend()] : [localBackend(), s3Backend()];
}
