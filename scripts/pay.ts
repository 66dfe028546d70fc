/**
 * `npm run pay -- <receiptId> [--token USDC|USDT|ETH] [--buyer N]`
 * `npm run pay -- --help`
 *
 * Pays a receipt of the stack `npm start` runs from this checkout the way a phone wallet does: a
 * quote from the service, then a plain transfer of the quoted amount from a buyer account, the hash
 * never reported; the service has to find the payment on chain. Exit status: 0 paid, 1 failed or not
 * paid in time, 2 bad usage.
 */
import { Contract, Wallet, isCallException, type TransactionResponse } from 'ethers';
import { createProvider } from '../shared/adapters/evm/provider';
import { payTokens, PayTokenSymbol } from '../shared/domain/payment';
import type { PortalView, QuoteView } from '../shared/domain/portal-views';
import { UsageError, parseCommandLine, runCli } from './cli';
import { ANVIL_BUYERS } from './local/anvil';
import { runningCredentials, stackFiles } from './local/stack';

const usage = `usage:
  npm run pay -- <receiptId> [--token ${payTokens.join('|')}] [--buyer N]
  npm run pay -- --help

Pays a receipt in the stack \`npm start\` runs from this checkout as a phone wallet would: asks the
service for a quote in the token, sends a plain transfer of the quoted amount to the quoted address
from a buyer account, without telling the service the transaction, and waits until the service has
found it and the receipt is paid.

  --token <symbol>   ${payTokens.join(', ')} (default USDC)
  --buyer <N>        1 to ${ANVIL_BUYERS.length}: anvil's test accounts #5 to #9, funded with test tokens (default 1)

Environment:
  DATA_DIR   the stack's data folder (default .data)

Exit status: 0 paid, 1 failed or not paid within 60 s, 2 bad usage.`;

const POLL_MS = 250;
const WAIT_MS = 60_000;

const erc20 = ['function transfer(address to, uint256 amount) returns (bool)'];

/** A call to the service; an unreachable one is a stack that is not running. */
const service = async (baseUrl: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown>; retryAfter: number }> => {
  let response: Response;
  try {
    response = await fetch(`${baseUrl}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  } catch (cause) {
    throw new Error(`the service at ${baseUrl} does not answer: is npm start running?`, { cause });
  }
  const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  return { status: response.status, json, retryAfter: Number(response.headers.get('retry-after') ?? 1) };
};

const main = async () => {
  const { positionals, values } = parseCommandLine({ token: { type: 'string', default: 'USDC' }, buyer: { type: 'string', default: '1' } });
  const [receiptId, ...extra] = positionals;
  if (!receiptId) throw new UsageError('name the receipt to pay');
  if (extra.length > 0) throw new UsageError(`unexpected argument ${extra[0]}`);
  const token = PayTokenSymbol.safeParse(values.token);
  if (!token.success) throw new UsageError(`--token: must be one of ${payTokens.join(', ')}`);
  const index = Number(values.buyer);
  if (!Number.isInteger(index) || index < 1 || index > ANVIL_BUYERS.length) throw new UsageError(`--buyer: must be 1 to ${ANVIL_BUYERS.length}`);

  const files = stackFiles();
  const { baseUrl, rpcUrl, chainId, buyers } = runningCredentials(files);
  const buyer = ANVIL_BUYERS[index - 1]!;
  if (!rpcUrl || !chainId || !buyers) throw new Error(`${files.credentials} names no chain or buyers: restart the stack (npm start)`);
  if (!buyers.includes(buyer.address)) throw new Error(`the stack's chain has no funded buyers (it runs on CHAIN_RPC_URL, not its own anvil)`);

  const path = `/api/portal/${encodeURIComponent(receiptId)}`;
  const quoted = await service(baseUrl, `${path}/quote`, { token: token.data });
  if (quoted.status === 404) throw new Error(`no receipt ${receiptId} in the stack at ${baseUrl}`);
  if (quoted.status !== 200) throw new Error(`the service gave no quote (${quoted.status}): ${String(quoted.json.error)}: ${String(quoted.json.message)}`);
  const quote = quoted.json.quote as QuoteView;

  const provider = createProvider(rpcUrl, chainId);
  try {
    const wallet = new Wallet(buyer.privateKey, provider);
    const tx: TransactionResponse = quote.tokenAddress
      ? await new Contract(quote.tokenAddress, erc20, wallet).getFunction('transfer').send(quote.payTo, BigInt(quote.amount))
      : await wallet.sendTransaction({ to: quote.payTo, value: BigInt(quote.amount) });
    console.log(`sent ${quote.display} ${quote.token} from ${buyer.address} to ${quote.payTo}`);
    console.log(`transaction ${tx.hash}`);
    await tx.wait();
  } catch (error) {
    if (isCallException(error)) throw new Error(`the transfer reverted: ${error.shortMessage}`, { cause: error });
    throw error;
  } finally {
    provider.destroy();
  }

  const deadline = Date.now() + WAIT_MS;
  let status = '';
  while (Date.now() < deadline) {
    const seen = await service(baseUrl, path);
    // Polling outruns the portal's limit per receipt after half a minute: wait as told.
    const pause = seen.status === 429 ? seen.retryAfter * 1000 : POLL_MS;
    const now = seen.status === 429 ? status : ((seen.json as Partial<PortalView>).status ?? `answer ${seen.status}`);
    if (now !== status) console.log(`receipt ${receiptId}: ${now}`);
    status = now;
    if (status === 'paid') return;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
  throw new Error(`receipt ${receiptId} is not paid ${WAIT_MS / 1000} s after the transfer (last status: ${status})`);
};

runCli(usage, main);
