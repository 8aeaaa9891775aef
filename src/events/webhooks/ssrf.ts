import { lookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

// Addresses a webhook must not reach unless the operator allows it: this host, private networks, the cloud
// metadata service and other non-public ranges where an attacker-chosen URL could read internal services.
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96]] as const) blocked.addSubnet(net, prefix, 'ipv6');

/** The IPv4 address inside an IPv4-mapped or -compatible IPv6 address (`::ffff:127.0.0.1`), if any. */
function embeddedIpv4(address: string): string | undefined {
  const m = /^::(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return m[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return undefined;
  const [a, b] = [parseInt(hex[1], 16), parseInt(hex[2], 16)];
  return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
}

export function isPrivateAddress(address: string): boolean {
  const v4 = isIP(address) === 6 ? embeddedIpv4(address) : address;
  if (v4 !== undefined && isIP(v4) === 4) return blocked.check(v4, 'ipv4');
  return blocked.check(address, 'ipv6');
}

export class TargetRefused extends Error {}

/** The host of a URL as DNS and net.connect want it (no IPv6 brackets). */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[|\]$/g, '');

/** Resolves a host to every address; refuses when any is not public, unless private targets are allowed. */
export async function resolveTarget(host: string, allowPrivate: boolean): Promise<LookupAddress[]> {
  let addresses: LookupAddress[];
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch (err) {
      throw new TargetRefused(`${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'DNS error'})`);
    }
  }
  if (!allowPrivate) {
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (bad) throw new TargetRefused(`${host} resolves to ${bad.address}, a loopback, private, link-local or metadata address (set WEBHOOK_ALLOW_PRIVATE=true to allow)`);
  }
  return addresses;
}

/** Checks a subscription URL: http(s), no credentials in it, and a public target (unless allowed). */
export async function checkTargetUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetRefused('is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TargetRefused('must be an http or https URL');
  if (url.username || url.password) throw new TargetRefused('must not carry credentials');
  await resolveTarget(hostOf(url), allowPrivate);
  return url;
}
