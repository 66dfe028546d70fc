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
