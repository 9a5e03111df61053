/**
 * Separate hosts on one machine: a bridge in this (the root) network namespace with the services'
 * address, and one network namespace per host joined to it by a veth pair, each with an address of
 * its own. Addresses come from the benchmarking range 198.18.0.0/15 (RFC 2544), which nothing else on
 * the machine uses; names carry this process's pid, so concurrent runs do not collide. A process in a
 * host's namespace reaches the services only at `servicesAddress` (its loopback is its own) and is
 * reached at its host's address. Needs root and iproute2; `createHostNetwork` throws
 * `HostNetworkUnavailable` saying why when the machine refuses, so a test can skip by name.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export class HostNetworkUnavailable extends Error {}

export interface HostNetwork {
  /** The services' address on the bridge (bind Temporal, the object store and the endpoint here). */
  servicesAddress: string;
  hosts: Array<{ netns: string; address: string }>;
  /** Deletes the namespaces (their veth ends go with them) and the bridge. */
  teardown(): Promise<void>;
}

const SUBNET = '198.18.0';

export async function createHostNetwork(count: number): Promise<HostNetwork> {
  await removeLeftovers();
  const tag = `mf${process.pid}`;
  const bridge = `${tag}br`;
  const hosts = Array.from({ length: count }, (_, i) => ({ netns: `mmif-host-${process.pid}-${i + 1}`, address: `${SUBNET}.${11 + i}` }));
  const ip = (...args: string[]) => run('ip', args);
  const teardown = async () => {
    for (const h of hosts) await ip('netns', 'del', h.netns).catch(() => {});
    await ip('link', 'del', bridge).catch(() => {});
  };
  try {
    await ip('link', 'add', 'name', bridge, 'type', 'bridge');
  } catch (err) {
    throw new HostNetworkUnavailable(`network namespaces cannot be made here: ip link add ... type bridge: ${oneLine(err)}`);
  }
  try {
    await ip('addr', 'add', `${SUBNET}.1/24`, 'dev', bridge);
    await ip('link', 'set', bridge, 'up');
    for (const [i, h] of hosts.entries()) {
      const outer = `${tag}h${i + 1}`;
      const inner = `${tag}n${i + 1}`;
      await ip('netns', 'add', h.netns);
      await ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner);
      await ip('link', 'set', inner, 'netns', h.netns);
      await ip('link', 'set', outer, 'master', bridge, 'up');
      await ip('-n', h.netns, 'addr', 'add', `${h.address}/24`, 'dev', inner);
      await ip('-n', h.netns, 'link', 'set', inner, 'up');
      await ip('-n', h.netns, 'link', 'set', 'lo', 'up');
    }
  } catch (err) {
    await teardown();
    throw new HostNetworkUnavailable(`network namespaces cannot be made here: ${oneLine(err)}`);
  }
  return { servicesAddress: `${SUBNET}.1`, hosts, teardown };
}

/** Namespaces and bridges of runs that died before their teardown (their pid is gone): they would hold the addresses. */
async function removeLeftovers(): Promise<void> {
  const alive = (pid: string) => {
    try {
      process.kill(Number(pid), 0);
      return true;
    } catch {
      return false;
    }
  };
  const namespaces = await run('ip', ['netns', 'list']).then(
    (r) => r.stdout,
    () => '',
  );
  for (const [, name, pid] of namespaces.matchAll(/^(mmif-host-(\d+)-\d+)/gm)) if (!alive(pid!)) await run('ip', ['netns', 'del', name!]).catch(() => {});
  const bridges = await run('ip', ['-o', 'link', 'show', 'type', 'bridge']).then(
    (r) => r.stdout,
    () => '',
  );
  for (const [, name, pid] of bridges.matchAll(/^\d+: (mf(\d+)br)[:@]/gm)) if (!alive(pid!)) await run('ip', ['link', 'del', name!]).catch(() => {});
}

const oneLine = (err: unknown) => ((err as { stderr?: string }).stderr || (err as Error).message).trim().split('\n')[0];
