/**
 * One queue per relayer account in this process: every sender of the key (the chain adapter's splits,
 * distributions and sweeps, the x402 settler, any second adapter of the same key) sends in its turn and
 * reads the account's pending nonce when its turn comes, so no two hand the node the same nonce. A
 * turn ends once the node has accepted (or refused) the transaction: the next reads a count that
 * includes it. No SDK here: the ethers signer and the viem settler both take their turns at it.
 */
const queues = new Map<string, Promise<unknown>>();

export const relayerTurn = <T>(account: string, send: () => Promise<T>): Promise<T> => {
  const key = account.toLowerCase();
  const run = (queues.get(key) ?? Promise.resolve()).then(send);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  queues.set(key, settled);
  // The last turn's end clears its entry: an idle key keeps nothing.
  void settled.then(() => {
    if (queues.get(key) === settled) queues.delete(key);
  });
  return run;
};

/** The node refused a nonce another sender had taken (another process of the same key): sent again with a fresh one. */
export const NONCE_CLASH = /nonce too low|nonce has already been used|lower than the current nonce|replacement transaction underpriced/i;
