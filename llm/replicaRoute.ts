/**
 * Where each attempt of a model request goes: the replica of its endpoint that the worker-wide
 * router (replicaRouting.ts, one per endpoint) placed the request's key on, the sample's image
 * sha256, so all of a sample's requests meet its image's vision encoding and KV prefix on one
 * server. A replica is an endpoint of its own to everything after the pick: its own limiter (and so
 * its own leases, limiter.ts), client, metric label and limits (config/endpointReplicas.ts). What
 * each attempt's outcome says of the replica goes back to the router: an unreachable address
 * (refused, unknown host, TLS) takes it out, and so does a run of 5xx replies or dropped connections, so the request's next attempt, and its samples'
 * later requests, go to their next replica; a reply ends its run of failures. The reply cache is
 * keyed by the endpoint, not the replica (modelRequest.ts): a re-routed request is the same request.
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { connectFailureOf } from '../domain/connectFailure.js';
import { systemClock } from './clock.js';
import type { EndpointLimits } from './endpointLimits.js';
import { limiterFor } from './limiter.js';
import { ReplicaRouter, type ReplicaFailure } from './replicaRouting.js';
import type { ResolvedEndpoint, ResolvedReplica } from './resolvedEndpoint.js';
import { tallyReplica } from './tallyScope.js';

const routers = new Map<string, ReplicaRouter>();

/** An endpoint's router: by model and replica URLs, so two configs naming the same servers share one. */
function routerFor(endpoint: ResolvedEndpoint): ReplicaRouter {
  const id = [endpoint.model, ...endpoint.replicas.map((r) => r.baseURL)].join('\u0000');
  let router = routers.get(id);
  if (!router)
    routers.set(
      id,
      (router = new ReplicaRouter(
        endpoint.replicas.map((r) => r.baseURL),
        systemClock,
      )),
    );
  return router;
}

/** One replica as an endpoint of its own: its base URL, and itself as its only replica. */
function asReplica(endpoint: ResolvedEndpoint, replica: ResolvedReplica): ResolvedEndpoint {
  return { ...endpoint, baseURL: replica.baseURL, replicas: [replica] };
}

export interface Routed {
  endpoint: ResolvedEndpoint;
  limits: EndpointLimits;
}

/**
 * The replica one attempt of a request with routing key `key` goes to, with the limits it holds
 * there. `limitsOf` gives a replica's limits; a replica's load is what its limiter holds and queues
 * over what it admits now (its window, lease or 1/workers share), infinite while a 429 pauses it: 1
 * or more is at its limit.
 */
export function routeAttempt(endpoint: ResolvedEndpoint, key: string, limitsOf: (replica: ResolvedReplica) => EndpointLimits): Routed {
  // An endpoint of one server has nothing to pick and no shares to show.
  if (endpoint.replicas.length === 1) return { endpoint: asReplica(endpoint, endpoint.replicas[0]!), limits: limitsOf(endpoint.replicas[0]!) };
  const routes = new Map(endpoint.replicas.map((r) => [r.baseURL, { endpoint: asReplica(endpoint, r), limits: limitsOf(r) }]));
  const loadOf = (baseURL: string): number => {
    const route = routes.get(baseURL)!;
    const s = limiterFor(route.endpoint, route.limits).snapshot();
    const admits = Math.min(Math.floor(s.window), s.concurrency);
    return s.pausedForMs > 0 || admits < 1 ? Infinity : (s.inFlight + s.queued) / admits;
  };
  const pick = routerFor(endpoint).pick(key, loadOf);
  tallyReplica(pick.baseURL, pick.moved);
  return routes.get(pick.baseURL)!;
}

/**
 * What a failed attempt says of the replica that made it: an address nothing answers at
 * (domain/connectFailure.ts: refused, unknown host, TLS) says it is down; a connection reset or
 * closed before the reply, or a 5xx, may be one bad moment (a kept-alive connection the server
 * closed while idle gives a reset), a run of them says it is failing. A timeout says it is slow (its
 * limiter's window answers that), and any other answer is the request's own.
 */
function replicaFailureOf(err: unknown, baseURL: string): ReplicaFailure | undefined {
  if (err instanceof APIConnectionTimeoutError) return undefined;
  if (err instanceof APIConnectionError) return connectFailureOf(err, baseURL, false) ? 'unreachable' : 'dropped';
  if (err instanceof APIError && err.status !== undefined && err.status >= 500) return 'server-error';
  return undefined;
}

/** Tells the endpoint's router how an attempt at `replica` went: `err` undefined for a reply. */
export function attemptWent(endpoint: ResolvedEndpoint, replica: ResolvedEndpoint, err?: unknown): void {
  if (endpoint.replicas.length === 1) return;
  const router = routerFor(endpoint);
  if (err === undefined) return router.succeeded(replica.baseURL);
  const failure = replicaFailureOf(err, replica.baseURL);
  if (failure && router.failed(replica.baseURL, failure)) tallyReplica(replica.baseURL, 'ejected');
}
