import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { Wallet } from 'ethers';
import { signedSignIn } from './siwe';

/** Runs `npm start` (scripts/start.ts) as a child process, as a user would, in a data folder of its own. */
export const root = resolve(__dirname, '../..');
export const tsx = join(root, 'node_modules/.bin/tsx');

export const stackEnv = (dataDir: string, extra: Record<string, string> = {}) => ({ ...process.env, PORT: '0', DATA_DIR: dataDir, BASE_URL: '', ...extra });

export interface StartedStack {
  child: ChildProcess;
  output: () => string;
  baseUrl: string;
  apiKey: string;
}

export const waitFor = async <T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 30_000): Promise<T> => {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
};

export const startStack = async (env: NodeJS.ProcessEnv): Promise<StartedStack> => {
  const child = spawn(tsx, ['scripts/start.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const apiKey = await waitFor('the start banner', () => /Demo API key\s+(\S+)/.exec(output)?.[1], 90_000);
  const baseUrl = /Service running at (\S+)/.exec(output)![1]!;
  return { child, output: () => output, baseUrl, apiKey };
};

export const stopStack = (started: StartedStack) =>
  new Promise<number | null>((done) => {
    if (started.child.exitCode !== null) return done(started.child.exitCode);
    started.child.once('exit', (code) => done(code));
    started.child.kill('SIGINT');
  });

export const call = async (baseUrl: string, path: string, init: { method?: string; key?: string; body?: unknown } = {}) => {
  const response = await fetch(`${baseUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: { ...(init.key && { 'Ocp-Apim-Subscription-Key': init.key }), 'content-type': 'application/json' },
    ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
};

/**
 * A wallet signed in to a running stack over HTTP (Sign-In with Ethereum, the stack's own domain):
 * answers a POST with the session cookie, the CSRF header and the site's Origin.
 */
export const signedInPost = async (baseUrl: string, privateKey: string) => {
  const { nonce } = (await call(baseUrl, '/api/auth/nonce')).json as { nonce: string };
  const login = await fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: new URL(baseUrl).origin },
    body: JSON.stringify(await signedSignIn(new Wallet(privateKey), { nonce, domain: new URL(baseUrl).host, uri: baseUrl })),
  });
  if (login.status !== 200) throw new Error(`sign-in failed: ${login.status} ${await login.text()}`);
  const cookie = login.headers.getSetCookie().map((line) => line.split(';')[0]).join('; ');
  const { csrfToken } = (await login.json()) as { csrfToken: string };
  return (path: string, body: unknown) =>
    fetch(`${baseUrl}${path}`, { method: 'POST', headers: { cookie, 'x-csrf-token': csrfToken, origin: baseUrl, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (response) => ({
      status: response.status,
      json: (await response.json()) as Record<string, unknown>,
    }));
};
