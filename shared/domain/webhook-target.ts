import { isIP } from 'node:net';

/**
 * Where a webhook may be sent, judged from the URL alone (the delivery side checks the address the
 * connection really uses too). Production: https, and no loopback, private, link-local or metadata
 * host. Development (the local stack) allows http and local receivers.
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
  if (isIP(host) && isNonPublicAddress(host)) return 'must not be a private, loopback, link-local or metadata address';
  return undefined;
};

const ipv4Octets = (address: string) => address.split('.').map(Number);

/** Loopback, private, shared, link-local (metadata), multicast, reserved and unspecified ranges. */
export const isNonPublicAddress = (address: string): boolean => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return isNonPublicAddress(mapped[1]!);
  if (isIP(address) === 4) {
    const [a, b] = ipv4Octets(address) as [number, number];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 192 && b === 0) ||
      (a === 198 && (b === 18 || b === 19)) ||
      a >= 224
    );
  }
  const lower = address.toLowerCase();
  return (
    lower === '::' ||
    lower === '::1' ||
    /^f[cd][0-9a-f]{2}:/.test(lower) ||
    /^fe[89ab][0-9a-f]:/.test(lower) ||
    lower.startsWith('ff') ||
    lower.startsWith('64:ff9b:') ||
    lower.startsWith('2001:db8:')
  );
};
