/**
 * The console's routes: its pages (`/console`, `/console/{page}`), rendered on the server for the
 * signed-in wallet (the sign-in page without a session), and its content-hashed browser files.
 */
import type { AppDeps } from '../../shared/app/deps';
import { DomainError } from '../../shared/domain/errors';
import type { Session } from '../../shared/domain/session';
import { Asset, Reply } from '../../shared/http/function';
import { routes } from '../../shared/http/routes';
import { ADMIN_ENTRY, IMMUTABLE, webAssets } from '../portal/assets';
import { ADMIN_ROOT, type Html } from './kit';
import { renderConsolePage, renderNotFound, renderSignIn, type FrameInput } from './layout';
import { adminPages, findPage } from './pages';

const assetUrl = (file: string) => routes.adminAsset.path.replace('{file}', encodeURIComponent(file));

const frameOf = async (deps: AppDeps): Promise<FrameInput> => {
  const { manifest } = await webAssets(ADMIN_ENTRY);
  return {
    assets: { script: assetUrl(manifest.script), style: assetUrl(manifest.style) },
    endpoints: { nonce: routes.authNonce.path, login: routes.authLogin.path, logout: routes.authLogout.path },
    brandName: deps.settings.brandName,
    chainId: deps.settings.chainId,
  };
};

/**
 * A console page: unknown names are the console's 404 page; without a session (none, or one that
 * ended) the sign-in page, at the same address, so signing in shows the page asked for.
 */
export const adminPage = async (
  deps: AppDeps,
  caller: { session?: Session; wallet?: string },
  slug: string,
  query: Readonly<Record<string, string>>,
): Promise<Html | Reply<Html>> => {
  const frame = await frameOf(deps);
  const page = findPage(slug);
  if (!page) return new Reply(404, renderNotFound(frame, `${ADMIN_ROOT}/${slug}`));
  if (!caller.session || !caller.wallet) return renderSignIn({ ...frame, asked: page });
  const content = await page.render({ deps, session: caller.session, wallet: caller.wallet, query, now: deps.clock.now() });
  return renderConsolePage({ ...frame, pages: adminPages, page, wallet: caller.wallet, content });
};

/** One of the console's files, by its content-hashed name; any other name is 404. */
export const adminAsset = async (file: string): Promise<Asset> => {
  const asset = (await webAssets(ADMIN_ENTRY)).files.get(file);
  if (!asset) throw new DomainError('not_found', `no console file ${file}`);
  return new Asset(asset.contentType, asset.body, IMMUTABLE);
};
