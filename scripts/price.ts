/**
 * `npm run price -- <usd>`
 * `npm run price`
 * `npm run price -- --help`
 *
 * Sets the ETH/USD price of the local chain's feed, or prints the current one and its age, in the
 * stack `npm start` runs from this checkout. Exit status: 0 done, 1 failed, 2 bad usage.
 */
import { UsageError, parseCommandLine, runCli } from './cli';
import { readEthUsdPrice, setEthUsdPrice } from './local/feed';
import { runningCredentials, stackFiles } from './local/stack';

const usage = `usage:
  npm run price -- <usd>
  npm run price
  npm run price -- --help

Sets the ETH/USD price of the local chain's feed (a new round, updated now), or, without an
argument, prints the current price and how old it is. Works against the stack \`npm start\` runs from
this checkout (its chain and feed are in .data/local-credentials.json). The service quotes ETH at this
price, and treats one older than FEED_HEARTBEAT_SECONDS (default 3600) as stale: set it again.

  <usd>   USD per ETH: more than 0, at most 8 decimals (e.g. 3120.55)

Environment:
  DATA_DIR   the stack's data folder (default .data)

Exit status: 0 done, 1 failed, 2 bad usage.`;

const USD = /^\d+(\.\d{1,8})?$/;

const main = async () => {
  const { positionals } = parseCommandLine({});
  const [usd, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`unexpected argument ${extra[0]}`);
  if (usd !== undefined && (!USD.test(usd) || Number(usd) <= 0)) throw new UsageError(`${usd}: the price must be more than 0 with at most 8 decimals`);

  const files = stackFiles();
  const { rpcUrl, ethUsdFeed } = runningCredentials(files);
  if (!rpcUrl || !ethUsdFeed) throw new Error(`${files.credentials} names no ETH/USD feed: restart the stack (npm start) to deploy one`);
  if (usd !== undefined) {
    const hash = await setEthUsdPrice(rpcUrl, ethUsdFeed, usd);
    console.log(`ETH/USD set to ${usd} (transaction ${hash})`);
  }
  const price = await readEthUsdPrice(rpcUrl, ethUsdFeed);
  const age = Math.max(0, Math.round(Date.now() / 1000) - price.updatedAt);
  console.log(`ETH/USD ${price.usd} (feed ${ethUsdFeed}), updated ${new Date(price.updatedAt * 1000).toISOString()}, ${age} s ago`);
};

runCli(usage, main);
