/**
 * The hard budget of one build (`llm.budget`): USD and, optionally, requests, across all its workers.
 * Every request is admitted here as it would leave the limiter: once what the build has paid
 * (spendLedger.ts) reaches `maxUsd`, or that plus this process's requests in flight reaches
 * `maxRequests`, it fails with BudgetExhausted, which stops the activity, shard and build without
 * retries, each with the same one line; requests already in flight are the overshoot (docs/cost.md).
 * The limits are read from the build's budget object, which each run writes from its config: the
 * budget is not in the fingerprint, so a run with a raised budget continues the build.
 */
import { ThrottledRead } from './throttledRead.js';
import { getJson, putIfChanged, type ObjectStore } from '../storage/objectStore.js';
import { SpendLedger, type Spend } from './spendLedger.js';
import { PermanentError } from '../domain/errors.js';

interface BudgetLimits {
  maxUsd?: number;
  maxRequests?: number;
}

/** How often a worker reads the other workers' spend and the budget again while it sends requests. */
export const BUDGET_REFRESH_MS = 1_000;

export class BudgetExhausted extends PermanentError {
  override name = 'BudgetExhausted';
}

/**
 * The one line a spent budget fails with: `budget exhausted: $X of $Y spent`, or for requests
 * `budget exhausted: N of M requests sent ($X spent)` (N: paid, and in flight from this worker).
 */
function budgetMessage(spent: Spend, sent: number, limits: BudgetLimits): string {
  if (limits.maxUsd !== undefined && spent.usd >= limits.maxUsd) return `budget exhausted: ${usd(spent.usd)} of ${usd(limits.maxUsd)} spent`;
  return `budget exhausted: ${sent} of ${limits.maxRequests} requests sent (${usd(spent.usd)} spent)`;
}

const usd = (value: number) => `$${value.toFixed(4)}`;

/** Writes the budget a run of the build is held to (each run its own config's; unchanged, nothing is written). */
export async function writeBudget(store: ObjectStore, key: string, limits: BudgetLimits | undefined): Promise<void> {
  await putIfChanged(store, key, JSON.stringify(limits ?? {}), 'application/json');
}

export class BuildBudget {
  private limits: BudgetLimits = {};
  private readonly limitsRead: ThrottledRead;
  private inFlight = 0;

  constructor(
    private readonly store: ObjectStore,
    /** The build's budget object (BuildLayout.budget). */
    private readonly budgetKey: string,
    readonly ledger: SpendLedger,
    now: () => number = Date.now,
  ) {
    this.limitsRead = new ThrottledRead(async () => {
      this.limits = (await getJson<BudgetLimits>(this.store, this.budgetKey)) ?? {};
    }, now);
  }

  /**
   * Admits one request about to be sent, or throws BudgetExhausted. An admitted request must be
   * settled (`paid` or `unpaid`) once answered.
   */
  async admit(): Promise<void> {
    await this.ensureRoom();
    this.inFlight += 1;
  }

  /**
   * Admits a Batch API submission, or throws BudgetExhausted: once the budget is spent no batch is
   * submitted, as no request is sent. A batch goes whole, and its replies are counted when collected
   * (`billed`), so the requests of the batches submitted before the budget ran out are its overshoot
   * (docs/cost.md).
   */
  async admitBatch(): Promise<void> {
    await this.ensureRoom();
  }

  /**
   * Throws BudgetExhausted when the budget is spent. The limits are read again before refusing: a run
   * resumed with a raised budget (`mmif resume --config`) writes it as it plans, and limits this
   * process read under a second earlier (the stopped run's last check) must not fail its shards.
   */
  private async ensureRoom(): Promise<void> {
    await this.refresh();
    if (!this.exhausted()) return;
    await this.refresh(true);
    if (this.exhausted()) throw new BudgetExhausted(budgetMessage(this.ledger.total(), this.ledger.total().requests + this.inFlight, this.limits));
  }

  private exhausted(): boolean {
    const spent = this.ledger.total();
    const { maxUsd, maxRequests } = this.limits;
    return (maxUsd !== undefined && spent.usd >= maxUsd) || (maxRequests !== undefined && spent.requests + this.inFlight >= maxRequests);
  }

  /** An admitted request was answered and paid (`usd`: its cost, 0 when unpriced). */
  paid(usd: number): Promise<void> {
    this.inFlight -= 1;
    return this.ledger.add({ usd, requests: 1 });
  }

  /** An admitted request ended without a bill (an error status, a connection failure). */
  unpaid(): void {
    this.inFlight -= 1;
  }

  /**
   * A bill without an admission, counted: a request an earlier, killed execution sent and never saw
   * answered, or a Batch API reply (a batch is submitted whole, not request by request).
   */
  billed(usd: number): Promise<void> {
    return this.ledger.add({ usd, requests: 1 });
  }

  /** USD the build has spent, as this process's ledger knows it (its own spend, the others' as last read). */
  spentUsd(): number {
    return this.ledger.total().usd;
  }

  /** The USD budget as last read, if any. */
  maxUsd(): number | undefined {
    return this.limits.maxUsd;
  }

  private async refresh(limitsNow = false): Promise<void> {
    // A read before refusing is a fresh one; otherwise one read at a time (ADR 0080).
    await (limitsNow ? this.limitsRead.fresh() : this.limitsRead.refresh(BUDGET_REFRESH_MS));
    // Without a limit there is nothing to check against: only this process's spend is written.
    if (this.limits.maxUsd !== undefined || this.limits.maxRequests !== undefined) await this.ledger.refresh(BUDGET_REFRESH_MS);
  }
}
