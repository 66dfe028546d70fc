import { BlockList, isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ipFamily, parseIpv4, parseIpv6 } from '../../shared/domain/ip-address';
import { isNonPublicAddress } from '../../shared/domain/webhook-target';

/** The same ranges, judged by Node's own address parser and BlockList: the reference. */
const referenceV4 = new BlockList();
const referenceV6 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['168.63.129.16', 32], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 3],
] as const) referenceV4.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 96], ['::ffff:0:0', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
] as const) referenceV6.addSubnet(network, prefix, 'ipv6');
const referenceNonPublic = (address: string) => {
  const family = isIP(address);
  if (family === 0) return true;
  return family === 4 ? referenceV4.check(address, 'ipv4') : referenceV6.check(address, 'ipv6');
};

/** A small seeded generator, so a failure names an input that can be replayed. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

const addresses = (count: number, next: () => number): string[] => {
  const int = (below: number) => Math.floor(next() * below);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
  // Range edges: each network, and the addresses just inside and outside its prefix.
  const v4Bases = [0x00000000, 0x0a000000, 0x64400000, 0x7f000000, 0xa83f8110, 0xa9fe0000, 0xac100000, 0xc0000000, 0xc0000200, 0xc0a80000, 0xc6120000, 0xc6336400, 0xcb007100, 0xe0000000, 0x08080808];
  const v6Bases = [[0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0xffff], [0x64, 0xff9b, 0, 0, 0, 0], [0x64, 0xff9b, 1, 0, 0, 0], [0x100, 0, 0, 0, 0, 0], [0x2001, 0xdb8, 0, 0, 0, 0], [0xfc00, 0, 0, 0, 0, 0], [0xfe80, 0, 0, 0, 0, 0], [0xff00, 0, 0, 0, 0, 0], [0x2606, 0x4700, 0x4700, 0, 0, 0]];
  const v4Number = () => (next() < 0.6 ? (pick(v4Bases) + pick([0, 1, -1, 0xff, 0x100, 0x10000, 0x400000, 0x1000000, -0x1000000, int(2 ** 32)])) >>> 0 : int(2 ** 32));
  const octetText = (octet: number) => (next() < 0.03 ? `0${octet}` : next() < 0.02 ? String(octet + 256) : String(octet));
  const v4Text = (value: number) => [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].map(octetText).join('.');
  const groups = (): number[] => {
    const base = next() < 0.7 ? [...pick(v6Bases)] : Array.from({ length: 6 }, () => int(0x10000));
    if (next() < 0.5) base[int(6)] = (base[int(6)]! + pick([1, -1, 0x80, 0x200, 0x8000])) & 0xffff;
    const v4 = v4Number();
    return [...base, v4 >>> 16, v4 & 0xffff];
  };
  const v6Text = (g: number[]) => {
    let parts = g.map((group) => {
      const hex = group.toString(16);
      return next() < 0.1 ? hex.toUpperCase() : next() < 0.05 ? hex.padStart(4, '0') : next() < 0.01 ? `0${hex.padStart(4, '0')}` : hex;
    });
    const embed = next() < 0.3;
    if (embed) parts = [...parts.slice(0, 6), v4Text(g[6]! * 0x10000 + g[7]!)];
    if (next() < 0.7) {
      // Compress a run of groups: zeros mostly, sometimes other groups, sometimes none (not a valid form).
      const start = int(parts.length);
      const length = next() < 0.95 ? 1 + int(parts.length - start) : 0;
      if (next() < 0.9 && !parts.slice(start, start + length).every((part) => /^0+$/.test(part))) return parts.join(':');
      return `${parts.slice(0, start).join(':')}::${parts.slice(start + length).join(':')}`;
    }
    return parts.join(':');
  };
  const mangle = (text: string) => {
    const at = int(text.length + 1);
    return pick([
      () => text.slice(0, at) + pick([':', '.', '::', 'g', '0', '%', ' ']) + text.slice(at),
      () => text.slice(0, at) + text.slice(at + 1),
      () => `${text}:0`,
      () => `0:${text}`,
    ])();
  };
  return Array.from({ length: count }, () => {
    const text = next() < 0.3 ? v4Text(v4Number()) : v6Text(groups());
    return next() < 0.1 ? mangle(text) : text;
  });
};

describe('IP address parsing without node:net', () => {
  const samples = addresses(200_000, random(20_240_611));

  it('recognises exactly the addresses node:net does', () => {
    const differing = samples.filter((text) => ipFamily(text) !== isIP(text));
    expect(differing.slice(0, 10)).toEqual([]);
    // The samples cover every answer, valid and not.
    const families = new Set(samples.map(ipFamily));
    expect([...families].sort()).toEqual([0, 4, 6]);
    expect(samples.filter((text) => isIP(text) === 6 && text.includes('.')).length).toBeGreaterThan(1000);
  });

  it('judges every address as the BlockList of the same ranges does (zone indexes aside: below)', () => {
    const differing = samples.filter((text) => !text.includes('%') && isNonPublicAddress(text) !== referenceNonPublic(text));
    expect(differing.slice(0, 10)).toEqual([]);
    const judged = samples.filter((text) => isIP(text) !== 0);
    expect(judged.filter((text) => isNonPublicAddress(text)).length).toBeGreaterThan(judged.length / 10);
    expect(judged.filter((text) => !isNonPublicAddress(text)).length).toBeGreaterThan(judged.length / 10);
  });

  it('reads the usual forms', () => {
    expect(parseIpv4('192.168.0.1')).toBe(0xc0a80001);
    expect(parseIpv4('01.2.3.4')).toBeUndefined();
    expect(parseIpv4('256.0.0.1')).toBeUndefined();
    expect(parseIpv6('::')).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIpv6('::ffff:10.0.0.1')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0a00, 1]);
    expect(parseIpv6('2001:DB8::1')).toEqual([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]);
    expect(parseIpv6('1:2:3:4:5:6:7::')).toEqual([1, 2, 3, 4, 5, 6, 7, 0]);
    expect(parseIpv6('1:2:3:4:5:6:7:8::')).toBeUndefined();
    expect(parseIpv6('1::2::3')).toBeUndefined();
    expect(parseIpv6('1.2.3.4::')).toBeUndefined();
  });

  it('treats an address with a zone index as not public, whatever the address', () => {
    // BlockList answers these by the address for some and not for others; no URL host and no
    // resolved address carries a zone, and a scoped address is never a public destination.
    expect(samples.filter((text) => text.includes('%') && isIP(text) !== 0).every(isNonPublicAddress)).toBe(true);
    expect(ipFamily('fe80::1%eth0')).toBe(6);
    expect(isNonPublicAddress('fe80::1%eth0')).toBe(true);
    expect(isNonPublicAddress('2606:4700::1%eth0')).toBe(true);
  });
});
