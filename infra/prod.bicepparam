// Production: Base mainnet, a Standard v2 gateway behind an edge proxy, purge protection on.
// Secrets come from the environment of whoever deploys (never from this file): see infra/README.md.
using 'main.bicep'

param name = 'payments-prod'
param tags = {
  environment: 'prod'
  service: 'crypto-receipts'
}
param apimSku = 'StandardV2'
param apimPublisherEmail = 'platform@example.com'
param apimPublisherName = 'Crypto Receipts'
// The edge proxy's public host name (replace with yours); it forwards to the API Management gateway.
param publicBaseUrl = 'https://pay.example.com'
param corsAllowedOrigins = []
param brandKey = 'default'
param brandName = 'Crypto Receipts'

// Base mainnet: the app fills in the chain id, Circle's USDC, Chainlink's ETH/USD (with its staleness
// limit), 2 confirmations and BaseScan (shared/domain/chain-networks.ts); Base has no Tether-issued
// USDT. The payment watcher calls the RPC endpoint every second: give CHAIN_RPC_URL a provider's
// endpoint; the public one is rate limited.
param chainNetwork = 'base'
param chainRpcUrl = readEnvironmentVariable('CHAIN_RPC_URL', 'https://mainnet.base.org')
param splitFactoryAddress = readEnvironmentVariable('SPLIT_FACTORY_ADDRESS')
param platformWallet = readEnvironmentVariable('PLATFORM_WALLET')
param adminWallets = readEnvironmentVariable('ADMIN_WALLETS')

param functionMaximumInstanceCount = 100
param functionInstanceMemoryMB = 2048
param storageSku = 'Standard_ZRS'
param logRetentionDays = 90
param keyVaultPurgeProtection = true
// The edge proxy (e.g. Front Door) injects x-edge-secret and appends the client address to
// X-Forwarded-For. The first run takes the secret from EDGE_SECRET (below) and writes it into the vault
// it creates; later runs may leave EDGE_SECRET unset.
param edgeProxyEnabled = true

// The gateway step (host key "apim", API Management's configuration): DEPLOY_GATEWAY=false only on
// the very first run, before the code is deployed (infra/README.md, "Deploy").
param deployGateway = bool(readEnvironmentVariable('DEPLOY_GATEWAY', 'true'))
param keylessCallsPerMinute = 120
param x402CallsPerMinute = 30
param splitDeployDailyBudget = 200

// Payments: the quote lock, expiry, slippage and the watcher's log range (infra/README.md, "Payments").
param quoteLockSeconds = 600
param receiptExpirySeconds = 86400
param paymentSlippageBps = 100
param watchBlockRange = 2000
param portalCallsPerMinute = 120
// x402: empty settles agents' payments in process with the relayer; a facilitator's base URL settles them there.
param x402FacilitatorUrl = ''
// Card payments: none until Stripe's secrets are in Key Vault (then stripe; infra/README.md "Card payments").
param onrampProvider = 'none'

param actionGroupResourceId = readEnvironmentVariable('ALERT_ACTION_GROUP_ID')
param outboxDepthThreshold = 100
param serverErrorRatePercent = 2
param relayerMinBalanceEth = '0.05'

param gatewayFunctionKey = readEnvironmentVariable('GATEWAY_FUNCTION_KEY')
param jwtSecret = readEnvironmentVariable('JWT_SECRET', '')
param dataEncryptionKey = readEnvironmentVariable('DATA_ENCRYPTION_KEY', '')
param relayerPrivateKey = readEnvironmentVariable('RELAYER_PRIVATE_KEY', '')
param receiptSigningKey = readEnvironmentVariable('RECEIPT_SIGNING_KEY', '')
param stripeSecretKey = readEnvironmentVariable('STRIPE_SECRET_KEY', '')
param stripeWebhookSecret = readEnvironmentVariable('STRIPE_WEBHOOK_SECRET', '')
param edgeSecret = readEnvironmentVariable('EDGE_SECRET', '')
