/**
 * A listed file no reader can open (storage/objectStore.ts ObjectInfo.unreadable: a local name that is
 * not valid UTF-8, a file the OS cannot stat, a directory named like a file) is a problem of that file
 * alone: every reader that lists its dataset reports it with the same code and words, and reads the
 * rest. Codes: `not-a-file` for a directory, `unreadable-file` otherwise (docs/sources.md).
 */
import { NOT_A_FILE } from '../../storage/objectStore.js';
import { damaged, type DamagedUnit } from '../contract.js';

export function unreadableFile(sourceId: string, key: string, why: string): DamagedUnit {
  return damaged(sourceId, why === NOT_A_FILE ? 'not-a-file' : 'unreadable-file', `${key}: ${why}`);
}
