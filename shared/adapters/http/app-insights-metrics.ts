import type { TokenCredential } from '@azure/core-auth';
import type { MetricsSink } from '../../ports/metrics';

/** Application Insights accepts Entra tokens for this audience when local (key) auth is off. */
const INGESTION_SCOPE = 'https://monitor.azure.com//.default';

const part = (connectionString: string, key: string) =>
  connectionString
    .split(';')
    .map((entry) => entry.split('='))
    .find(([name]) => name?.toLowerCase() === key.toLowerCase())?.[1];

/**
 * Metrics sent to Application Insights' ingestion endpoint as metric telemetry (they land in
 * `customMetrics`), signed in with the app's identity: the resource has local auth disabled.
 */
export const appInsightsMetrics = (connectionString: string, credential: TokenCredential): MetricsSink => {
  const iKey = part(connectionString, 'InstrumentationKey');
  const endpoint = part(connectionString, 'IngestionEndpoint') ?? 'https://dc.services.visualstudio.com/';
  if (!iKey) throw new Error('APPLICATIONINSIGHTS_CONNECTION_STRING: has no InstrumentationKey');
  let batch: unknown[] = [];
  return {
    record: (name, value, dimensions = {}) => {
      batch.push({
        name: `Microsoft.ApplicationInsights.${iKey.replace(/-/g, '')}.Metric`,
        time: new Date().toISOString(),
        iKey,
        data: { baseType: 'MetricData', baseData: { ver: 2, metrics: [{ name, value, count: 1 }], properties: dimensions } },
      });
    },
    flush: async () => {
      if (batch.length === 0) return;
      const items = batch;
      batch = [];
      const token = await credential.getToken(INGESTION_SCOPE);
      const response = await fetch(new URL('v2.1/track', endpoint.endsWith('/') ? endpoint : `${endpoint}/`), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token.token}` }) },
        body: JSON.stringify(items),
        signal: AbortSignal.timeout(10_000),
      });
      if (!response.ok) throw new Error(`metrics ingestion answered ${response.status}`);
    },
  };
};

/** Where Application Insights is not configured (the local stack): metrics go to the log, if anywhere. */
export const logMetrics = (log: (line: string) => void = () => {}): MetricsSink => ({
  record: (name, value, dimensions = {}) => log(`metric ${name}=${value} ${JSON.stringify(dimensions)}`),
  flush: async () => {},
});
