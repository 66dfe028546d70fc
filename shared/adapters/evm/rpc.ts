/** How the service talks to the chain's JSON-RPC node, whichever library (ethers, viem) makes the calls. */

/** An RPC call that has not answered by then counts as "chain unavailable" (ethers' default is 5 minutes). */
export const RPC_TIMEOUT_MS = 10_000;

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** A node on this machine (anvil): it mines each transaction at once, so nothing is cached and receipts are polled fast. */
export const isLocalRpc = (rpcUrl: string): boolean => {
  try {
    return LOCAL_HOSTS.has(new URL(rpcUrl).hostname);
  } catch {
    return false;
  }
};

/**
 * What hosted nodes answer a log query over their limits: Alchemy (-32602 "Log response size exceeded
 * ... up to a 2K block range"), Infura (-32005 "query returned more than 10000 results"), QuickNode
 * ("eth_getLogs is limited to a 10,000 range"), geth-likes ("exceed maximum block range"), others
 * ("block range is too wide", "block range limit exceeded"). By message, not code: Infura's -32005
 * also means "rate limited", which is no question of size.
 */
const RANGE_REFUSAL = /response size|more than \d+ results|too many (?:logs|results)|block range|range (?:is )?too (?:large|wide|big)|max(?:imum)? (?:block )?range|limited to an? [\d,.]+k? ?(?:block )?range/i;

/** The error's own message and those it wraps (ethers keeps the node's JSON-RPC error as `error`). */
const messagesOf = (error: unknown, depth = 0): string[] => {
  if (typeof error !== 'object' || error === null || depth > 4) return [];
  const { message, error: inner, cause, info } = error as { message?: unknown; error?: unknown; cause?: unknown; info?: { error?: unknown } };
  return [...(typeof message === 'string' ? [message] : []), ...[inner, cause, info?.error].flatMap((next) => (next === error ? [] : messagesOf(next, depth + 1)))];
};

/** The node refused a log query for its block range or result size (a narrower range may be answered). */
export const isRangeRefusal = (error: unknown): boolean => messagesOf(error).some((message) => RANGE_REFUSAL.test(message));
