import type { LookupAddress } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import type { LookupFunction } from 'node:net';
import { isNonPublicAddress, webhookTargetProblem } from '../../domain/webhook-target';
import type { SendResult, WebhookSender } from '../../ports/webhooks';

/** Node's resolver and TLS client load with the first webhook rather than with the app. */
const dns = (): typeof import('node:dns') => require('node:dns');
const https = (): typeof import('node:https') => require('node:https');

/**
 * Resolves the host once and refuses a non-public address: the connection uses exactly the address
 * checked here (no second lookup, so DNS rebinding cannot swap it).
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dns().lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '', 4);
    const list = addresses as unknown as LookupAddress[];
    const refused = list.find((entry) => isNonPublicAddress(entry.address));
    if (refused) return callback(Object.assign(new Error(`refused: ${hostname} resolves to a non-public address`), { code: 'ETARGETREFUSED' }), '', 4);
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
    const first = list[0]!;
    callback(null, first.address, first.family);
  });
};

/** node:http(s) sender. Production refuses private targets at connect time; development allows local receivers. */
export const httpWebhookSender = (options: { development: boolean }): WebhookSender => ({
  send: ({ url, headers, body, timeoutMs }) =>
    new Promise<SendResult>((resolve) => {
      const started = performance.now();
      let timer: NodeJS.Timeout | undefined;
      let finished = false;
      const done = (httpStatus: number | null, error: string | null) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        resolve({ httpStatus, error, durationMs: Math.round(performance.now() - started) });
      };
      const problem = webhookTargetProblem(url, options.development);
      if (problem) return done(null, `target refused: ${problem}`);
      const target = new URL(url);
      const requestOptions: RequestOptions = {
        method: 'POST',
        headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
        ...(options.development ? {} : { lookup: publicOnlyLookup }),
      };
      const send = target.protocol === 'https:' ? https().request : httpRequest;
      const request = send(target, requestOptions, (response) => {
        response.resume();
        const status = response.statusCode ?? 0;
        if (status >= 300 && status < 400) return done(status, `redirect to ${response.headers.location ?? '(no location)'} not followed`);
        done(status, status >= 200 && status < 300 ? null : `HTTP ${status}`);
      });
      // A whole-attempt limit: a receiver that trickles bytes is cut at the same time as a silent one.
      timer = setTimeout(() => {
        done(null, `no answer within ${timeoutMs} ms`);
        request.destroy();
      }, timeoutMs);
      request.on('error', (error: NodeJS.ErrnoException) => done(null, `${error.code ?? 'error'}: ${error.message}`));
      request.end(body);
    }),
});
