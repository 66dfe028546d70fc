/**
 * IP address text, parsed without the platform's networking module so that the target rules run
 * anywhere (server, browser). The accepted forms are the usual ones: IPv4 as four decimal numbers
 * 0–255 without leading zeros; IPv6 as eight groups of 1–4 hex digits, one `::` standing for at
 * least one zero group, and optionally an IPv4 address in place of the last two groups.
 */

/** Four octets as an unsigned 32-bit number, or undefined when the text is not an IPv4 address. */
export const parseIpv4 = (text: string): number | undefined => {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^(?:0|[1-9][0-9]{0,2})$/.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
};

const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;

/** Groups of one side of `::`, an IPv4 address allowed as the last one (two groups); undefined when malformed. */
const parseGroups = (text: string, ipv4Last: boolean): number[] | undefined => {
  if (text === '') return [];
  const parts = text.split(':');
  const groups: number[] = [];
  for (const [index, part] of parts.entries()) {
    if (HEX_GROUP.test(part)) {
      groups.push(parseInt(part, 16));
      continue;
    }
    const v4 = ipv4Last && index === parts.length - 1 ? parseIpv4(part) : undefined;
    if (v4 === undefined) return undefined;
    groups.push(Math.floor(v4 / 0x10000), v4 % 0x10000);
  }
  return groups;
};

/** Eight 16-bit groups, or undefined when the text is not an IPv6 address (a zone index is not part of it). */
export const parseIpv6 = (text: string): number[] | undefined => {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  if (halves.length === 1) {
    const groups = parseGroups(text, true);
    return groups?.length === 8 ? groups : undefined;
  }
  const head = parseGroups(halves[0]!, false);
  const tail = parseGroups(halves[1]!, true);
  if (!head || !tail || head.length + tail.length > 7) return undefined;
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
};

/** An IPv6 zone index (`fe80::1%eth0`): the part after `%`. */
const ZONE = /%[0-9a-zA-Z.:-]+$/;

/** 4, 6, or 0 when the text is no IP address; an IPv6 address may carry a zone index. */
export const ipFamily = (text: string): 0 | 4 | 6 => {
  if (parseIpv4(text) !== undefined) return 4;
  return parseIpv6(text.replace(ZONE, '')) ? 6 : 0;
};

/** A test for IPv4 addresses (parsed) in `network/prefix`. */
export const ipv4Range = (network: string, prefix: number): ((address: number) => boolean) => {
  const base = parseIpv4(network);
  if (base === undefined || prefix < 0 || prefix > 32) throw new Error(`not an IPv4 range: ${network}/${prefix}`);
  const size = 2 ** (32 - prefix);
  const start = Math.floor(base / size);
  return (address) => Math.floor(address / size) === start;
};

/** A test for IPv6 addresses (parsed, eight groups) in `network/prefix`. */
export const ipv6Range = (network: string, prefix: number): ((address: readonly number[]) => boolean) => {
  const base = parseIpv6(network);
  if (!base || prefix < 0 || prefix > 128) throw new Error(`not an IPv6 range: ${network}/${prefix}`);
  // Per group, the bits of the prefix it holds (16, some, or none).
  const sizes = base.map((_, group) => 2 ** (16 - Math.min(16, Math.max(0, prefix - group * 16))));
  return (address) => sizes.every((size, group) => Math.floor(address[group]! / size) === Math.floor(base[group]! / size));
};
