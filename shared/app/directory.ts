import { directoryEntryOf, withDirectoryFields, type DirectoryQuery, type DirectoryResponse } from '../domain/directory';
import type { AppDeps } from './deps';
import { verifySignInWithX } from './x402/siwx';
import { updateMerchant } from './merchants';

/**
 * The public shop directory: listed shops matching the query, by slug, one window at a time.
 * `ownWallet`: the caller's wallet when the request signed in with it (SIGN-IN-WITH-X, verified by
 * the caller of this use case); that wallet's entry is marked `own: true`.
 */
export const listDirectory = async (
  deps: Pick<AppDeps, 'merchants' | 'settings'>,
  query: DirectoryQuery,
  ownWallet?: string,
): Promise<DirectoryResponse> => {
  const own = ownWallet?.toLowerCase();
  const shops = await deps.merchants.listDirectory(query);
  const directory = shops.map(({ wallet, shop }) => ({
    ...directoryEntryOf(shop),
    ...(own !== undefined && wallet.toLowerCase() === own && { own: true as const }),
  }));
  return {
    ok: true,
    directory,
    meta: { totalReturned: directory.length, limit: query.limit, offset: query.offset, brandContext: deps.settings.brandKey },
  };
};

/**
 * Writes a stored merchant document again when its directory fields are missing or out of date (one
 * written before they existed); answers whether it wrote.
 */
export const refreshDirectoryFields = async (deps: Pick<AppDeps, 'merchants' | 'clock'>, wallet: string): Promise<boolean> => {
  const stored = await deps.merchants.get(wallet, wallet);
  if (!stored) return false;
  const derived = withDirectoryFields(stored.value);
  if (derived.directoryListed === stored.value.directoryListed && derived.directorySearchText === stored.value.directorySearchText) return false;
  await updateMerchant(deps, wallet, (merchant) => ({ merchant, result: undefined }));
  return true;
};

/**
 * The directory as a caller sees it: with a valid sign-in-with-x proof (header `SIGN-IN-WITH-X`) the
 * caller's own shop is marked; a proof that does not hold is refused (401), not ignored.
 */
export const directoryFor = async (
  deps: Pick<AppDeps, 'merchants' | 'settings'> & Parameters<typeof verifySignInWithX>[0],
  headers: { get(name: string): string | null },
  query: DirectoryQuery,
) => {
  const proof = await verifySignInWithX(deps, headers, { resource: `${deps.settings.baseUrl}/api/directory/shops` });
  return listDirectory(deps, query, proof?.wallet);
};
