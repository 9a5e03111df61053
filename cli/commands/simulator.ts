/**
 * `mmif simulator`: serves the OpenAI-compatible simulator (simulator/), optionally as several
 * replicas, for tests, benchmarks and offline runs.
 */
import { parseFlags } from '../../config/commandFlags.js';
import { BALANCER_MODES, type BalancerMode } from '../../simulator/balancer.js';
import { startReplicas } from '../../simulator/replicas.js';
import { simulatorOptionsFromEnv } from '../../simulator/server.js';
import { EXIT } from '../exitCodes.js';

export const SIMULATOR_USAGE = `usage: mmif simulator [--port N] [--replicas N [--balancer round-robin]]
  Serve the OpenAI-compatible simulator on 127.0.0.1 (SIM_PORT, SIM_SEED, SIM_LATENCY_MS, SIM_RATE_*,
  SIM_COMPLIANCE_RATE, SIM_JUDGE_LENIENCY...; see docs/architecture.md). Everything it answers is simulated.
  --replicas N     N instances as data-parallel replicas, each with its own prefix and vision caches and
                   GPUs (SIM_GPU_*); list their URLs in models.<role>.baseUrls, or put a balancer in front
  --balancer round-robin
                   one URL in front of the replicas sending each request to the next in turn, as a
                   round-robin load balancer does (--port is then the balancer's, the replicas take the next ports)`;

export async function simulatorCommand(args: string[]): Promise<number> {
  const { values } = parseFlags({ args, options: { port: { type: 'string' }, replicas: { type: 'string' }, balancer: { type: 'string' } } });
  const count = values.replicas === undefined ? 1 : Number(values.replicas);
  if (!Number.isInteger(count) || count < 1 || count > 64) {
    console.error(`mmif simulator: --replicas ${values.replicas} is not a whole number from 1 to 64\n${SIMULATOR_USAGE}`);
    return EXIT.usage;
  }
  const balancer = values.balancer as BalancerMode | undefined;
  if (balancer !== undefined && !BALANCER_MODES.includes(balancer)) {
    console.error(`mmif simulator: --balancer ${values.balancer} is not one of ${BALANCER_MODES.join(', ')}\n${SIMULATOR_USAGE}`);
    return EXIT.usage;
  }
  const options = simulatorOptionsFromEnv();
  const set = await startReplicas(count, { ...options, port: values.port ? Number(values.port) : options.port }, balancer);
  const urls = set.replicas.map((r) => r.url);
  if (set.balancer) console.log(`mmif simulator (all replies are SIMULATED): ${balancer} balancer on ${set.balancer.url} in front of ${urls.join(', ')}`);
  else if (count > 1) console.log(`mmif simulator (all replies are SIMULATED): ${count} replicas on ${urls.join(', ')}`);
  else console.log(`mmif simulator (all replies are SIMULATED) listening on ${urls[0]}`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await set.close();
  return EXIT.ok;
}
