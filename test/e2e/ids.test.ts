import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedInPost, stackEnv, startStack, stopStack, type StartedStack } from '../support/stack';

/**
 * Malformed ids sent to `npm start` over HTTP, as the black-box fuzz run sent them when each reached
 * Cosmos and answered 500: now a 4xx with a stable error code, and nothing logged as unexpected.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'ids-e2e-'));
let stack: StartedStack;

beforeAll(async () => {
  stack = await startStack(stackEnv(dataDir));
}, 120_000);
afterAll(async () => {
  if (process.env.SHOW_STACK_OUTPUT) console.log(stack.output());
  await stopStack(stack);
  rmSync(dataDir, { recursive: true, force: true });
});

/** The code of an error page (`<code>…</code>`) or of a JSON error body. */
const codeOf = (type: string | null, text: string) =>
  type?.startsWith('text/html') ? /<code>([a-z_]+)<\/code>/.exec(text)?.[1] : (JSON.parse(text) as { error?: string }).error;

describe('malformed ids on the local stack', () => {
  it('POST /api/receipts/refund with a blank id or lone surrogates: 400 invalid_input naming id', async () => {
    const post = await signedInPost(stack.baseUrl, Wallet.createRandom().privateKey);
    for (const id of [' ', '\uD800\uD800']) {
      // JSON.stringify writes the lone surrogates as `\ud800` escapes, as the fuzzer sent them.
      const answer = await post('/api/receipts/refund', { id });
      expect([answer.status, answer.json.error, answer.json.field], JSON.stringify(id)).toEqual([400, 'invalid_input', 'id']);
    }
  });

  it('GET and POST /onramp/sandbox/{session} with a%2Fb, 8,000 characters or lone surrogates: 404 not_found', async () => {
    for (const session of ['a%2Fb', 'x'.repeat(8_000), '%ED%A0%80%ED%A0%80', '%20', '..%2F..', 'a%23b', 'a%3Fb', 'a%5Cb']) {
      const url = `${stack.baseUrl}/onramp/sandbox/${session}`;
      const page = await fetch(url);
      const form = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'outcome=success', redirect: 'manual' });
      for (const [what, answer] of [['page', page], ['form', form]] as const) {
        const text = await answer.text();
        expect([answer.status, codeOf(answer.headers.get('content-type'), text)], `${what} ${session.slice(0, 20)}`).toEqual([404, 'not_found']);
        expect(answer.headers.get('x-correlation-id')).toBeTruthy();
      }
    }
  });

  it('logged none of them as an unexpected error', () => {
    expect(stack.output()).not.toMatch(/(receipts-refund|onramp-sandbox-page|onramp-sandbox-finish) failed/);
  });
});
