/** EIP-3009 `TransferWithAuthorization`, the EIP-712 type a USDC payer signs (x402's `exact` scheme). */
export const transferWithAuthorization = [
  { name: 'from', type: 'address' },
  { name: 'to', type: 'address' },
  { name: 'value', type: 'uint256' },
  { name: 'validAfter', type: 'uint256' },
  { name: 'validBefore', type: 'uint256' },
  { name: 'nonce', type: 'bytes32' },
];
