// API Management configuration: named values, the backend, the API imported from the generated
// OpenAPI documents, the catch-all for unknown routes, the products, the policies, and telemetry.
//
// One API, not two. The generated documents split the routes by auth (infra/openapi.keyed.json: key
// routes; infra/openapi.keyless.json: public, session and x402 routes), but API Management selects an
// API by its path prefix before it looks at operations, and two APIs may not share a path. The route
// table serves one path both ways (GET /api/shop/config with a key, POST with a session; likewise
// /api/pricing/config and /api/split/deploy), so both documents are imported into one API at the root.
// The split survives as subscription settings on the API and the products:
// - the API requires a subscription, and the plan products (starter, pro, enterprise) require one;
// - the open product "public" does not, so a call without a key is admitted in its context;
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

// The plans of shared/domain/subscription.ts that exist as products (shared/adapters/apim/key-issuer.ts
// puts each key in the product of its plan), with the per-minute quotas of shared/config.ts.
var plans = [
  { name: 'starter', displayName: 'Starter', callsPerMinute: 60 }
  { name: 'pro', displayName: 'Pro', callsPerMinute: 600 }
  { name: 'enterprise', displayName: 'Enterprise', callsPerMinute: 3000 }
]

// Loaded as JSON: loadTextContent stops at 131,072 characters and the keyed document is larger.
var keyedDocument = loadJsonContent('../openapi.keyed.json')
var keylessDocument = loadJsonContent('../openapi.keyless.json')

var keyedOperationIds = flatten(map(items(keyedDocument.paths), path => map(items(path.value), operation => operation.value.operationId)))

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
    name: plan.name
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

// The open product: calls without a key (public, session and x402 routes) are admitted in its context.
resource publicProduct 'Microsoft.ApiManagement/service/products@2024-05-01' = {
  parent: service
  name: 'public'
  properties: {
    displayName: 'Public'
    description: 'Calls without a key: public, session and x402 routes. Key routes answer 401 here (api.xml).'
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

resource diagnostic 'Microsoft.ApiManagement/service/diagnostics@2024-05-01' = {
  parent: service
  name: 'applicationinsights'
  properties: {
    loggerId: logger.id
    alwaysLog: 'allErrors'
    httpCorrelationProtocol: 'W3C'
    verbosity: 'information'
    logClientIp: false
    sampling: {
      samplingType: 'fixed'
      percentage: 100
    }
    // No headers or bodies: they carry subscription keys, payment proofs and session cookies.
    frontend: {
      request: {
        headers: []
        body: {
          bytes: 0
        }
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
      }
      response: {
        headers: []
        body: {
          bytes: 0
        }
      }
    }
  }
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
