/**
 * Sign-in-with-x (the x402 extension, CAIP-122 / EIP-4361): an agent proves it holds a wallet by
 * signing a message for this service, with no payment. The challenge's nonce is the SIWE sign-in's
 * (stateless, MAC-carrying, single-use) under its own purpose; the message is checked by the same
 * rules as a sign-in (domain, origin, chain, times), its signature by the protocol's extension
 * (EIP-191, or EIP-1271 asked of a contract wallet on the chain).
 */
import { DomainError } from '../../domain/errors';
import { checkSignIn, type SignInMessage } from '../../domain/session';
import { X402_HEADERS, caip2Network, type SignInWithXInfo } from '../../domain/x402';
import { consumeNonce, mintNonce } from '../auth';
import type { AppDeps } from '../deps';

type SignInWithXDeps = Pick<AppDeps, 'settings' | 'clock' | 'ids' | 'claims' | 'sessionTokens' | 'x402'>;

/** The extension's offer in a challenge: what to sign, on which chains, and the proof's schema. */
export interface SignInWithXExtension {
  info: SignInWithXInfo;
  supportedChains: { chainId: string; type: 'eip191' }[];
  schema: Record<string, unknown>;
}

const DEFAULT_STATEMENT = 'Sign in with your wallet';

/**
 * A fresh sign-in-with-x offer for a resource (a challenge's `extensions['sign-in-with-x']`): the
 * service's sign-in domain, the resource as the message's URI, a nonce good for one sign-in until
 * it expires, and the deployment's chain.
 */
export const signInWithXChallenge = async (deps: SignInWithXDeps, request: { resource: string; statement?: string }): Promise<SignInWithXExtension> => {
  const { nonce, expiresAt } = mintNonce(deps, 'siwx');
  return {
    info: {
      domain: deps.settings.siweDomain,
      uri: request.resource,
      statement: request.statement ?? DEFAULT_STATEMENT,
      version: '1',
      nonce,
      issuedAt: new Date(deps.clock.now()).toISOString(),
      expirationTime: new Date(expiresAt).toISOString(),
    },
    supportedChains: [{ chainId: caip2Network(deps.settings.chainId), type: 'eip191' }],
    schema: await deps.x402.signInWithXSchema(),
  };
};

const refuse = (reason: string) => new DomainError('unauthorized', `sign-in-with-x refused: ${reason}`);

/** The sign-in rules' refusals, told as this extension's. */
const asSignInWithX = async (check: () => Promise<void>) => {
  try {
    await check();
  } catch (error) {
    if (error instanceof DomainError && error.code === 'unauthorized') throw refuse(error.message.replace(/^sign-in refused: /, ''));
    throw error;
  }
};

const time = (iso: string | undefined, field: string): number | undefined => {
  if (iso === undefined) return undefined;
  const at = Date.parse(iso);
  if (Number.isNaN(at)) throw refuse(`${field} is not a time`);
  return at;
};

/**
 * The wallet a request's `SIGN-IN-WITH-X` header proves, for this resource: undefined without the
 * header; a header that does not prove it (malformed, another domain, URI or chain, expired or not
 * yet valid, a signature not the address's, a nonce not ours or used already) is refused (401).
 */
export const verifySignInWithX = async (
  deps: SignInWithXDeps,
  headers: { get(name: string): string | null },
  request: { resource: string },
): Promise<{ wallet: string } | undefined> => {
  const header = headers.get(X402_HEADERS.signInWithX);
  if (!header) return undefined;
  const proof = await deps.x402.parseSignInWithX(header);
  if (!proof) throw refuse('the header is not a sign-in-with-x proof');
  if (!/^0x[0-9a-fA-F]{40}$/.test(proof.address)) throw refuse('address is not an EVM address');
  const chain = /^eip155:(\d{1,15})$/.exec(proof.chainId);
  if (!chain) throw refuse(`chain id must be ${caip2Network(deps.settings.chainId)}`);
  if (proof.uri !== request.resource) throw refuse(`uri must be ${request.resource}`);
  const now = deps.clock.now();
  const message: SignInMessage = {
    address: proof.address.toLowerCase(),
    domain: proof.domain,
    uri: proof.uri,
    chainId: Number(chain[1]),
    nonce: proof.nonce,
    issuedAt: time(proof.issuedAt, 'issuedAt') ?? now,
    expirationTime: time(proof.expirationTime, 'expirationTime'),
    notBefore: time(proof.notBefore, 'notBefore'),
  };
  await asSignInWithX(async () => checkSignIn(message, { domain: deps.settings.siweDomain, origin: new URL(deps.settings.baseUrl).origin, chainId: deps.settings.chainId, now }));
  if (!(await deps.x402.verifySignInWithX(proof))) throw refuse("the signature is not the address's");
  await asSignInWithX(() => consumeNonce(deps, proof.nonce, now, 'siwx'));
  return { wallet: message.address };
};
