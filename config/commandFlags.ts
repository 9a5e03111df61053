/**
 * A command's flags, parsed by node's `parseArgs`: a mistyped flag is answered with the closest one
 * the command takes (`unknown option '--conifg'; did you mean --config?`), as a mistyped config field is.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closestName } from '../domain/closestName.js';

export function parseFlags<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    const unknown = (err as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /'--([^'=]+)/.exec((err as Error).message)?.[1] : undefined;
    const near = unknown === undefined ? undefined : closestName(unknown, Object.keys(config.options ?? {}));
    if (near === undefined) throw err;
    // The same error, so callers still tell a usage error by its code (exit 2).
    (err as Error).message = `unknown option '--${unknown}'; did you mean --${near}?`;
    throw err;
  }
}
