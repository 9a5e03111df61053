import { parseFlags } from '../../config/commandFlags.js';
import { simulatorOptionsFromEnv, startSimulator } from '../../simulator/server.js';
import { EXIT } from '../exitCodes.js';

export const SIMULATOR_USAGE = `usage: mmif simulator [--port N]
  Serve the OpenAI-compatible simulator on 127.0.0.1 (SIM_PORT, SIM_SEED, SIM_LATENCY_MS, SIM_RATE_*,
  SIM_COMPLIANCE_RATE, SIM_JUDGE_LENIENCY...; see docs/architecture.md). Everything it answers is simulated.`;

export async function simulatorCommand(args: string[]): Promise<number> {
  const { values } = parseFlags({ args, options: { port: { type: 'string' } } });
  const options = simulatorOptionsFromEnv();
  const sim = await startSimulator({ ...options, port: values.port ? Number(values.port) : options.port });
  console.log(`mmif simulator (all replies are SIMULATED) listening on ${sim.url}`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await sim.close();
  return EXIT.ok;
}
