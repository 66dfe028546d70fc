// The whole service in one resource group: identities, monitoring, storage queues, Cosmos DB,
// Key Vault, the Function App (Flex Consumption) and API Management in front of it, and alerts.
// Deploy: see infra/README.md. Nothing here holds a secret value: secrets are secure parameters
// (left empty, they are set in Key Vault with `az keyvault secret set`).
//
// Two steps on a new environment (deployGateway): first everything but the gateway's wiring, then,
// once the code is deployed, the same template again with the Functions host key "apim" and the API
// Management configuration. A Function App without code has no Functions host serving, and the host
// key can only be written through it; on a first run it would fail the deployment and leave no outputs.
targetScope = 'resourceGroup'

@description('Base name of the deployment (e.g. payments-prod): lower-case letters, digits and hyphens. Resource names derive from it and from the resource group id.')
@minLength(3)
@maxLength(20)
param name string

@description('Azure region for every resource. Defaults to the resource group\'s region.')
param location string = resourceGroup().location

@description('Tags applied to every resource.')
param tags object = {}

@description('API Management tier. The consumption tier is not offered: it has no rate-limit-by-key policy.')
@allowed([
  'Developer'
  'BasicV2'
  'StandardV2'
  'Basic'
  'Standard'
  'Premium'
])
param apimSku string = 'BasicV2'

@description('Publisher e-mail that API Management requires (shown in its developer portal and notifications).')
param apimPublisherEmail string

@description('Publisher name that API Management requires.')
param apimPublisherName string

@description('Public base address of the service, scheme and host without a trailing slash (BASE_URL: payment links, the sign-in domain, the CSRF origin, the CORS origin). Empty: the API Management gateway address.')
param publicBaseUrl string = ''

@description('Browser origins (scheme and host) besides the base URL\'s own that may call the API with credentials (CORS).')
param corsAllowedOrigins string[] = []

@description('Whether an edge proxy (e.g. Front Door) sits in front of API Management. When true, every request must carry x-edge-secret equal to the Key Vault secret edge-secret: give edgeSecret (EDGE_SECRET) on the first run, and this deployment writes it into the vault it creates; later runs may leave edgeSecret empty. The proxy must append the client address to X-Forwarded-For (the keyless rate limit counts by it). When false, any request carrying x-edge-secret is refused.')
param edgeProxyEnabled bool = false

@description('The gateway step: write the Functions host key "apim" and configure API Management (named values, API, products, policies, telemetry). The host key can only be written once the Function App serves code, so the very first run, before the code is deployed, passes false (DEPLOY_GATEWAY=false in the parameter files); every run after the code is deployed leaves it true. A run with false changes nothing that an earlier gateway step made.')
param deployGateway bool = true

@description('Calls a minute one client address may make to the routes without a key (public, session and x402), counted by API Management across the fleet; also the app setting KEYLESS_RATE_LIMIT_PER_MINUTE.')
@minValue(1)
param keylessCallsPerMinute int = 120

@description('Calls a minute one client address may make to the x402 routes (/api/x402/*), counted by API Management across the fleet besides keylessCallsPerMinute: each unpaid call answers a payment challenge, each paid one costs a settlement. Also the app setting X402_RATE_LIMIT_PER_MINUTE.')
@minValue(1)
param x402CallsPerMinute int = 30

@description('Split deployments the relayer pays for, across all merchants, per UTC day (SPLIT_DEPLOY_DAILY_BUDGET).')
@minValue(0)
param splitDeployDailyBudget int = 200

// The relayer's other gas (docs/decisions.md, "The relayer's budget"): the defaults are the app's,
// sized to Base at 0.05 gwei and 4,000 USD an ETH.
@description('x402 settlements the service pays gas for, across all payers, per UTC day (SETTLEMENT_DAILY_BUDGET); once spent, x402 payments answer 503 relayer_budget_spent until midnight UTC.')
@minValue(0)
param settlementDailyBudget int = 1000

@description('Distributions the relayer sends to reconcile paid receipts, across all splits, per UTC day (DISTRIBUTION_DAILY_BUDGET); once spent, paid receipts wait for the next day.')
@minValue(0)
param distributionDailyBudget int = 1000

@description('Deposit sweeps the relayer sends before it distributes (DepositFactory.sweepMany transactions of up to 50 deposit addresses, some 4.1 M gas each), across all shops, per UTC day (SWEEP_DAILY_BUDGET); once spent, paid receipts at deposit addresses wait for the next day (merchants may sweep from their own wallets).')
@minValue(0)
param sweepDailyBudget int = 50

@description('The smallest x402 order in USDC atomic units, 6 decimals (X402_MIN_ORDER_USDC): its 1 % platform fee pays for its settlement. Never below the interface document\'s 100000 (0.10 USDC).')
@minValue(100000)
param x402MinOrderUsdc int = 2000000

@description('USDC a split must hold, in atomic units (DISTRIBUTE_MIN_USDC), before the relayer distributes it; 0: whatever it holds.')
@minValue(0)
param distributeMinUsdc int = 5000000

@description('USDT a split must hold, in atomic units (DISTRIBUTE_MIN_USDT), before the relayer distributes it; 0: whatever it holds.')
@minValue(0)
param distributeMinUsdt int = 5000000

@description('ETH a split must hold, in wei (DISTRIBUTE_MIN_ETH_WEI), before the relayer distributes it; 0: whatever it holds.')
@minValue(0)
param distributeMinEthWei int = 1250000000000000

@description('Brand key of this deployment (BRAND_KEY): 1-32 of a-z 0-9 -.')
param brandKey string = 'default'

@description('Brand display name (BRAND_NAME).')
param brandName string = 'Crypto Receipts'

// The chain (infra/README.md, "Payments"): chainNetwork names it, and the app fills in its chain id,
// Circle's USDC, Chainlink's ETH/USD feed and that feed's staleness limit, the confirmations and the
// explorer (shared/domain/chain-networks.ts). The parameters after it override one value each; left
// empty (0 for the numbers) they keep the network's.

@description('JSON-RPC endpoint of the EVM chain (CHAIN_RPC_URL). The payment watcher calls it every second: use a provider\'s endpoint whose plan covers that, not a public rate-limited one. If your provider puts an API key in the URL, treat it as a secret: store it in Key Vault and change the app setting to a Key Vault reference. The app refuses to start unless it serves the network\'s chain id and the configured tokens and feed.')
param chainRpcUrl string

@description('The chain by name (CHAIN_NETWORK): base (Base mainnet, 8453) or base-sepolia (Base Sepolia, 84532). The local network of npm start is refused in production.')
@allowed([
  'base'
  'base-sepolia'
])
param chainNetwork string = 'base'

@description('USDC token contract (USDC_ADDRESS). Empty: the network\'s, Circle\'s USDC.')
param usdcAddress string = ''

@description('USDT token contract (USDT_ADDRESS). Empty: the network\'s; neither Base network has a Tether-issued USDT, so empty means no USDT payments.')
param usdtAddress string = ''

@description('Chainlink ETH/USD price feed, AggregatorV3 (ETH_USD_FEED_ADDRESS). Empty: the network\'s.')
param ethUsdFeedAddress string = ''

@description('Seconds after which the feed\'s latest answer is stale and an ETH quote answers 409 price_stale (FEED_HEARTBEAT_SECONDS): the feed\'s heartbeat plus a margin. 0: the network\'s, 1500 on both Base networks (the feed\'s 1200-second heartbeat plus 300 seconds for an update that is late to land).')
@minValue(0)
param feedHeartbeatSeconds int = 0

@description('Blocks a payment or refund needs, its own included, before it counts (CHAIN_CONFIRMATIONS). 0: the network\'s, 2 on both Base networks: the block and one more (about 4 seconds), past a one-block reorganisation of the sequencer\'s latest block, without waiting for L1 finality.')
@minValue(0)
@maxValue(100)
param chainConfirmations int = 0

@description('Block explorer for transaction links, <url>/tx/<hash> (CHAIN_EXPLORER_URL). Empty: the network\'s BaseScan.')
param chainExplorerUrl string = ''

@description('A remote x402 facilitator that verifies and settles the payments agents make by x402 (X402_FACILITATOR_URL, its base URL). Empty: the app settles them in process, the relayer submitting each payment on the chain above.')
param x402FacilitatorUrl string = ''

@description('Who sells USDC to card buyers (ONRAMP_PROVIDER): stripe (Stripe\'s crypto on-ramp; then the Key Vault secrets stripe-secret-key and stripe-webhook-secret must exist, written by this deployment from stripeSecretKey and stripeWebhookSecret or by the operator) or none (no card payments).')
@allowed(['none', 'stripe'])
param onrampProvider string = 'none'

@description('Split factory contract (SPLIT_FACTORY_ADDRESS).')
param splitFactoryAddress string

@description('Deposit factory contract, which makes per-receipt deposit addresses (DEPOSIT_FACTORY_ADDRESS). Empty: none on this chain yet; no payment uses it yet.')
param depositFactoryAddress string = ''

@description('Platform payout wallet in every split (PLATFORM_WALLET).')
param platformWallet string

@description('Platform admin wallets, comma-separated (ADMIN_WALLETS).')
param adminWallets string

@description('Seconds a quote holds its token amount and rate (QUOTE_LOCK_SECONDS).')
@minValue(30)
@maxValue(86400)
param quoteLockSeconds int = 600

@description('Seconds after which an unpaid receipt fails with PORTAL_SESSION_EXPIRED (RECEIPT_EXPIRY_SECONDS); a valid payment arriving later still makes it paid.')
@minValue(10)
param receiptExpirySeconds int = 86400

@description('Basis points a payment after its quote\'s lock may fall short of the amount at the current price and still count (PAYMENT_SLIPPAGE_BPS, 100 = 1 %); below that an ETH payment fails the receipt with PORTAL_CHAIN_SLIPPAGE_EXCEEDED.')
@minValue(0)
@maxValue(5000)
param paymentSlippageBps int = 100

@description('Blocks one eth_getLogs call of the payment watcher may span (WATCH_BLOCK_RANGE); keep it within the RPC provider\'s limit for eth_getLogs.')
@minValue(1)
@maxValue(100000)
param watchBlockRange int = 2000

@description('Calls a minute about one receipt on the buyer\'s routes (portal), counted by the app (PORTAL_RATE_LIMIT_PER_MINUTE); the gateway limits each client address besides (keylessCallsPerMinute).')
@minValue(1)
param portalCallsPerMinute int = 120

@description('Most instances Flex Consumption may scale the Function App to.')
@minValue(1)
@maxValue(1000)
param functionMaximumInstanceCount int = 40

@description('Memory of each Function App instance, in MB.')
@allowed([
  512
  2048
  4096
])
param functionInstanceMemoryMB int = 2048

@description('Replication of the storage account that holds the queues and the deployment package.')
@allowed([
  'Standard_LRS'
  'Standard_ZRS'
  'Standard_GRS'
])
param storageSku string = 'Standard_LRS'

@description('Days Log Analytics keeps logs and telemetry.')
@minValue(30)
@maxValue(730)
param logRetentionDays int = 30

@description('Turn on Key Vault purge protection (cannot be turned off again; a deleted vault then keeps its name for 90 days). Recommended for production.')
param keyVaultPurgeProtection bool = true

@description('Resource id of the Azure Monitor action group the alerts notify. Empty: alerts fire and show in the portal but notify no one.')
param actionGroupResourceId string = ''

@description('Alert when the outbox queue holds more than this many messages for 15 minutes (writes accepted while the store was down and not yet applied).')
@minValue(1)
param outboxDepthThreshold int = 100

@description('Alert when more than this percentage of requests in 15 minutes answer 5xx.')
@minValue(1)
@maxValue(100)
param serverErrorRatePercent int = 5

@description('Alert when the relayer wallet holds less than this much native currency (ETH), as a decimal string, e.g. 0.05. The relayer pays gas for split deployments, the distributions that reconcile paid receipts, and x402 settlement.')
param relayerMinBalanceEth string = '0.05'

@description('The Functions host key that API Management sends as x-functions-key. Written as the Key Vault secret apim-function-key on every run and as the host key "apim" in the gateway step (deployGateway). Generate it (see infra/README.md); never commit it.')
@secure()
@minLength(32)
param gatewayFunctionKey string

@description('JWT_SECRET (signs admin sessions, at least 32 characters). Empty: the Key Vault secret jwt-secret is left as it is (set it with az keyvault secret set).')
@secure()
param jwtSecret string = ''

@description('DATA_ENCRYPTION_KEY (32 bytes, base64; encrypts the API keys that sign webhooks). Empty: the Key Vault secret data-encryption-key is left as it is.')
@secure()
param dataEncryptionKey string = ''

@description('RELAYER_PRIVATE_KEY (0x + 64 hex digits; the wallet that pays gas for split deployments and distributions). Written into the Key Vault secret relayer-private-key, which the app setting references. Empty: the Key Vault secret relayer-private-key is left as it is.')
@secure()
param relayerPrivateKey string = ''

@description('RECEIPT_SIGNING_KEY (0x + 64 hex digits; signs paid receipts\' proofs, which buyers check against the address at /.well-known/receipt-signer). Written into the Key Vault secret receipt-signing-key, which the app setting references. Empty: the Key Vault secret receipt-signing-key is left as it is.')
@secure()
param receiptSigningKey string = ''

@description('RECEIPT_SIGNERS_RETIRED: receipt-signing keys rotated out, as 0xaddress@time (ISO 8601 or Unix ms), comma-separated. Published at /.well-known/receipt-signer so proofs they signed for payments before that time keep verifying. Empty: none.')
param receiptSignersRetired string = ''

@description('STRIPE_SECRET_KEY (sk_live_… or a restricted rk_live_… key; sk_test_… on Base Sepolia) for the card on-ramp. Written into the Key Vault secret stripe-secret-key, which the app setting references when onrampProvider is stripe. Empty: the secret is left as it is.')
@secure()
param stripeSecretKey string = ''

@description('STRIPE_WEBHOOK_SECRET (whsec_…, of the Stripe webhook endpoint <gateway>/api/onramp/stripe/webhook). Written into the Key Vault secret stripe-webhook-secret. Empty: the secret is left as it is.')
@secure()
param stripeWebhookSecret string = ''

@description('EDGE_SECRET (the value the edge proxy injects as x-edge-secret; use hex). Written into the Key Vault secret edge-secret, in the vault this deployment creates: required on the first run with edgeProxyEnabled. Empty: the secret is left as it is.')
@secure()
param edgeSecret string = ''

// The queues of shared/registry.ts, each with the poison queue the Functions host moves a message to
// after maxDequeueCount failed attempts (host.json). They are created here, not by the app:
// STORE_AUTO_CREATE is off in production.
var queueNames = [
  'webhooks'
  'webhooks-poison'
  'outbox'
  'outbox-poison'
  'outbox-rejected'
  'outbox-rejected-poison'
]

// shared/registry.ts names the containers; the JSON copy is what Bicep can read, and
// test/infra/templates.test.ts keeps the two equal.
var cosmosContainers = loadJsonContent('cosmos-containers.json').containers

var cosmosDatabaseName = 'payments'
var deploymentContainerName = 'app-package'

// Two identities so that the gateway can read only its own two secrets while the app holds the data roles.
module appIdentity 'br/public:avm/res/managed-identity/user-assigned-identity:0.4.1' = {
  name: 'app-identity'
  params: {
    name: 'id-${name}-app'
    location: location
    tags: tags
  }
}

module gatewayIdentity 'br/public:avm/res/managed-identity/user-assigned-identity:0.4.1' = {
  name: 'gateway-identity'
  params: {
    name: 'id-${name}-gateway'
    location: location
    tags: tags
  }
}

module monitoring 'modules/monitoring.bicep' = {
  name: 'monitoring'
  params: {
    name: name
    location: location
    tags: tags
    retentionInDays: logRetentionDays
  }
}

module storage 'modules/storage.bicep' = {
  name: 'storage'
  params: {
    name: name
    location: location
    tags: tags
    skuName: storageSku
    queueNames: queueNames
    deploymentContainerName: deploymentContainerName
  }
}

module cosmos 'modules/cosmos.bicep' = {
  name: 'cosmos'
  params: {
    name: name
    location: location
    tags: tags
    databaseName: cosmosDatabaseName
    containers: cosmosContainers
  }
}

module keyVault 'modules/keyvault.bicep' = {
  name: 'key-vault'
  params: {
    name: name
    location: location
    tags: tags
    purgeProtection: keyVaultPurgeProtection
    gatewayFunctionKey: gatewayFunctionKey
    jwtSecret: jwtSecret
    dataEncryptionKey: dataEncryptionKey
    relayerPrivateKey: relayerPrivateKey
    receiptSigningKey: receiptSigningKey
    stripeSecretKey: stripeSecretKey
    stripeWebhookSecret: stripeWebhookSecret
    edgeSecret: edgeSecret
  }
}

module apimService 'modules/apim-service.bicep' = {
  name: 'apim-service'
  params: {
    name: name
    location: location
    tags: tags
    skuName: apimSku
    publisherEmail: apimPublisherEmail
    publisherName: apimPublisherName
    identityResourceId: gatewayIdentity.outputs.resourceId
  }
}

module roles 'modules/roles.bicep' = {
  name: 'roles'
  params: {
    appPrincipalId: appIdentity.outputs.principalId
    gatewayPrincipalId: gatewayIdentity.outputs.principalId
    storageAccountName: storage.outputs.accountName
    blobContainerNames: storage.outputs.blobContainerNames
    cosmosAccountName: cosmos.outputs.accountName
    cosmosDatabaseName: cosmosDatabaseName
    keyVaultName: keyVault.outputs.vaultName
    gatewaySecretNames: edgeProxyEnabled
      ? [keyVault.outputs.secretNames.gatewayFunctionKey, keyVault.outputs.secretNames.edgeSecret]
      : [keyVault.outputs.secretNames.gatewayFunctionKey]
    appInsightsName: monitoring.outputs.appInsightsName
    apimServiceName: apimService.outputs.name
  }
}

var baseUrl = empty(publicBaseUrl) ? apimService.outputs.gatewayUrl : publicBaseUrl

module functionApp 'modules/functionapp.bicep' = {
  name: 'function-app'
  params: {
    name: name
    location: location
    tags: tags
    identityResourceId: appIdentity.outputs.resourceId
    identityClientId: appIdentity.outputs.clientId
    storageAccountName: storage.outputs.accountName
    queueEndpoint: storage.outputs.queueEndpoint
    blobEndpoint: storage.outputs.blobEndpoint
    deploymentContainerName: deploymentContainerName
    appInsightsConnectionString: monitoring.outputs.appInsightsConnectionString
    logAnalyticsWorkspaceId: monitoring.outputs.workspaceId
    keyVaultUri: keyVault.outputs.vaultUri
    secretNames: keyVault.outputs.secretNames
    edgeProxyEnabled: edgeProxyEnabled
    cosmosEndpoint: cosmos.outputs.endpoint
    cosmosDatabaseName: cosmosDatabaseName
    baseUrl: baseUrl
    brandKey: brandKey
    brandName: brandName
    chainRpcUrl: chainRpcUrl
    chainNetwork: chainNetwork
    usdcAddress: usdcAddress
    usdtAddress: usdtAddress
    ethUsdFeedAddress: ethUsdFeedAddress
    feedHeartbeatSeconds: feedHeartbeatSeconds
    chainConfirmations: chainConfirmations
    chainExplorerUrl: chainExplorerUrl
    receiptSignersRetired: receiptSignersRetired
    quoteLockSeconds: quoteLockSeconds
    receiptExpirySeconds: receiptExpirySeconds
    paymentSlippageBps: paymentSlippageBps
    watchBlockRange: watchBlockRange
    portalCallsPerMinute: portalCallsPerMinute
    x402FacilitatorUrl: x402FacilitatorUrl
    onrampProvider: onrampProvider
    splitFactoryAddress: splitFactoryAddress
    depositFactoryAddress: depositFactoryAddress
    platformWallet: platformWallet
    adminWallets: adminWallets
    apimServiceName: apimService.outputs.name
    maximumInstanceCount: functionMaximumInstanceCount
    instanceMemoryMB: functionInstanceMemoryMB
    keylessCallsPerMinute: keylessCallsPerMinute
    x402CallsPerMinute: x402CallsPerMinute
    splitDeployDailyBudget: splitDeployDailyBudget
    settlementDailyBudget: settlementDailyBudget
    distributionDailyBudget: distributionDailyBudget
    sweepDailyBudget: sweepDailyBudget
    x402MinOrderUsdc: x402MinOrderUsdc
    distributeMinUsdc: distributeMinUsdc
    distributeMinUsdt: distributeMinUsdt
    distributeMinEthWei: distributeMinEthWei
  }
  // Key Vault references and identity-based storage resolve only once the roles exist.
  dependsOn: [
    roles
  ]
}

// The gateway step (deployGateway): only once the code is deployed does the Functions host serve and
// accept a host key. The Key Vault secret with the same value is written on every run (keyVault).
module gatewayHostKey 'modules/gateway-host-key.bicep' = if (deployGateway) {
  name: 'gateway-host-key'
  params: {
    functionAppName: functionApp.outputs.name
    gatewayFunctionKey: gatewayFunctionKey
  }
}

// Also in the gateway step: by then the gateway identity's Key Vault roles (given in the first step)
// have had time to take effect, which the Key Vault-backed named values need.
module apim 'modules/apim.bicep' = if (deployGateway) {
  name: 'apim'
  params: {
    serviceName: apimService.outputs.name
    functionAppHostName: functionApp.outputs.defaultHostName
    keyVaultUri: keyVault.outputs.vaultUri
    secretNames: keyVault.outputs.secretNames
    identityClientId: gatewayIdentity.outputs.clientId
    edgeProxyEnabled: edgeProxyEnabled
    allowedOrigins: union([baseUrl], corsAllowedOrigins)
    appInsightsId: monitoring.outputs.appInsightsId
    appInsightsConnectionString: monitoring.outputs.appInsightsConnectionString
    logAnalyticsWorkspaceId: monitoring.outputs.workspaceId
    keylessCallsPerMinute: keylessCallsPerMinute
    x402CallsPerMinute: x402CallsPerMinute
  }
  // The Key Vault-backed named values are fetched with the gateway identity's role.
  dependsOn: [
    roles
  ]
}

module alerts 'modules/alerts.bicep' = {
  name: 'alerts'
  params: {
    name: name
    location: location
    tags: tags
    appInsightsId: monitoring.outputs.appInsightsId
    actionGroupResourceId: actionGroupResourceId
    poisonQueueNames: filter(queueNames, queue => endsWith(queue, '-poison'))
    outboxDepthThreshold: outboxDepthThreshold
    serverErrorRatePercent: serverErrorRatePercent
    relayerMinBalanceEth: relayerMinBalanceEth
  }
}

@description('Public address of the API (API Management gateway, or publicBaseUrl).')
output baseUrl string = baseUrl

@description('API Management gateway address, https://<service>.azure-api.net: the smoke test (curl <gatewayUrl>/healthz) and the edge proxy\'s origin. Known from the first step on.')
output gatewayUrl string = apimService.outputs.gatewayUrl

@description('Function App host name, <app>.azurewebsites.net: the gateway\'s backend (every function there wants a key).')
output functionAppHostName string = functionApp.outputs.defaultHostName

@description('Function App name, for deploying the code (func azure functionapp publish / az functionapp deploy).')
output functionAppName string = functionApp.outputs.name

@description('Key Vault name, for az keyvault secret set.')
output keyVaultName string = keyVault.outputs.vaultName

@description('API Management service name (APIM_SERVICE_NAME).')
output apimServiceName string = apimService.outputs.name

@description('Cosmos DB endpoint (COSMOS_ENDPOINT).')
output cosmosEndpoint string = cosmos.outputs.endpoint

@description('Storage account that holds the queues.')
output storageAccountName string = storage.outputs.accountName
