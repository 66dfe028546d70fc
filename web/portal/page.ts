/**
 * The portal's page routes: the buyer's page for a receipt (`/portal/{id}` and the payment link
 * `/pay/{id}`, the same page), its browser files, and the QR code of the receipt's quote or link.
 */
import type { AppDeps } from '../../shared/app/deps';
import { findReceipt, getPortalView, openQuoteFor, type PortalDeps } from '../../shared/app/payments/portal';
import { DomainError } from '../../shared/domain/errors';
import type { PayTokenSymbol } from '../../shared/domain/payment';
import { paymentUrlFor } from '../../shared/domain/receipt';
import { Asset, Reply } from '../../shared/http/function';
import { routes } from '../../shared/http/routes';
import { IMMUTABLE, portalAssets } from './assets';
import { qrSvg } from './qr';
import { renderNotFoundPage, renderPortalPage } from './render';

/** A route's path with its `{param}`s filled in, encoded: the route table stays the one place paths are written. */
const pathOf = (path: string, params: Record<string, string>) => path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));

export const assetUrl = (file: string) => pathOf(routes.portalAsset.path, { file });

const isNotFound = (error: unknown) => error instanceof DomainError && error.code === 'not_found';

/**
 * The page for a receipt; for an unknown id, the portal's own "not found" page (404), so a buyer
 * with a mistyped link still sees where they are and what to do.
 */
export const portalPage = async (deps: PortalDeps & Pick<AppDeps, 'settings'>, receiptId: string): Promise<string | Reply<string>> => {
  const { manifest } = await portalAssets();
  const style = assetUrl(manifest.style);
  try {
    const view = await getPortalView(deps, receiptId);
    return renderPortalPage(view, {
      script: assetUrl(manifest.script),
      style,
      explorerUrl: deps.settings.payments.explorerUrl,
      paymentUrl: paymentUrlFor(deps.settings.baseUrl, view.receiptId),
      qrUrl: pathOf(routes.portalQr.path, { id: view.receiptId }),
      apiUrl: pathOf(routes.portalGet.path, { id: view.receiptId }),
    });
  } catch (error) {
    if (isNotFound(error)) return new Reply(404, renderNotFoundPage({ style, brandName: deps.settings.brandName }));
    throw error;
  }
};

/** One of the portal's files, by its content-hashed name; any other name is 404. */
export const portalAsset = async (file: string): Promise<Asset> => {
  const asset = (await portalAssets()).files.get(file);
  if (!asset) throw new DomainError('not_found', `no portal file ${file}`);
  return new Asset(asset.contentType, asset.body, IMMUTABLE);
};

/**
 * The QR code of a receipt: with a token, its open quote's EIP-681 request in that token, which a
 * phone wallet pays as it is; without one (or without a token), the payment link, which opens this
 * page. A GET never makes a quote (only `POST …/quote` does), and a page's `<img>` wants an image
 * either way, so no open quote is the link rather than an error. Never cached: a quote ends.
 */
export const portalQr = async (deps: PortalDeps & Pick<AppDeps, 'settings'>, receiptId: string, token: PayTokenSymbol | undefined): Promise<Asset> => {
  const quote = token ? await openQuoteFor(deps, receiptId, token) : null;
  const text = quote ? quote.uri : paymentUrlFor(deps.settings.baseUrl, (await findReceipt(deps, receiptId)).value.receiptId);
  return new Asset('image/svg+xml', await qrSvg(text), 'no-store');
};
