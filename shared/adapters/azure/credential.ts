import type { AccessToken, GetTokenOptions, TokenCredential } from '@azure/core-auth';

/**
 * The app's managed identity (DefaultAzureCredential), loaded on the first token request: the
 * identity library is large, and the local stack (keys, Azurite, the Cosmos protocol server) never needs it.
 */
export const lazyAzureCredential = (): TokenCredential => {
  let credential: Promise<TokenCredential> | undefined;
  return {
    getToken: async (scopes: string | string[], options?: GetTokenOptions): Promise<AccessToken | null> => {
      credential ??= import('@azure/identity').then(({ DefaultAzureCredential }) => new DefaultAzureCredential());
      return (await credential).getToken(scopes, options);
    },
  };
};
