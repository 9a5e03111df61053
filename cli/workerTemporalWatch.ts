/**
 * `mmif worker`'s own lines about its connection to Temporal. When the server goes away the SDK's
 * native client retries every poll by itself and logs each retry (`gRPC call poll_activity_task_queue
 * retried 6 times error=Status { code: Unavailable, ... }`, dozens a second across pollers): the
 * operator reads instead one line naming Temporal at its address and that the worker keeps
 * reconnecting, and one when it is back (issue 34). A probe (GetSystemInfo, a cheap unary call) runs
 * every few seconds through the same follower the CLI uses for `build --wait` (temporalOutage.ts), and
 * the SDK's retry warnings are dropped from the log, every other line kept.
 */
import { DefaultLogger, type Logger, type NativeConnection } from '@temporalio/worker';
import { TemporalFollower } from './temporalOutage.js';

/** The native client's line for a gRPC call it retries (temporalio_client::retry): the watcher says it once instead. */
const RETRY_WARNING = /^gRPC call \w+ retried \d+ times/;

/** The SDK's own console log (its format, INFO and up) but for the per-retry warnings of a lost connection. */
const sdkLog = new DefaultLogger('INFO');
export const workerLogger: Logger = {
  log: (level, message, meta) => {
    if (!RETRY_WARNING.test(message)) sdkLog.log(level, message, meta);
  },
  trace: (message, meta) => workerLogger.log('TRACE', message, meta),
  debug: (message, meta) => workerLogger.log('DEBUG', message, meta),
  info: (message, meta) => workerLogger.log('INFO', message, meta),
  warn: (message, meta) => workerLogger.log('WARN', message, meta),
  error: (message, meta) => workerLogger.log('ERROR', message, meta),
};

/** Native logs go to `workerLogger` instead of straight to the console (RuntimeOptions.telemetryOptions.logging). */
export const FORWARDED_LOGS = { filter: 'temporal_sdk_core=WARN,temporal_client=WARN,temporalio_client=WARN,temporal_sdk=WARN', forward: {} } as const;

interface TemporalWatch {
  stop(): void;
}

/** Probes Temporal every `everyMs` until stopped, saying when the connection is lost and when it is back. */
export function watchTemporal(connection: NativeConnection, address: string, options: { everyMs?: number; say?: (line: string) => void } = {}): TemporalWatch {
  const everyMs = options.everyMs ?? 5_000;
  const follower = new TemporalFollower(address, {
    say: options.say ?? ((line) => console.error(line)),
    firstDelayMs: everyMs,
    // Back within seconds of the server: the probe is one cheap call.
    maxDelayMs: 2 * everyMs,
    meanwhile: "the worker's polls retry by themselves; its running activities go on and report once it is back",
    again: 'the worker polls again',
  });
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const probe = () => connection.withDeadline(Date.now() + everyMs, () => connection.workflowService.getSystemInfo({}));
  const loop = async () => {
    while (!stopped) {
      await follower.call(probe).catch(() => undefined);
      await new Promise<void>((resolve) => (timer = setTimeout(resolve, everyMs)));
    }
  };
  void loop();
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
