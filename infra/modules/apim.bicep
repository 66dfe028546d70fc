// API Management configuration: named values, the backend, the API imported from the generated
// OpenAPI documents, the catch-all for unknown routes, the products, the policies, and telemetry.
//
// One API, not two. The generated documents split the routes by auth (infra/openapi.keyed.json: key
// routes; infra/openapi.keyless.json: public, portal, session and x402 routes), but API Management selects an
// API by its path prefix before it looks at operations, and two APIs may not share a path. The route
// table serves one path both ways (GET /api/shop/config with a key, POST with a session; likewise
// /api/pricing/config and /api/split/deploy), so both documents are imported into one API at the root.
// The split survives as subscription settings on the API and the products:
// - the API requires a subscription, and the plan products (plan-starter, plan-pro, plan-enterprise)
//   require one;
// - the open product "public" does not, so a call without a key is admitted in its context (and
//   api.xml limits such calls per client address, keylessCallsPerMinute, and the x402 routes more
//   tightly, x402CallsPerMinute): the buyer's pages and their API (/pay/{id}, /portal/{id},
//   /portal/assets/{file}, /api/portal/{id}/...), the shop directory and the x402 routes
//   (/api/x402/orders, /api/x402/subscribe) are called so;
// - the API policy answers 401 to such a call when its operation is a key route, from the named value
//   keyed-operations, which is derived below from the keyed document (so it cannot drift from it).

@description('API Management service name (apim-service.bicep).')
param serviceName string

@description('Function App host name, the backend.')
param functionAppHostName string

@description('Key Vault URI, ending with a slash.')
param keyVaultUri string

@description('Key Vault secret names by purpose (keyvault.bicep).')
param secretNames object

@description('Client id of the gateway identity (Key Vault named values, telemetry).')
param identityClientId string

@description('Whether an edge proxy must front every request (x-edge-secret).')
param edgeProxyEnabled bool

@description('Origins allowed by CORS (scheme and host).')
param allowedOrigins string[]

@description('Application Insights resource id.')
param appInsightsId string

@description('Application Insights connection string.')
param appInsightsConnectionString string

@description('Log Analytics workspace for the gateway\'s own logs.')
param logAnalyticsWorkspaceId string

@description('Calls a minute one client address may make without a key (the named value keyless-calls-per-minute, applied in api.xml).')
param keylessCallsPerMinute int

@description('Calls a minute one client address may make to the x402 routes, besides the keyless limit (the named value x402-calls-per-minute, applied in api.xml).')
param x402CallsPerMinute int

// The plans of shared/domain/subscription.ts that exist as products, with the per-minute quotas of
// shared/config.ts. The product ids are those of shared/adapters/apim/products.ts, where the key issuer
// takes them from (test/infra keeps the two equal). Not "starter" or "unlimited": a new API Management
// instance may already have products by those names, and this template would take them over. Display
// names are unique in a service too, so not "Starter" either (nor those of the products this replaced).
var plans = [
  { plan: 'starter', product: 'plan-starter', displayName: 'Starter plan', callsPerMinute: 60 }
  { plan: 'pro', product: 'plan-pro', displayName: 'Pro plan', callsPerMinute: 600 }
  { plan: 'enterprise', product: 'plan-enterprise', displayName: 'Enterprise plan', callsPerMinute: 3000 }
]

// Loaded as JSON: loadTextContent stops at 131,072 characters and the keyed document is larger.
var keyedDocument = loadJsonContent('../openapi.keyed.json')
var keylessDocument = loadJsonContent('../openapi.keyless.json')

// Key routes that also take a sign-in-with-x proof (x-auth signInWithX: GET /api/shop/config) are left
// out: a call without a key goes on to the backend, which reads the proof or answers 401 itself.
var keyedOperationIds = flatten(map(
  items(keyedDocument.paths),
  path => map(filter(items(path.value), operation => !contains(operation.value['x-auth'], 'signInWithX')), operation => operation.value.operationId)
))

// The x402 routes (x-auth kind x402 in the keyless document), which api.xml limits per client address
// more tightly than other calls without a key.
var x402OperationIds = flatten(map(
  items(keylessDocument.paths),
  path => map(filter(items(path.value), operation => operation.value['x-auth'].kind == 'x402'), operation => operation.value.operationId)
))

var pathTemplates = union(map(items(keyedDocument.paths), path => path.key), map(items(keylessDocument.paths), path => path.key))

// Per path, the methods of both documents. API Management turns a required query parameter into part
// of the URL template, so a call without it would miss the operation and get a gateway 404 instead of
// the backend's 400 naming the field: at the gateway every query parameter is optional.
var gatewayPaths = toObject(
  pathTemplates,
  path => path,
  path =>
    toObject(
      items(union(keyedDocument.paths[?path] ?? {}, keylessDocument.paths[?path] ?? {})),
      operation => operation.key,
      operation =>
        union(operation.value, {
          parameters: map(
            operation.value.?parameters ?? [],
            parameter => union(parameter, { required: parameter['in'] == 'path' })
          )
        })
    )
)

var gatewayDocument = {
  openapi: keylessDocument.openapi
  info: {
    title: 'Crypto Receipts API'
    version: keyedDocument.info.version
  }
  servers: [
    {
      url: 'https://${functionAppHostName}'
    }
  ]
  paths: gatewayPaths
  components: {
    schemas: union(keylessDocument.?components.?schemas ?? {}, keyedDocument.?components.?schemas ?? {})
  }
}

// Every method gets a wildcard operation, so an unknown route is an operation of this API (with the
// 404 policy) rather than an error before any policy runs.
var unknownRouteMethods = [
  'GET'
  'POST'
  'PUT'
  'PATCH'
  'DELETE'
  'HEAD'
  'OPTIONS'
]

resource service 'Microsoft.ApiManagement/service@2024-05-01' existing = {
  name: serviceName
}

resource functionKey 'Microsoft.ApiManagement/service/namedValues@2024-05-01' = {
  parent: service
  name: 'function-key'
  properties: {
    displayName: 'function-key'
    secret: true
    keyVault: {
      secretIdentifier: '${keyVaultUri}secrets/${secretNames.gatewayFunctionKey}'
      identityClientId: identityClientId
    }
  }
}

// Without an edge proxy the policy refuses any x-edge-secret without comparing it, and the named value
// only has to exist for the policy to be accepted: it holds a fixed marker, not a secret.
resource edgeSecret 'Microsoft.ApiManagement/service/namedValues@2024-05-01' = {
  parent: service
  name: 'edge-secret'
  properties: edgeProxyEnabled
    ? {
        displayName: 'edge-secret'
        secret: true
        keyVault: {
          secretIdentifier: '${keyVaultUri}secrets/${secretNames.edgeSecret}'
          identityClientId: identityClientId
        }
      }
    : {
        displayName: 'edge-secret'
        secret: true
        value: 'edge-proxy-not-configured'
      }
}

resource edgeProxyEnabledValue 'Microsoft.ApiManagement/service/namedValues@2024-05-01' = {
  parent: service
  name: 'edge-proxy-enabled'
  properties: {
    displayName: 'edge-proxy-enabled'
    secret: false
    value: edgeProxyEnabled ? 'true' : 'false'
  }
}

// Delimited on both sides so that a lookup of "|<operation id>|" matches whole ids only. Import names
// each operation after its operationId (the test checks the ids are already in the normalized form).
resource keyedOperations 'Microsoft.ApiManagement/service/namedValues@2024-05-01' = {
  parent: service
  name: 'keyed-operations'
  properties: {
    displayName: 'keyed-operations'
    secret: false
    value: '|${join(keyedOperationIds, '|')}|'
  }
}

// api.xml reads it as a number: the per-address limit of calls without a key.
resource keylessCallsPerMinuteValue 'Microsoft.ApiManagement/service/namedValues@2024-05-01' = {
  parent: service
  name: 'keyless-calls-per-minute'
  properties: {
    displayName: 'keyless-calls-per-minute'
    secret: false
    value: string(keylessCallsPerMinute)
  }
}

// Delimited like keyed-operations: api.xml looks up "|<operation id>|".
resource x402Operations 'Microsoft.ApiManagement/service/namedValues@2024-05-01' = {
  parent: service
  name: 'x402-operations'
  properties: {
    displayName: 'x402-operations'
    secret: false
    value: '|${join(x402OperationIds, '|')}|'
  }
}

// api.xml reads it as a number: the per-address limit of the x402 routes.
resource x402CallsPerMinuteValue 'Microsoft.ApiManagement/service/namedValues@2024-05-01' = {
  parent: service
  name: 'x402-calls-per-minute'
  properties: {
    displayName: 'x402-calls-per-minute'
    secret: false
    value: string(x402CallsPerMinute)
  }
}

resource correlationIdFragment 'Microsoft.ApiManagement/service/policyFragments@2024-05-01' = {
  parent: service
  name: 'correlation-id'
  properties: {
    description: 'Sets the variable correlationId: a well-formed incoming X-Correlation-Id, else the gateway request id.'
    format: 'xml'
    value: loadTextContent('../policies/fragments/correlation-id.xml')
  }
}

resource backend 'Microsoft.ApiManagement/service/backends@2024-05-01' = {
  parent: service
  name: 'function-app'
  properties: {
    description: 'The Function App; the API policy adds its function key.'
    protocol: 'http'
    url: 'https://${functionAppHostName}'
    tls: {
      validateCertificateChain: true
      validateCertificateName: true
    }
  }
}

resource globalPolicy 'Microsoft.ApiManagement/service/policies@2024-05-01' = {
  parent: service
  name: 'policy'
  properties: {
    format: 'xml'
    value: replace(
      loadTextContent('../policies/global.xml'),
      '<origin>__ALLOWED_ORIGINS__</origin>',
      join(map(allowedOrigins, origin => '<origin>${origin}</origin>'), '')
    )
  }
  dependsOn: [
    correlationIdFragment
  ]
}

// At the root path, with the Function App's root as the service URL: not every route starts with /api
// (/healthz, and the buyer's pages /pay/{id}, /portal/{id} and /portal/assets/{file}), and the Functions
// host adds no route prefix (host.json, routePrefix ""), so a request's path is the same at the gateway
// and at the backend.
resource api 'Microsoft.ApiManagement/service/apis@2024-05-01' = {
  parent: service
  name: 'payments'
  properties: {
    displayName: 'Crypto Receipts API'
    path: ''
    protocols: [
      'https'
    ]
    apiType: 'http'
    subscriptionRequired: true
    // The interface document's header. The x-api-key alias cannot be a second name here (one header
    // name per API); api.xml handles it.
    subscriptionKeyParameterNames: {
      header: 'Ocp-Apim-Subscription-Key'
      query: 'subscription-key'
    }
    format: 'openapi+json'
    value: string(gatewayDocument)
    serviceUrl: 'https://${functionAppHostName}'
  }
}

resource apiPolicy 'Microsoft.ApiManagement/service/apis/policies@2024-05-01' = {
  parent: api
  name: 'policy'
  properties: {
    format: 'xml'
    value: loadTextContent('../policies/api.xml')
  }
  dependsOn: [
    functionKey
    edgeSecret
    edgeProxyEnabledValue
    keyedOperations
    keylessCallsPerMinuteValue
    x402Operations
    x402CallsPerMinuteValue
    backend
    globalPolicy
  ]
}

resource unknownRoutes 'Microsoft.ApiManagement/service/apis/operations@2024-05-01' = [
  for method in unknownRouteMethods: {
    parent: api
    name: 'not-found-${toLower(method)}'
    properties: {
      displayName: 'Unknown route (${method})'
      method: method
      urlTemplate: '/*'
      responses: []
    }
  }
]

resource unknownRoutePolicies 'Microsoft.ApiManagement/service/apis/operations/policies@2024-05-01' = [
  for (method, index) in unknownRouteMethods: {
    parent: unknownRoutes[index]
    name: 'policy'
    properties: {
      format: 'xml'
      value: method == 'OPTIONS'
        ? loadTextContent('../policies/not-found-options.xml')
        : loadTextContent('../policies/not-found.xml')
    }
    dependsOn: [
      apiPolicy
    ]
  }
]

resource planProducts 'Microsoft.ApiManagement/service/products@2024-05-01' = [
  for plan in plans: {
    parent: service
    name: plan.product
    properties: {
      displayName: plan.displayName
      description: '${plan.callsPerMinute} calls a minute per key. Scopes are not set here: they live on the backend\'s subscription record.'
      subscriptionRequired: true
      approvalRequired: false
      state: 'published'
    }
  }
]

resource planProductApis 'Microsoft.ApiManagement/service/products/apis@2024-05-01' = [
  for (plan, index) in plans: {
    parent: planProducts[index]
    name: api.name
  }
]

resource planProductPolicies 'Microsoft.ApiManagement/service/products/policies@2024-05-01' = [
  for (plan, index) in plans: {
    parent: planProducts[index]
    name: 'policy'
    properties: {
      format: 'xml'
      value: replace(loadTextContent('../policies/product-plan.xml'), '__CALLS_PER_MINUTE__', string(plan.callsPerMinute))
    }
  }
]

// The open product: calls without a key (public, portal, session and x402 routes) are admitted in its context.
resource publicProduct 'Microsoft.ApiManagement/service/products@2024-05-01' = {
  parent: service
  name: 'public'
  properties: {
    displayName: 'Public'
    description: 'Calls without a key: public, portal (the buyer\'s pages and their API), session and x402 routes. Key routes answer 401 here (api.xml).'
    subscriptionRequired: false
    state: 'published'
  }
}

resource publicProductApi 'Microsoft.ApiManagement/service/products/apis@2024-05-01' = {
  parent: publicProduct
  name: api.name
}

resource logger 'Microsoft.ApiManagement/service/loggers@2024-05-01' = {
  parent: service
  name: 'application-insights'
  properties: {
    loggerType: 'applicationInsights'
    resourceId: appInsightsId
    isBuffered: true
    credentials: {
      connectionString: appInsightsConnectionString
      // Ingestion with the gateway identity's token (Application Insights has local auth off).
      identityClientId: identityClientId
    }
  }
}

// What the gateway's own telemetry may contain. No headers or bodies: they carry subscription keys,
// payment proofs and session cookies. The URL is logged, and a key may be in it (the query parameter
// subscription-key), so that value is masked; the key and edge headers are hidden should anyone list
// headers here later.
var dataMasking = {
  queryParams: [
    { value: 'subscription-key', mode: 'Mask' }
  ]
  headers: [
    { value: 'Ocp-Apim-Subscription-Key', mode: 'Hide' }
    { value: 'x-api-key', mode: 'Hide' }
    { value: 'x-edge-secret', mode: 'Hide' }
    { value: 'x-functions-key', mode: 'Hide' }
  ]
}

var loggedMessages = {
  frontend: {
    request: {
      headers: []
      body: {
        bytes: 0
      }
      dataMasking: dataMasking
    }
    response: {
      headers: []
      body: {
        bytes: 0
      }
    }
  }
  backend: {
    request: {
      headers: []
      body: {
        bytes: 0
      }
      dataMasking: dataMasking
    }
    response: {
      headers: []
      body: {
        bytes: 0
      }
    }
  }
}

// Requests in Application Insights.
resource diagnostic 'Microsoft.ApiManagement/service/diagnostics@2024-05-01' = {
  parent: service
  name: 'applicationinsights'
  properties: union(loggedMessages, {
    loggerId: logger.id
    alwaysLog: 'allErrors'
    httpCorrelationProtocol: 'W3C'
    verbosity: 'information'
    logClientIp: false
    sampling: {
      samplingType: 'fixed'
      percentage: 100
    }
  })
}

// The gateway's resource logs (GatewayLogs, sent to Log Analytics by gatewayLogs below) carry the URL
// too; the service's built-in "azuremonitor" logger and diagnostic are what mask them.
resource azureMonitorLogger 'Microsoft.ApiManagement/service/loggers@2024-05-01' = {
  parent: service
  name: 'azuremonitor'
  properties: {
    loggerType: 'azureMonitor'
    isBuffered: true
  }
}

resource azureMonitorDiagnostic 'Microsoft.ApiManagement/service/diagnostics@2024-05-01' = {
  parent: service
  name: 'azuremonitor'
  properties: union(loggedMessages, {
    loggerId: azureMonitorLogger.id
    alwaysLog: 'allErrors'
    verbosity: 'information'
    logClientIp: false
    sampling: {
      samplingType: 'fixed'
      percentage: 100
    }
  })
}

resource gatewayLogs 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  name: 'to-log-analytics'
  scope: service
  properties: {
    workspaceId: logAnalyticsWorkspaceId
    logs: [
      {
        categoryGroup: 'allLogs'
        enabled: true
      }
    ]
    metrics: [
      {
        category: 'AllMetrics'
        enabled: true
      }
    ]
  }
}
