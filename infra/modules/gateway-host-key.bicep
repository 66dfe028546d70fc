// The Functions host key "apim" that API Management sends as x-functions-key. Its own module, deployed
// only in the gateway step (main.bicep, deployGateway): ARM writes a host key through the Functions
// host of the app, and a Function App that has no code yet has no host serving, so on the very first
// deployment, before the code, this write would fail and take the whole deployment (and its outputs)
// with it. infra/README.md, "Deploy": infrastructure, code, then this.

@description('Function App name (functionapp.bicep).')
param functionAppName string

@description('Value of the host key "apim": the same value as the Key Vault secret apim-function-key that API Management\'s named value function-key reads.')
@secure()
param gatewayFunctionKey string

resource site 'Microsoft.Web/sites@2024-04-01' existing = {
  name: functionAppName
}

resource functionsHost 'Microsoft.Web/sites/host@2024-04-01' existing = {
  parent: site
  name: 'default'
}

// The value is given, not generated and read back: reading a key back would need listKeys().
resource gatewayHostKey 'Microsoft.Web/sites/host/functionKeys@2024-04-01' = {
  parent: functionsHost
  name: 'apim'
  properties: {
    name: 'apim'
    value: gatewayFunctionKey
  }
}
