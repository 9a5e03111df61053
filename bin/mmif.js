#!/usr/bin/env node
// The installed `mmif` command (package.json "bin"; npx, npm link, global installs): the CLI is
// TypeScript, so this registers tsx's loader in-process and runs cli/mmif.ts. Resolved from this
// file's real location, so a symlink in any bin folder works.
import { register } from 'tsx/esm/api';

register();
await import(new URL('../cli/mmif.ts', import.meta.url).href);
