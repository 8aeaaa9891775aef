import { lookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

// Addresses a webhook must not reach unless the operator allows it: every special-purpose block of the IANA
// IPv4 and IPv6 registries that is not plain public unicast (this host, private networks, the cloud metadata
// service, and the transition ranges that carry an IPv4 address inside an IPv6 one and so could smuggle
// 127.0.0.1 past an IPv4-only check). Checked as CIDR ranges by node:net's BlockList, never by string shape.
// IPv4-mapped addresses (`::ffff:0:0/96`) need no entry: BlockList checks them against the IPv4 ranges, so
// `::ffff:127.0.0.1` is loopback and `::ffff:8.8.8.8` is as public as 8.8.8.8.
const RANGES: readonly (readonly [network: string, prefix: number, what: string])[] = [
  ['0.0.0.0', 8, 'this network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared address space (CGNAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, '6to4 relay anycast'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved and broadcast'],
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['::', 96, 'IPv4-compatible (deprecated)'],
  ['::ffff:0:0:0', 96, 'IPv4-translated'],
  ['64:ff9b::', 96, 'NAT64 IPv4/IPv6 translation'],
  ['64:ff9b:1::', 48, 'local-use IPv4/IPv6 translation'],
  ['100::', 64, 'discard-only'],
  ['2001::', 23, 'IETF protocol assignments (Teredo 2001::/32, benchmarking 2001:2::/48, ORCHID)'],
  ['2001:db8::', 32, 'documentation'],
  ['2002::', 16, '6to4'],
  ['3fff::', 20, 'documentation'],
  ['5f00::', 16, 'segment routing (SRv6) SIDs'],
  ['fc00::', 7, 'unique-local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local (deprecated)'],
  ['ff00::', 8, 'multicast'],
];

const familyOf = (network: string) => (isIP(network) === 4 ? 'ipv4' : 'ipv6');
const blocked = new BlockList();
for (const [network, prefix] of RANGES) blocked.addSubnet(network, prefix, familyOf(network));

/** An address as BlockList takes it: no IPv6 brackets, no zone (`fe80::1%eth0` is fe80::1 on some link). */
function bare(address: string): string {
  return address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
}

/**
 * Why an address is refused as a webhook target ("127.0.0.1 is in 127.0.0.0/8 (loopback)"), or undefined
 * when it is public. Anything that is not an IP address at all is refused: the check fails closed.
 */
export function refusalOf(address: string): string | undefined {
  const ip = bare(address);
  const family = isIP(ip);
  if (family === 0) return `${address} is not an IP address`;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (!blocked.check(ip, type)) return undefined;
  // The failing path only: name the range, for the administrator reading the refusal.
  const hit = RANGES.find(([network, prefix]) => {
    const one = new BlockList();
    one.addSubnet(network, prefix, familyOf(network));
    return one.check(ip, type);
  });
  return `${ip} is in ${hit ? `${hit[0]}/${hit[1]} (${hit[2]})` : 'a special-purpose range'}, not a public address`;
}

export function isPrivateAddress(address: string): boolean {
  return refusalOf(address) !== undefined;
}

export class TargetRefused extends Error {}

const ALLOW_HINT = '(set WEBHOOK_ALLOW_PRIVATE=true to allow)';

/** The refusal of a literal address as a TargetRefused, or undefined when it is allowed. */
export function refuseAddress(address: string, allowPrivate: boolean): TargetRefused | undefined {
  const why = allowPrivate ? undefined : refusalOf(address);
  return why === undefined ? undefined : new TargetRefused(`${why} ${ALLOW_HINT}`);
}

/**
 * The host of a URL as DNS and net.connect want it (no IPv6 brackets). The WHATWG URL parser has already
 * made every IPv4 spelling canonical (`0x7f.1`, `2130706433`, `017700000001` → 127.0.0.1) and every IPv6
 * one compressed (`[::127.0.0.1]` → `::7f00:1`), so the CIDR check sees the address that is connected to.
 */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[|\]$/g, '');

/** Resolves a host to every address; refuses when any is not public, unless private targets are allowed. */
export async function resolveTarget(host: string, allowPrivate: boolean): Promise<LookupAddress[]> {
  let addresses: LookupAddress[];
  const literal = bare(host);
  if (isIP(literal)) addresses = [{ address: literal, family: isIP(literal) }];
  else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch (err) {
      throw new TargetRefused(`${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'DNS error'})`);
    }
  }
  if (!allowPrivate) {
    for (const a of addresses) {
      const why = refusalOf(a.address);
      if (why !== undefined) throw new TargetRefused(`${host === a.address ? '' : `${host} resolves to ${a.address}: `}${why} ${ALLOW_HINT}`);
    }
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
