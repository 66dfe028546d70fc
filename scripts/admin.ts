/**
 * `npm run admin -- login --private-key <0x…> [--base-url <url>]`
 * `npm run admin -- --help`
 *
 * Signs in to the admin API from the command line (EIP-4361, as a browser wallet would) and prints
 * the session cookie, the CSRF token and the Origin that admin writes need, ready for curl.
 * Without --base-url it uses the stack `npm start` runs from this checkout, else http://localhost:7071.
 * Exit status: 0 signed in, 1 failed, 2 bad usage (with the usage on stderr).
 */
import { Wallet } from 'ethers';
import { SiweMessage } from 'siwe';
import { UsageError, parseCommandLine, runCli } from './cli';
import { runningStack, stackFiles } from './local/stack';

const usage = `usage:
  npm run admin -- login --private-key <0x-prefixed 32-byte hex> [--base-url <url>]
  npm run admin -- --help

Signs in to the admin API with a wallet (EIP-4361, as a browser wallet would) and prints the session
cookie, the CSRF token and the Origin that admin writes need, and a line to export them for curl.

  --private-key <0x…>   the wallet's key (locally: anvil's public test keys)
  --base-url <url>      the service (default: the stack \`npm start\` runs from this checkout, else
                        http://localhost:7071; DATA_DIR names its data folder, default .data)

Exit status: 0 signed in, 1 failed, 2 bad usage.`;

const main = async () => {
  const { positionals, values } = parseCommandLine({ 'private-key': { type: 'string' }, 'base-url': { type: 'string' } });
  const [command, ...extra] = positionals;
  if (command !== 'login') throw new UsageError(command === undefined ? 'name a command: login' : `unknown command ${command}`);
  if (extra.length > 0) throw new UsageError(`unexpected argument ${extra[0]}`);
  if (!values['private-key']) throw new UsageError('login needs --private-key');
  if (!/^0x[0-9a-fA-F]{64}$/.test(values['private-key'])) throw new UsageError('--private-key: must be 0x and 64 hex digits');
  if (values['base-url'] !== undefined && !URL.canParse(values['base-url'])) throw new UsageError('--base-url: must be an absolute URL');
  const baseUrl = (values['base-url'] ?? runningStack(stackFiles())?.baseUrl ?? 'http://localhost:7071').replace(/\/+$/, '');
  const wallet = new Wallet(values['private-key']);

  const nonceAnswer = await fetch(`${baseUrl}/api/auth/nonce`);
  if (!nonceAnswer.ok) throw new Error(`nonce: ${nonceAnswer.status} ${await nonceAnswer.text()}`);
  const { nonce, domain, uri, chainId } = (await nonceAnswer.json()) as { nonce: string; domain: string; uri: string; chainId: number };
  const message = new SiweMessage({
    domain,
    address: wallet.address,
    statement: 'Sign in to the merchant admin API.',
    uri,
    version: '1',
    chainId,
    nonce,
    issuedAt: new Date().toISOString(),
  }).prepareMessage();
  const signature = await wallet.signMessage(message);

  const login = await fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: new URL(baseUrl).origin },
    body: JSON.stringify({ message, signature }),
  });
  const body = (await login.json()) as { wallet?: string; roles?: string[]; csrfToken?: string; expiresAt?: number; message?: string };
  if (!login.ok) throw new Error(`login: ${login.status} ${body.message ?? ''}`);
  const cookie = login.headers
    .getSetCookie()
    .map((line) => line.split(';')[0])
    .join('; ');
  const origin = new URL(baseUrl).origin;
  console.log(`signed in as ${body.wallet} (${body.roles?.join(', ')}) until ${new Date(body.expiresAt ?? 0).toISOString()}`);
  console.log(`Cookie: ${cookie}`);
  console.log(`x-csrf-token: ${body.csrfToken}`);
  console.log(`Origin: ${origin}`);
  console.log('\n# for a shell:');
  console.log(`export COOKIE='${cookie}' CSRF='${body.csrfToken}' ORIGIN='${origin}'`);
};

runCli(usage, main);
