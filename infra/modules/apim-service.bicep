// The API Management instance alone. Its configuration (named values, API, products, policies) is in
// apim.bicep, deployed after roles.bicep: the Key Vault-backed named values need the gateway
// identity's role first, and roles.bicep needs this instance to scope the app's key-issuer role.

@description('Base name of the deployment; the service name derives from it and the resource group id.')
param name string

@description('Azure region.')
param location string

@description('Tags applied to every resource.')
param tags object

@description('API Management tier.')
param skuName string

@description('Publisher e-mail API Management requires.')
param publisherEmail string

@description('Publisher name API Management requires.')
param publisherName string

@description('Resource id of the gateway\'s user-assigned identity (reads its Key Vault secrets, writes telemetry).')
param identityResourceId string

resource service 'Microsoft.ApiManagement/service@2024-05-01' = {
  name: 'apim-${name}-${take(uniqueString(resourceGroup().id, name), 6)}'
  location: location
  tags: tags
  sku: {
    name: skuName
    capacity: 1
  }
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityResourceId}': {}
    }
  }
  properties: {
    publisherEmail: publisherEmail
    publisherName: publisherName
  }
}

@description('Service name (APIM_SERVICE_NAME).')
output name string = service.name

@description('Gateway address, https://<name>.azure-api.net.')
output gatewayUrl string = service.properties.gatewayUrl
