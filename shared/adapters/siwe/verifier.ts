import type { SiweMessage } from 'siwe';
import { DomainError } from '../../domain/errors';
import type { SignInMessage } from '../../domain/session';
import type { SignInVerifier } from '../../ports/auth';

const time = (iso: string | undefined) => (iso === undefined ? undefined : Date.parse(iso));

/** EIP-4361 parsing and EOA signature recovery (the `siwe` package over ethers). */
export const siweVerifier: SignInVerifier = {
  verify: async (text, signature, now) => {
    // Loaded on first sign-in: siwe and ethers are large and only this route needs them.
    const { SiweMessage: Message } = await import('siwe');
    let message: SiweMessage;
    try {
      message = new Message(text);
    } catch {
      throw new DomainError('invalid_input', 'message: is not an EIP-4361 sign-in message', { field: 'message' });
    }
    const result = await message.verify({ signature, time: new Date(now).toISOString() }, { suppressExceptions: true });
    if (!result.success) throw new DomainError('unauthorized', `sign-in refused: ${result.error?.type ?? 'invalid signature'}`);
    return {
      address: message.address.toLowerCase(),
      domain: message.domain,
      uri: message.uri,
      chainId: Number(message.chainId),
      nonce: message.nonce,
      issuedAt: time(message.issuedAt) ?? now,
      expirationTime: time(message.expirationTime),
      notBefore: time(message.notBefore),
    };
  },
};
