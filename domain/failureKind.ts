/**
 * How a failed model request is classified (llm/retryPolicy.ts classifyFailure), in domain/ because
 * the tallies that count failed attempts by kind (domain/tallies.ts) travel through the workflows:
 * - refused: the endpoint refuses the request itself (400, 413, 422); no retry can help, so the sample is rejected;
 * - rate-limited: 429; the limiter pauses the endpoint, so the retry waits in line, not here;
 * - transient: 408, 409, 5xx, connection errors and timeouts; retried after a backoff;
 * - permanent: the endpoint's answer will not change on a retry (401, 403, 404, an exhausted quota):
 *   the activity fails non-retryably with the endpoint named (endpointError.ts);
 * - unusable: a 2xx reply that is no chat completion or is too large (replyCheck.ts); the same
 *   request gets the same answer, so the sample is rejected naming the endpoint;
 * - fatal: anything that is not an endpoint's answer (a bug); fails the activity.
 */
export type FailureKind = 'refused' | 'rate-limited' | 'transient' | 'permanent' | 'unusable' | 'fatal';
