import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { onrampSessionClaimId } from '../../shared/app/onramp';
import { ID_PATTERN, Id, MAX_STORED_ID_LENGTH, isId, isStorableId, unstorableIdReason } from '../../shared/domain/ids';
import { newReceiptId, receiptClaimId } from '../../shared/domain/receipt';
import { paymentProofClaimId } from '../../shared/domain/x402';
import { depositShardId } from '../../shared/domain/payment';
import { ReceiptIdInput } from '../../shared/domain/receipt-request';

/** Each id and why the store cannot hold it (null: it can); the reason names the rule that refuses it. */
const storeTable: Array<[string, string | null]> = [
  ['R-ABC123', null],
  ['x'.repeat(MAX_STORED_ID_LENGTH), null],
  ['😀'.repeat(127), null],
  ['a b', null],
  ['a.b', null],
  ['...', null],
  ["a'b\"c:d+e&f=g", null],
  ['é', null],
  ['', 'empty or blank'],
  [' ', 'empty or blank'],
  ['\t\n', 'empty or blank'],
  ['\u00A0\u3000', 'empty or blank'],
  ['x'.repeat(MAX_STORED_ID_LENGTH + 1), 'longer than 255'],
  ['x'.repeat(8_000), 'longer than 255'],
  ['a/b', '/ \\ # ? %'],
  ['a\\b', '/ \\ # ? %'],
  ['a#b', '/ \\ # ? %'],
  ['a?b', '/ \\ # ? %'],
  ['a%2Fb', '/ \\ # ? %'],
  ['%', '/ \\ # ? %'],
  ['\uD800\uD800', 'lone surrogate'],
  ['a\uDC00', 'lone surrogate'],
  ['a\uD800', 'lone surrogate'],
  ['a\u0000b', 'control character'],
  ['a\nb', 'control character'],
  ['a\u007F', 'control character'],
  ['a\u0085b', 'control character'],
  ['a ', 'starts or ends with whitespace'],
  [' a', 'starts or ends with whitespace'],
  ['a\u00A0', 'starts or ends with whitespace'],
  ['.', 'dot segment'],
  ['..', 'dot segment'],
];

describe('what the document store can hold as an id or partition key value', () => {
  it.each(storeTable)('%j: %s', (id, reason) => {
    if (reason === null) {
      expect(unstorableIdReason(id)).toBeNull();
      expect(isStorableId(id)).toBe(true);
    } else {
      expect(unstorableIdReason(id)).toContain(reason);
      expect(isStorableId(id)).toBe(false);
    }
  });

  it('refuses what is not a string', () => {
    for (const value of [undefined, null, 1, {}, ['a']]) expect(isStorableId(value), String(value)).toBe(false);
  });
});

/** Each id a request may name, and whether the id rule takes it. */
const requestTable: Array<[string, boolean]> = [
  ['R-ABC123', true],
  ['itm_0123456789', true],
  ['sub_abc', true],
  ['sbx_0123456789abcdef01234567', true],
  ['8d5e2a3c-1f7b-4e7a-9a51-3c1f0e2b7d44', true],
  ['a'.repeat(64), true],
  ['_', true],
  ['a'.repeat(65), false],
  ['', false],
  [' ', false],
  ['a b', false],
  ['\uD800\uD800', false],
  ['a/b', false],
  ['a%2Fb', false],
  ['..', false],
  ['é', false],
  ['a.b', false],
  ['a\n', false],
];

describe('the id rule of requests', () => {
  it.each(requestTable)('%j: %s', (id, valid) => {
    expect(isId(id)).toBe(valid);
    expect(Id.safeParse(id).success).toBe(valid);
    expect(ID_PATTERN.test(id)).toBe(valid);
  });

  it('takes only ids the store can hold', () => {
    fc.assert(fc.property(fc.stringMatching(ID_PATTERN), (id) => isStorableId(id)), { numRuns: 300, seed: 1 });
  });

  it('keeps every key derived from ids it takes within what the store can hold', () => {
    const longest = 'z'.repeat(64);
    const address = '0x' + 'ab'.repeat(20);
    const keys = [
      newReceiptId('a'.repeat(16)),
      receiptClaimId(longest),
      onrampSessionClaimId('sandbox', longest),
      paymentProofClaimId(8453, address, address, '0x' + 'f'.repeat(64)),
      depositShardId(8453, address),
    ];
    for (const key of keys) expect(unstorableIdReason(key), key).toBeNull();
  });

  it('is the rule of a receipt id chosen by the caller, which also keeps the route words out', () => {
    expect(ReceiptIdInput.safeParse('R-1').success).toBe(true);
    for (const id of [' ', '\uD800\uD800', 'a'.repeat(65), 'a/b', 'status', 'Refund']) expect(ReceiptIdInput.safeParse(id).success, id).toBe(false);
  });
});
