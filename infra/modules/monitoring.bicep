// Log Analytics and workspace-based Application Insights, shared by the Function App and API Management.

@description('Base name of the deployment; resource names derive from it.')
param name string

@description('Azure region.')
param location string

@description('Tags applied to every resource.')
param tags object

@description('Days the workspace keeps data.')
param retentionInDays int

resource workspace 'Microsoft.OperationalInsights/workspaces@2023-09-01' = {
  name: 'log-${name}'
  location: location
  tags: tags
  properties: {
    sku: {
      name: 'PerGB2018'
    }
    retentionInDays: retentionInDays
  }
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: 'appi-${name}'
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: workspace.id
    IngestionMode: 'LogAnalytics'
    // Telemetry is accepted only with an Entra ID token (the identities hold Monitoring Metrics
    // Publisher), so the connection string the app and the gateway are given is an address, not a
    // credential: someone who reads it cannot write into this resource.
    DisableLocalAuth: true
  }
}

@description('Application Insights resource id (alert scope, role scope).')
output appInsightsId string = appInsights.id

@description('Application Insights resource name.')
output appInsightsName string = appInsights.name

@description('Application Insights connection string: the ingestion address; with local auth disabled it grants nothing by itself.')
output appInsightsConnectionString string = appInsights.properties.ConnectionString

@description('Log Analytics workspace resource id (diagnostic settings).')
output workspaceId string = workspace.id
