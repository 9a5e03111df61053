/**
 * Following a build through a Temporal outage (`build --wait`, `status --watch`): the build runs on its
 * workers whatever happens to the client, so a lost connection to the server is not the build's
 * outcome. A call that fails because the server does not answer (gRPC UNAVAILABLE or DEADLINE_EXCEEDED,
 * after the SDK's own retries, about 20 s: its `defaultGrpcRetryOptions`) is made again with back-off
 * until the server answers; the user reads one line when the connection is lost and one when it is
 * back. Any other error passes through. The gRPC channel reconnects by itself once the server listens
 * again (https://grpc.github.io/grpc/core/md_doc_connection-backoff.html); only the calls are repeated.
 */
import { isGrpcServiceError } from '@temporalio/client';
import { causeChain } from '../domain/causeChain.js';

/** gRPC status codes (https://grpc.github.io/grpc/core/md_doc_statuscodes.html) that mean the server did not answer. */
const NO_ANSWER = new Map([
  [14, 'UNAVAILABLE'],
  [4, 'DEADLINE_EXCEEDED'],
]);

/** Why the server did not answer, when that is what `err` (or an error it wraps) says; else undefined. */
export function noAnswerFrom(err: unknown): string | undefined {
  const e = causeChain(err)
    .filter(isGrpcServiceError)
    .find((c) => NO_ANSWER.has(c.code));
  return e ? `${NO_ANSWER.get(e.code)}: ${e.details || e.message}` : undefined;
}

interface OutageOptions {
  /** Where the lines go (stderr). */
  say?: (line: string) => void;
  /** What goes on meanwhile, said when the connection is lost (default: a build follower's). */
  meanwhile?: string;
  /** What this process does again, said when it is back. */
  again?: string;
  /** First wait between tries, doubled up to maxDelayMs. */
  firstDelayMs?: number;
  maxDelayMs?: number;
}

/** Runs Temporal calls for a follower, repeating those the server did not answer until it does. */
export class TemporalFollower {
  private lostAt: number | undefined;
  private readonly say: (line: string) => void;
  private readonly firstDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly meanwhile: string;
  private readonly again: string;

  constructor(
    private readonly address: string,
    options: OutageOptions = {},
  ) {
    this.say = options.say ?? ((line) => console.error(line));
    this.firstDelayMs = options.firstDelayMs ?? 1_000;
    this.maxDelayMs = options.maxDelayMs ?? 30_000;
    this.meanwhile = options.meanwhile ?? 'the build goes on on its workers; Ctrl-C stops following, not the build';
    this.again = options.again ?? 'following the build again';
  }

  async call<T>(work: () => Promise<T>): Promise<T> {
    for (let delay = this.firstDelayMs; ; delay = Math.min(this.maxDelayMs, 2 * delay)) {
      let result: T;
      try {
        result = await work();
      } catch (err) {
        const cause = noAnswerFrom(err);
        if (!cause) throw err;
        if (this.lostAt === undefined) {
          this.lostAt = Date.now();
          this.say(`lost Temporal at ${this.address} (${cause}); reconnecting, waiting up to ${this.maxDelayMs / 1000} s between tries (${this.meanwhile})`);
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
        continue;
      }
      if (this.lostAt !== undefined) {
        this.say(`reconnected to Temporal at ${this.address} after ${Math.round((Date.now() - this.lostAt) / 1000)} s; ${this.again}`);
        this.lostAt = undefined;
      }
      return result;
    }
  }
}
