import { ipFamily, ipv4Range, ipv6Range, parseIpv4, parseIpv6 } from './ip-address';

/**
 * Where a webhook may be sent, judged from the URL alone (the delivery side checks the address the
 * connection really uses too, against the same list). Production: https, and no loopback, private,
 * link-local or metadata host. Development (the local stack) allows http and local receivers.
 */
export const webhookTargetProblem = (text: string, development: boolean): string | undefined => {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username || url.password) return 'must not carry credentials';
  if (development) return url.protocol === 'https:' || url.protocol === 'http:' ? undefined : 'must be http or https';
  if (url.protocol !== 'https:') return 'must be https';
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal') || host.endsWith('.local')) return 'must not be a local host';
  if (ipFamily(host) !== 0 && isNonPublicAddress(host)) return 'must not be a private, loopback, link-local or metadata address';
  return undefined;
};

/**
 * Loopback, private, shared, link-local (metadata), multicast, documentation, reserved and
 * unspecified ranges, Azure's platform address (168.63.129.16, the wire server, as sensitive as the
 * metadata address), and the IPv6 forms that embed an IPv4 address (IPv4-compatible ::/96,
 * deprecated; mapped ::ffff:0:0/96; NAT64 64:ff9b::/96 and the local-use 64:ff9b:1::/48): those
 * are judged unsafe outright rather than decoded. IPv4 and IPv6 addresses are judged by their own
 * list each: ::ffff:0:0/96 covers the mapped forms, never a plain IPv4 address.
 */
const nonPublicV4 = (
  [
    ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['168.63.129.16', 32], ['169.254.0.0', 16], ['172.16.0.0', 12],
    ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 3],
  ] as const
).map(([network, prefix]) => ipv4Range(network, prefix));
const nonPublicV6 = (
  [
    ['::', 96], ['::ffff:0:0', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
  ] as const
).map(([network, prefix]) => ipv6Range(network, prefix));

/**
 * True for an address in one of those ranges, and for anything that is not a plain IP address: a
 * name, or an IPv6 address with a zone index (`fe80::1%eth0`, scoped to one host's link).
 */
export const isNonPublicAddress = (address: string): boolean => {
  const v4 = parseIpv4(address);
  if (v4 !== undefined) return nonPublicV4.some((inRange) => inRange(v4));
  const v6 = parseIpv6(address);
  if (v6) return nonPublicV6.some((inRange) => inRange(v6));
  return true;
};
