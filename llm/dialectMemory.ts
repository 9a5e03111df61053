/**
 * What each endpoint + model was found to accept (dialect.ts), remembered in the model-call cache
 * beside the pre-flight results: a lesson learned by the pre-flight, or by any worker, is used by
 * every later request, build and worker instead of being refused again. Each worker also keeps the
 * dialects it has read, per cache store, so a request costs no cache read for it. An entry is keyed
 * by endpoint and model and holds those two and the dialect, never the credential: callers pass
 * resolved endpoints, which carry the key.
 */
import { canonicalJson } from '../config/fingerprint.js';
import { sha256Hex } from '../domain/hashing.js';
import { getJson, putJson, type ObjectStore } from '../storage/objectStore.js';
import type { APIError } from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { adapt, baseDialect, refusedParameter, type Dialect } from './dialect.js';
import type { ServiceTarget } from './imageIds.js';

interface DialectTarget extends ServiceTarget {
  model: string;
}

interface StoredDialect extends DialectTarget {
  dialect: Dialect;
}

const known = new WeakMap<ObjectStore, Map<string, Promise<Dialect>>>();

export class DialectMemory {
  constructor(
    private readonly cache: ObjectStore,
    private readonly cachePrefix: string,
  ) {}

  /** The dialect of this endpoint + model: the remembered one, else its base dialect (dialect.ts). */
  get(target: DialectTarget): Promise<Dialect> {
    const id = this.key(target);
    const dialects = this.dialects();
    let dialect = dialects.get(id);
    if (!dialect) {
      dialect = getJson<StoredDialect>(this.cache, id).then((stored) => stored?.dialect ?? baseDialect(target.model, target));
      // A failed read is not remembered: the next request reads again.
      dialect.catch(() => dialects.delete(id));
      dialects.set(id, dialect);
    }
    return dialect;
  }

  /**
   * The dialect to send `body` again in after the endpoint refused it (`refusal`, its masked words
   * in `excerpt`), learned and remembered; undefined when the refusal names nothing a dialect can
   * change, or nothing is left to try for it. A lesson another request learned meanwhile is used
   * as it is.
   */
  async afterRefusal(
    target: DialectTarget,
    sentIn: Dialect,
    refusal: Pick<APIError, 'param' | 'message'>,
    body: ChatCompletionCreateParamsNonStreaming,
    excerpt: string,
  ): Promise<Dialect | undefined> {
    const current = await this.get(target);
    if (current.lessons.length > sentIn.lessons.length) return current;
    const param = refusedParameter(refusal, body);
    const next = param === undefined ? undefined : adapt(current, param, excerpt);
    if (next) await this.learn(target, next);
    return next;
  }

  /** Remembers what was learned, for this worker at once and in the cache for the others. */
  async learn(target: DialectTarget, dialect: Dialect): Promise<void> {
    const id = this.key(target);
    this.dialects().set(id, Promise.resolve(dialect));
    await putJson(this.cache, id, { baseURL: target.baseURL, model: target.model, dialect } satisfies StoredDialect);
  }

  private dialects(): Map<string, Promise<Dialect>> {
    let dialects = known.get(this.cache);
    if (!dialects) known.set(this.cache, (dialects = new Map()));
    return dialects;
  }

  private key(target: DialectTarget): string {
    return `${this.cachePrefix}/dialects/${sha256Hex(canonicalJson([target.baseURL, target.model]))}.json`;
  }
}
