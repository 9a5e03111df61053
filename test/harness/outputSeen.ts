/** Waiting on what a running process has printed: a condition, never a fixed sleep. */
import type { ChildProcess } from 'node:child_process';

/** Resolves once `text()` (the output so far) matches `pattern`; rejects when the process exits first. */
export function seen(child: ChildProcess, text: () => string, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const exited = () => reject(new Error(`the process exited before ${pattern}: ${text()}`));
    const check = () => {
      if (!pattern.test(text())) return;
      child.stdout!.off('data', check);
      child.stderr!.off('data', check);
      child.off('exit', exited);
      resolve();
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.once('exit', exited);
    check();
  });
}
