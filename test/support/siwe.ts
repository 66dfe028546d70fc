import { Wallet, type BaseWallet } from 'ethers';
import { SiweMessage } from 'siwe';

/** Public anvil development keys: test wallets only. */
export const testWallets = {
  merchant: new Wallet('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'),
  other: new Wallet('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a'),
  admin: new Wallet('0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6'),
};

export interface MessageFields {
  domain?: string;
  uri?: string;
  chainId?: number;
  nonce: string;
  issuedAt?: Date;
  expirationTime?: Date;
}

/** An EIP-4361 message for `wallet`, signed by it (or by `signer` when given, for forgeries). */
export const signedSignIn = async (wallet: BaseWallet, fields: MessageFields, signer: BaseWallet = wallet) => {
  const message = new SiweMessage({
    domain: fields.domain ?? 'localhost:7071',
    address: wallet.address,
    statement: 'Sign in to the merchant dashboard.',
    uri: fields.uri ?? 'http://localhost:7071',
    version: '1',
    chainId: fields.chainId ?? 31337,
    nonce: fields.nonce,
    issuedAt: (fields.issuedAt ?? new Date()).toISOString(),
    ...(fields.expirationTime && { expirationTime: fields.expirationTime.toISOString() }),
  }).prepareMessage();
  return { message, signature: await signer.signMessage(message) };
};
