import { describe, expect, it } from 'vitest';
import { isNonPublicAddress, webhookTargetProblem } from '../../shared/domain/webhook-target';

/** The rule list is shared by the creation-time check (the URL) and the connect-time check (the resolved address). */
describe('webhook target rules', () => {
  const refused = [
    // IPv4-compatible IPv6 (::/96, deprecated): judged by the whole range, whatever IPv4 address it embeds
    '::7f00:1',
    '::127.0.0.1',
    '::a00:1',
    '::10.0.0.1',
    '::a9fe:a9fe',
    '::8.8.8.8',
    '::',
    '::1',
    // local-use NAT64 (RFC 8215), next to the well-known 64:ff9b::/96
    '64:ff9b:1::a00:1',
    '64:ff9b:1::7f00:1',
    '64:ff9b:1:ffff:ffff:ffff:ffff:ffff',
    '64:ff9b::a00:5',
    // Azure's platform (wire server) address, like the metadata address
    '168.63.129.16',
    '169.254.169.254',
    '::ffff:168.63.129.16',
  ];

  it.each(refused)('%s is not a public address', (address) => {
    expect(isNonPublicAddress(address)).toBe(true);
  });

  it.each(refused)('a URL with host %s is refused when it is given (production)', (address) => {
    const host = address.includes(':') ? `[${address}]` : address;
    expect(webhookTargetProblem(`https://${host}/hook`, false)).toBe('must not be a private, loopback, link-local or metadata address');
  });

  it.each(['168.63.129.15', '168.63.129.17', '64:ff9b:2::a00:1', '64:ff9a:ffff::1', '1::7f00:1', '2606:4700:4700::1111', '8.8.8.8'])(
    '%s, next to those ranges, stays allowed',
    (address) => {
      expect(isNonPublicAddress(address)).toBe(false);
      const host = address.includes(':') ? `[${address}]` : address;
      expect(webhookTargetProblem(`https://${host}/hook`, false)).toBeUndefined();
    },
  );
});
