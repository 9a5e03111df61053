import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The project-local tools folder that tools/install.sh fills. */
export const TOOLS_DIR = fileURLToPath(new URL('../tools/', import.meta.url));

/** The `temporal` CLI: $TEMPORAL_CLI_PATH, else the project's tools venv, else whatever is on PATH. */
export function temporalCliPath(): string {
  if (process.env.TEMPORAL_CLI_PATH) return process.env.TEMPORAL_CLI_PATH;
  const local = `${TOOLS_DIR}venv/bin/temporal`;
  return existsSync(local) ? local : 'temporal';
}
