import { describe, expect, it } from 'vitest';
import { GENERIC_FAILURE, failureCodes, isFailureCode } from '../../shared/domain/failures';
import { portalCodeFor, sandboxCodes, stripeCodes } from '../../shared/domain/onramp-codes';

const tables = { stripe: stripeCodes, sandbox: sandboxCodes } as const;
const providers = Object.keys(tables) as Array<keyof typeof tables>;

describe('on-ramp provider codes', () => {
  for (const provider of providers) {
    const table = tables[provider];

    it(`${provider}: every code maps to a registered PORTAL_* failure code`, () => {
      const entries = Object.entries(table);
      expect(entries.length).toBeGreaterThan(10);
      const unregistered = entries.filter(([, code]) => !isFailureCode(code) || !failureCodes.includes(code));
      expect(unregistered).toEqual([]);
    });

    it(`${provider}: each of its codes reads back as the table says`, () => {
      for (const [providerCode, portalCode] of Object.entries(table)) {
        expect(portalCodeFor(provider, providerCode), providerCode).toBe(portalCode);
      }
    });

    it(`${provider}: an unknown, empty or absent code is the generic failure`, () => {
      for (const providerCode of ['no_such_code', 'CARD_DECLINED', ' card_declined', '', null]) {
        expect(portalCodeFor(provider, providerCode), String(providerCode)).toBe('PORTAL_SYS_GENERIC_FAILURE');
      }
      expect(GENERIC_FAILURE).toBe('PORTAL_SYS_GENERIC_FAILURE');
    });

    it(`${provider}: names an object inherits are not codes`, () => {
      for (const providerCode of ['__proto__', 'toString', 'constructor', 'hasOwnProperty', 'valueOf', 'isPrototypeOf']) {
        expect(portalCodeFor(provider, providerCode), providerCode).toBe('PORTAL_SYS_GENERIC_FAILURE');
      }
    });
  }

  it('the two tables are read separately', () => {
    // A sandbox-only code means nothing to Stripe, and the other way round.
    expect(portalCodeFor('sandbox', 'kyc_dob_mismatch')).toBe('PORTAL_KYC_DOB_MISMATCH');
    expect(portalCodeFor('stripe', 'kyc_dob_mismatch')).toBe('PORTAL_SYS_GENERIC_FAILURE');
    expect(portalCodeFor('stripe', 'date_of_birth_mismatch')).toBe('PORTAL_KYC_DOB_MISMATCH');
    expect(portalCodeFor('sandbox', 'date_of_birth_mismatch')).toBe('PORTAL_SYS_GENERIC_FAILURE');
  });

  it("Stripe's on-ramp error codes", () => {
    expect(portalCodeFor('stripe', 'crypto_onramp_unsupportable_customer')).toBe('PORTAL_REGION_UNSUPPORTED');
    expect(portalCodeFor('stripe', 'crypto_onramp_transaction_blocked')).toBe('PORTAL_PAY_TRANSACTION_BLOCKED');
  });
});
