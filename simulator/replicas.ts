/**
 * N simulator instances as N data-parallel replicas of one model: each its own server with its own
 * prefix cache, vision-encoder cache and GPUs (a fresh GpuFleet each), all on the same seed, since
 * a model's reply does not depend on the replica that made it. Optionally a round-robin balancer in
 * front (balancer.ts), or none: then the engine routes to the replicas itself (`baseUrls`).
 */
import { startBalancer, type BalancerHandle, type BalancerMode } from './balancer.js';
import { startSimulator, type SimulatorHandle, type SimulatorOptions } from './server.js';

export interface ReplicaSet {
  replicas: SimulatorHandle[];
  balancer?: BalancerHandle;
  /** Stops replica `index` at once, its connections cut, as a crashed server goes (bench/replicas.ts). */
  kill(index: number): Promise<void>;
  /** Stops the balancer and every replica not killed. */
  close(): Promise<void>;
}

/** `options.port`, when set: the balancer's port (or the first replica's without one), the replicas on the ports after it. */
export async function startReplicas(count: number, options: SimulatorOptions = {}, balancer?: BalancerMode): Promise<ReplicaSet> {
  const first = options.port ? options.port + (balancer ? 1 : 0) : undefined;
  const replicas: SimulatorHandle[] = [];
  try {
    for (let i = 0; i < count; i++) {
      replicas.push(await startSimulator({ ...options, ...(first ? { port: first + i } : { port: 0 }), ...(options.gpus ? { gpus: options.gpus.fresh() } : {}) }));
    }
  } catch (error) {
    await Promise.all(replicas.map((r) => r.close()));
    throw error;
  }
  const front = balancer
    ? await startBalancer(
        replicas.map((r) => r.url),
        { ...(options.port ? { port: options.port } : {}), ...(options.host ? { host: options.host } : {}) },
      )
    : undefined;
  const killed = new Set<number>();
  return {
    replicas,
    ...(front ? { balancer: front } : {}),
    kill: async (index) => {
      killed.add(index);
      await replicas[index]!.close();
    },
    close: async () => {
      await front?.close();
      await Promise.all(replicas.filter((_, i) => !killed.has(i)).map((r) => r.close()));
    },
  };
}
