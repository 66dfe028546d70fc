import type { AddressInfo } from 'node:net';
import { HttpRequest, InvocationContext, type HttpResponseInit } from '@azure/functions';
import { createLocalHost } from '../../scripts/local/host';
import { createApiKey } from '../../shared/app/api-keys';
import type { AppDeps } from '../../shared/app/deps';
import { setDeps } from '../../shared/composition';
import { scopes as allScopes, type Plan, type Scope } from '../../shared/domain/subscription';
import { httpFunctions } from '../../shared/http/function';
import { allRoutes, matchRoute } from '../../shared/http/routes';
import '../../functions/index';

export interface Answer {
  status: number;
  headers: Record<string, string>;
  /** Set-Cookie values by cookie name (handler calls only). */
  cookies?: Record<string, { value: string; maxAge?: number; httpOnly?: boolean; secure?: boolean; sameSite?: string }>;
  json: Record<string, unknown> & { error?: string; message?: string };
}

const silent = () => {};

/** Calls a function handler directly, as the Functions host would. */
export const invoke = async (
  functionName: string,
  { method = 'GET', path, headers = {}, body }: { method?: string; path: string; headers?: Record<string, string>; body?: unknown },
): Promise<Answer> => {
  const handler = httpFunctions.get(functionName)?.options.handler;
  if (!handler) throw new Error(`no function ${functionName}`);
  // The Functions host fills route parameters from the function's route template; so does this.
  const params = matchRoute(allRoutes, method, new URL(path, 'http://localhost').pathname)?.params ?? {};
  const request = new HttpRequest({
    method,
    url: `http://localhost${path}`,
    headers,
    params,
    ...(body !== undefined && { body: { string: typeof body === 'string' ? body : JSON.stringify(body) } }),
  });
  const response = (await handler(request, new InvocationContext({ functionName, logHandler: silent }))) as HttpResponseInit;
  return {
    status: response.status ?? 200,
    headers: Object.fromEntries(Object.entries((response.headers ?? {}) as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v])),
    json: JSON.parse(String(response.body)),
    cookies: Object.fromEntries((response.cookies ?? []).map((cookie) => [cookie.name, cookie])),
  };
};

export interface Merchant {
  apiKey: string;
  subscriptionId: string;
  wallet: string;
}

export const addMerchant = async (
  deps: AppDeps,
  wallet: string,
  { scopes = [...allScopes], plan = 'development' }: { scopes?: Scope[]; plan?: Plan } = {},
): Promise<Merchant> => {
  const { subscription, apiKey } = await createApiKey(deps, { wallet, scopes, plan, brand: 'default' });
  return { apiKey, subscriptionId: subscription.id, wallet };
};

export interface RunningHost {
  url: string;
  call(path: string, init?: { method?: string; headers?: Record<string, string>; body?: unknown }): Promise<Answer>;
  close(): Promise<void>;
}

/** The local host (the gateway in front of the handlers) on a free loopback port. */
export const startHost = async (deps: AppDeps): Promise<RunningHost> => {
  setDeps(deps);
  const server = createLocalHost({ deps, routes: allRoutes, functions: httpFunctions });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    call: async (path, { method = 'GET', headers = {}, body } = {}) => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
        ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, headers: Object.fromEntries(response.headers), json: text ? JSON.parse(text) : {} };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
