/**
 * The shape of a stage's first model call for one sample, shared by the stages that build it and
 * the Batch API path that sends it ahead of them.
 */
import type { JsonReply, ModelRequest } from '../../llm/modelRequest.js';

/**
 * The first model call of a stage for one sample, exactly as the stage sends it. The Batch API path
 * prepares these ahead of the stage, so the stage then finds its reply in the cache.
 */
export interface StageRequest {
  request: ModelRequest;
  /** Set when the reply must be JSON of this schema. */
  json?: JsonReply<unknown>;
}
