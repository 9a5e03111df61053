/**
 * One execution of one stage of one sample, as the cache and the sent log see it: providers answer
 * and bill requests whose caller died, so a request a killed execution sent and never saw answered,
 * and a reply a killed execution paid for but never recorded, are both counted as paid by the
 * execution that takes over — cost is never under-reported.
 */
import type { CachedReply } from './replyCache.js';
import type { SentLog, SentMark } from './sentLog.js';

export class StageExecution {
  constructor(
    private readonly owner: string | undefined,
    readonly scope: string,
    readonly id: string,
    private readonly log: SentLog,
  ) {}

  /** Noted as the request with this cache key leaves the limiter's queue, not while it waits there. */
  sent(cacheKey: string): Promise<void> {
    return this.log.sent(cacheKey, this.mark());
  }

  /** The request was answered with an error status: an answer, not a billed loss. */
  answered(cacheKey: string): Promise<void> {
    return this.log.answered(cacheKey, this.mark());
  }

  /**
   * Whether another execution of this very stage and sample sent this request and died before its
   * reply reached the cache: the mark written before every request of a stage execution says so.
   */
  sentByLostExecution(cacheKey: string): Promise<boolean> {
    return this.log.sentByAnother(cacheKey, this.mark());
  }

  /** Paid by another execution of this very stage and sample of this build, which recorded nothing. */
  paidByEarlierAttempt(reply: CachedReply): boolean {
    return reply.owner === this.owner && reply.scope === this.scope && reply.execution !== undefined && reply.execution !== this.id;
  }

  /** What a reply this execution pays for carries, to be told from a lost attempt's. */
  stamp(): Pick<CachedReply, 'scope' | 'execution'> {
    return { scope: this.scope, execution: this.id };
  }

  private mark(): SentMark {
    return { owner: this.owner, scope: this.scope, execution: this.id };
  }
}
