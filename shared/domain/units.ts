/**
 * Token amounts as text, without zod or anything else a browser bundle would have to carry: the
 * portal's script formats amounts with the same function the server does.
 */

/** An amount in atomic units shown in whole tokens, without trailing zeros ("52.020001", "0.0173"). */
export const formatUnits = (amount: string | bigint, decimals: number): string => {
  const value = BigInt(amount);
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
};

/** The explorer's page of a transaction, or null where the deployment names no explorer. */
export const transactionUrl = (explorerUrl: string | null, hash: string): string | null =>
  explorerUrl ? `${explorerUrl.replace(/\/+$/, '')}/tx/${hash}` : null;
