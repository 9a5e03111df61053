/**
 * What an `mmif eval` run's activities share (its config, stores and model caller), and the error
 * kind for bad eval input, so eval stages get one context as build stages do.
 */
import type { EvalConfig } from '../../config/evalConfig.js';
import type { ModelCaller } from '../../llm/modelCaller.js';
import type { EvalLayout } from '../../storage/evalLayout.js';
import type { ObjectStore } from '../../storage/objectStore.js';
import { InputError } from '../../domain/errors.js';

/** What an evaluation's activities work with (activities/runtime.ts opens it once per worker). */
export interface EvalContext {
  config: EvalConfig;
  /** The dataset root: the split (or chats' images) is read from it. */
  data: ObjectStore;
  /** Reports and the run's state (`_work/<evalId>/`). */
  out: ObjectStore;
  layout: EvalLayout;
  /** Through the model-call cache and the endpoints' limiters, as builds call models. */
  models: ModelCaller;
}

/** Bad eval input (a missing split, a malformed line, a changed config under one evalId): no retry can fix it; the user fixes the data or the config (`mmif eval` exits 2). */
export class EvalInputError extends InputError {
  override name = 'EvalInputError';
}
