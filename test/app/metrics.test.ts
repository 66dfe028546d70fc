import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { appInsightsMetrics } from '../../shared/adapters/http/app-insights-metrics';
import { reportMetrics } from '../../shared/app/report-metrics';
import { memoryDeps } from '../../shared/composition';
import { loadConfig } from '../../shared/config';
import { allQueues } from '../../shared/registry';

describe('metrics for the alerts', () => {
  it('reports every queue’s depth and the relayer balance, then flushes', async () => {
    const recorded: Array<[string, number, Record<string, string> | undefined]> = [];
    let flushed = 0;
    const deps = memoryDeps({
      queueDepth: async (queue) => (queue === 'outbox' ? 3 : 0),
      chain: { relayerBalance: async () => 1_500_000_000_000_000_000n } as never,
      metrics: { record: (name, value, dimensions) => void recorded.push([name, value, dimensions]), flush: async () => void flushed++ },
    });
    await reportMetrics(deps);
    expect(recorded.filter(([name]) => name === 'queue.depth').map(([, , d]) => d!.queue).sort()).toEqual(allQueues.flatMap((q) => [q, `${q}-poison`]).sort());
    expect(recorded).toContainEqual(['queue.depth', 3, { queue: 'outbox' }]);
    expect(recorded).toContainEqual(['relayer.balance.eth', 1.5, undefined]);
    expect(flushed).toBe(1);
  });

  it('sends metric telemetry to the Application Insights ingestion endpoint with the identity’s token', async () => {
    const requests: Array<{ url?: string; auth?: string; body: string }> = [];
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        requests.push({ url: request.url, auth: request.headers.authorization, body });
        response.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const scopes: string[] = [];
    const sink = appInsightsMetrics(`InstrumentationKey=11111111-2222-3333-4444-555555555555;IngestionEndpoint=${endpoint}`, {
      getToken: async (scope) => {
        scopes.push(String(scope));
        return { token: 'identity-token', expiresOnTimestamp: Date.now() + 60_000 };
      },
    });
    sink.record('queue.depth', 2, { queue: 'outbox' });
    await sink.flush();
    await sink.flush();
    server.close();
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ url: '/v2.1/track', auth: 'Bearer identity-token' });
    expect(JSON.parse(requests[0]!.body)).toEqual([
      expect.objectContaining({ iKey: '11111111-2222-3333-4444-555555555555', data: { baseType: 'MetricData', baseData: { ver: 2, metrics: [{ name: 'queue.depth', value: 2, count: 1 }], properties: { queue: 'outbox' } } } }),
    ]);
    expect(scopes).toEqual(['https://monitor.azure.com//.default']);
  });

  it('refuses to start with a Key Vault reference that did not resolve', () => {
    expect(() => loadConfig({ STORE: 'memory', APP_ENV: 'development', JWT_SECRET: '@Microsoft.KeyVault(SecretUri=https://kv.vault.azure.net/secrets/jwt)' })).toThrowError(/JWT_SECRET: the Key Vault reference did not resolve/);
  });
});
