/**
 * The startup check of the chain: the node at CHAIN_RPC_URL serves the configured chain, and each
 * configured contract is there and is what the setting says it is. Plain JSON-RPC over `fetch` (no
 * Ethereum library at start), a dozen calls at once, each within RPC_TIMEOUT_MS.
 */
import { RPC_TIMEOUT_MS } from './rpc';

export interface ChainExpectations {
  rpcUrl: string;
  chainId: number;
  /** ERC-20 tokens the service takes, by the setting that names each. */
  tokens: ReadonlyArray<{ setting: string; address: string; symbol: string; decimals: number }>;
  /** Chainlink price feeds (AggregatorV3), by setting, with the pair they must describe. */
  feeds: ReadonlyArray<{ setting: string; address: string; description: string }>;
  /** Other contracts that must hold code (the factories), by setting. */
  contracts: ReadonlyArray<{ setting: string; address: string }>;
}

// Function selectors: the first four bytes of keccak256 of each signature.
const DECIMALS = '0x313ce567'; // decimals()
const SYMBOL = '0x95d89b41'; // symbol()
const DESCRIPTION = '0x7284e416'; // description()

class RpcError extends Error {}

/**
 * The node did not answer at all: nothing is known to be wrong with the configuration, only that the
 * chain cannot be reached now (an outage the service rides out with 503s on the calls that need it).
 */
export class ChainUnansweredError extends Error {}

const rpc = async (rpcUrl: string, method: string, params: unknown[]): Promise<string> => {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const body = (await response.json()) as { result?: unknown; error?: { message?: string } };
  if (body.error) throw new RpcError(body.error.message ?? 'error');
  if (typeof body.result !== 'string') throw new Error(`no result for ${method}`);
  return body.result;
};

/** An ABI-encoded `string`, or a `bytes32` one (older tokens), as text. */
const decodeString = (hex: string): string | undefined => {
  const data = hex.replace(/^0x/, '');
  if (data.length === 64) return Buffer.from(data, 'hex').toString('utf8').replace(/\0+$/, '');
  if (data.length < 128) return undefined;
  const offset = Number.parseInt(data.slice(0, 64), 16) * 2;
  const length = Number.parseInt(data.slice(offset, offset + 64), 16) * 2;
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || data.length < offset + 64 + length) return undefined;
  return Buffer.from(data.slice(offset + 64, offset + 64 + length), 'hex').toString('utf8');
};

const decodeUint = (hex: string): bigint | undefined => (/^0x[0-9a-fA-F]{1,64}$/.test(hex) ? BigInt(hex) : undefined);

const reason = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Every way the chain differs from the expectations, each naming its setting; none when all match. A node that does not answer throws `ChainUnansweredError`. */
export const chainMismatches = async (expected: ChainExpectations): Promise<string[]> => {
  const { rpcUrl } = expected;
  let served: string;
  try {
    served = await rpc(rpcUrl, 'eth_chainId', []);
  } catch (error) {
    // Nothing else can be read either: one problem, not one per contract.
    throw new ChainUnansweredError(`CHAIN_RPC_URL: the node did not answer eth_chainId (${reason(error)})`);
  }
  const problems: string[] = [];
  if (Number(served) !== expected.chainId) problems.push(`CHAIN_ID: ${expected.chainId} is configured, but CHAIN_RPC_URL serves chain ${Number(served)}`);

  const call = async (address: string, data: string) => {
    try {
      return { result: await rpc(rpcUrl, 'eth_call', [{ to: address, data }, 'latest']) };
    } catch (error) {
      if (error instanceof RpcError) return { result: undefined };
      throw error;
    }
  };
  /** Problems of one contract: no code stops there (its calls would answer nothing). */
  const inspect = async (setting: string, address: string, checks: (at: string) => Promise<string[]>): Promise<string[]> => {
    try {
      const code = await rpc(rpcUrl, 'eth_getCode', [address, 'latest']);
      if (code === '0x' || code === '') return [`${setting}: no contract at ${address} on chain ${Number(served)}`];
      return await checks(`${setting}: ${address}`);
    } catch (error) {
      return [`${setting}: ${address} could not be read (${reason(error)})`];
    }
  };

  const found = await Promise.all([
    ...expected.tokens.map((token) =>
      inspect(token.setting, token.address, async (at) => {
        const [decimals, symbol] = await Promise.all([call(token.address, DECIMALS), call(token.address, SYMBOL)]);
        const problemsOfToken: string[] = [];
        const places = decimals.result === undefined ? undefined : decodeUint(decimals.result);
        if (places === undefined) problemsOfToken.push(`${at} answers no decimals() (not an ERC-20 token?)`);
        else if (places !== BigInt(token.decimals)) problemsOfToken.push(`${at} has ${places} decimals, not ${token.decimals}`);
        const name = symbol.result === undefined ? undefined : decodeString(symbol.result);
        if (name === undefined) problemsOfToken.push(`${at} answers no symbol()`);
        else if (name !== token.symbol) problemsOfToken.push(`${at} is ${JSON.stringify(name)}, not ${token.symbol}`);
        return problemsOfToken;
      }),
    ),
    ...expected.feeds.map((feed) =>
      inspect(feed.setting, feed.address, async (at) => {
        const description = await call(feed.address, DESCRIPTION);
        const pair = description.result === undefined ? undefined : decodeString(description.result);
        if (pair === undefined) return [`${at} answers no description() (not a Chainlink feed?)`];
        return pair === feed.description ? [] : [`${at} is the ${JSON.stringify(pair)} feed, not ${JSON.stringify(feed.description)}`];
      }),
    ),
    ...expected.contracts.map((contract) => inspect(contract.setting, contract.address, async () => [])),
  ]);
  return [...problems, ...found.flat()];
};
