/**
 * `mmif verify`: runs the rule-based verifiers over JSON lines on stdin and writes one JSON line per
 * input line on stdout, in input order, streaming (readline in, write with backpressure out). A line
 * that cannot be verified gets an `{id, error}` line and the run goes on. Blank lines are skipped.
 */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { parseFlags } from '../config/commandFlags.js';
import { z } from 'zod';
import { credited, VACUOUS_POLICIES, type VacuousPolicy } from '../domain/verdict.js';
import { describeIssues, runVerifierCall, type VerifierOutcome } from './functions.js';

export const VERIFY_USAGE = `usage: mmif verify [--records] [--vacuous pass|fail]
  Reads JSON lines on stdin, writes one JSON line per input line on stdout, in input order.
  calls (default):  {"id", "response", "func", "params": [...]}  ->  {"id", "passed", "vacuous"}
  --records:        {"id", "response", "constraints": [{"type", "value", "verifiers": [{"func", "params"}]}]}
                    ->  {"id", "verdicts": [{"index", "type", "passed", "vacuous", "details"}], "passRate", "unverified", "errors"}
                    A constraint passes only if all its calls pass; one without calls is unverified
                    (passed null), one with a bad call is an error (passed null, with "error"); both are
                    left out of passRate (null when no constraint was verified).
  "vacuous": true when the response holds nothing the check speaks of (no number for a precision check,
  no paragraph, an empty response; docs/data-quality.md). --vacuous pass (default) keeps the reference
  functions' verdicts; --vacuous fail makes a vacuous pass "passed": false, as builds count it.
  A line that is not JSON, or names an unknown function or bad params, yields {"id", "error"}.
  Exit code: 0 all lines verified, 1 some line had an error, 2 usage error.
`;

const callLine = z.object({ response: z.string(), func: z.unknown().optional(), params: z.unknown().optional() });
const recordLine = z.object({
  response: z.string(),
  constraints: z.array(
    z.object({
      type: z.string().nullish(),
      verifiers: z.array(z.object({ func: z.unknown().optional(), params: z.unknown().optional() })).optional(),
    }),
  ),
});

/** One output line, and whether it reports an error (which makes the exit code 1). */
interface LineResult {
  output: Record<string, unknown>;
  failed: boolean;
}

type Verifier = (input: unknown, id: unknown, policy: VacuousPolicy) => LineResult;

function verifyCall(input: unknown, id: unknown, policy: VacuousPolicy): LineResult {
  const parsed = callLine.safeParse(input);
  if (!parsed.success) return errorLine(id, describeIssues(parsed.error, 'line'));
  const outcome = runVerifierCall(parsed.data.response, parsed.data);
  return 'error' in outcome ? errorLine(id, outcome.error) : { output: { id, passed: credited(outcome, policy), vacuous: outcome.vacuous }, failed: false };
}

function verifyRecord(input: unknown, id: unknown, policy: VacuousPolicy): LineResult {
  const parsed = recordLine.safeParse(input);
  if (!parsed.success) return errorLine(id, describeIssues(parsed.error, 'line'));
  const { response, constraints } = parsed.data;
  const verdicts = constraints.map(({ type, verifiers = [] }, index) => {
    const details = verifiers.map((call) => ({ func: call.func, ...runVerifierCall(response, call) }));
    return { index, type: type ?? null, ...constraintVerdict(details, policy) };
  });
  const verified = verdicts.filter((v) => v.passed !== null);
  const errors = verdicts.filter((v) => 'error' in v).length;
  const unverified = verdicts.length - verified.length - errors;
  const passRate = verified.length === 0 ? null : verified.filter((v) => v.passed).length / verified.length;
  return {
    output: { id, verdicts, passRate, unverified, errors },
    failed: errors > 0,
  };
}

/** All calls must pass; any call error makes the whole constraint an error, no call leaves it unverified. */
function constraintVerdict(details: (VerifierOutcome & { func: unknown })[], policy: VacuousPolicy) {
  const problems = details.flatMap((d) => ('error' in d ? [d.error] : []));
  if (problems.length > 0) return { passed: null, error: problems.join('; '), details };
  if (details.length === 0) return { passed: null, details };
  const passed = details.every((d) => 'passed' in d && d.passed);
  const vacuous = details.some((d) => 'vacuous' in d && d.vacuous);
  return { passed: credited({ passed, vacuous }, policy), vacuous, details };
}

function errorLine(id: unknown, error: string): LineResult {
  return { output: { id, error }, failed: true };
}

function verifyLine(line: string, lineNumber: number, verify: Verifier, policy: VacuousPolicy): LineResult {
  let input: unknown;
  try {
    input = JSON.parse(line);
  } catch (err) {
    return errorLine(null, `line ${lineNumber} is not JSON: ${(err as Error).message}`);
  }
  const id = input !== null && typeof input === 'object' && 'id' in input ? input.id : null;
  return verify(input, id ?? null, policy);
}

/** The line verifier the arguments ask for, or the exit code when they ask for help or are wrong. */
function parseMode(args: string[], stdout: NodeJS.WritableStream): { verify: Verifier; policy: VacuousPolicy } | { exit: number } {
  try {
    const { values } = parseFlags({ args, options: { records: { type: 'boolean' }, vacuous: { type: 'string', default: 'pass' }, help: { type: 'boolean', short: 'h' } } });
    if (values.help) return (stdout.write(VERIFY_USAGE), { exit: 0 });
    const policy = VACUOUS_POLICIES.find((p) => p === values.vacuous);
    if (!policy) throw new Error(`--vacuous must be pass or fail, got '${values.vacuous}'`);
    return { verify: values.records ? verifyRecord : verifyCall, policy };
  } catch (err) {
    process.stderr.write(`mmif verify: ${(err as Error).message}\n${VERIFY_USAGE}`);
    return { exit: 2 };
  }
}

/** The `mmif verify` command. Resolves to the exit code. */
export async function runVerifyCommand(args: string[], stdin: NodeJS.ReadableStream, stdout: NodeJS.WritableStream): Promise<number> {
  const mode = parseMode(args, stdout);
  if ('exit' in mode) return mode.exit;
  let failed = false;
  let lineNumber = 0;
  for await (const line of createInterface({ input: stdin, crlfDelay: Infinity })) {
    lineNumber++;
    if (line.trim() === '') continue;
    const result = verifyLine(line, lineNumber, mode.verify, mode.policy);
    failed ||= result.failed;
    if (!stdout.write(`${JSON.stringify(result.output)}\n`)) await once(stdout, 'drain');
  }
  return failed ? 1 : 0;
}
