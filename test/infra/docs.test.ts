/**
 * The operator documentation of infra/ (infra/README.md) and the comments of the infra workflow, checked
 * against the templates: the deployment sequence works as written, and what they say about
 * permissions, the edge secret and teardown holds. The second half feeds the same checks broken copies.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allTriggers } from '../../shared/triggers/table';
import { checkDeployPermissions, checkDeploySequence, checkEdgeSecretDocs, checkPaymentsDocs, checkTeardown } from './support/doc-checks';
import { readInfraFiles, repoRoot } from './support/files';

const infraFiles = readInfraFiles();
const readme = readFileSync(join(repoRoot, 'infra/README.md'), 'utf8');
const workflow = readFileSync(join(repoRoot, '.github/workflows/infra.yml'), 'utf8');
const docs = { 'infra/README.md': readme, '.github/workflows/infra.yml': workflow };
const timers = allTriggers.filter((trigger) => trigger.kind === 'timer').map((trigger) => trigger.name);

const replaced = (text: string, from: string | RegExp, to = '') => {
  const changed = text.replace(from, to);
  if (changed === text) throw new Error(`the text does not contain ${String(from)}`);
  return changed;
};

describe('infra documentation', () => {
  it('deploys a new environment in an order that works: infrastructure, code, gateway step, smoke test, reading only outputs that exist', () => {
    expect(checkDeploySequence(readme, infraFiles)).toEqual([]);
  });

  it('tells the first production run to give EDGE_SECRET, which that run writes into its vault', () => {
    expect(checkEdgeSecretDocs(readme)).toEqual([]);
  });

  it('states the permission to deploy as Owner or Contributor + User Access Administrator, in the README and the workflow', () => {
    expect(checkDeployPermissions(docs)).toEqual([]);
  });

  it('documents teardown: purging the soft-deleted Key Vault and API Management, and the name-collision symptom', () => {
    expect(checkTeardown(readme)).toEqual([]);
  });

  it('documents payments: every setting with the values the templates use, the timers, the relayer', () => {
    expect(timers).toContain('payments-watch');
    expect(checkPaymentsDocs(readme, infraFiles, timers)).toEqual([]);
  });
});

describe('the documentation checks fail on a broken copy', () => {
  it('the first deployment with the gateway step, before the code (the sequence before the gateway step existed)', () => {
    const copy = replaced(readme, 'DEPLOY_GATEWAY=false az deployment group create', 'az deployment group create');
    expect(checkDeploySequence(copy, infraFiles)).toEqual([
      'README.md: the first deployment does not leave out the gateway step (DEPLOY_GATEWAY=false): the host key would be written before the code',
    ]);
  });

  it('no gateway step or smoke test after the code, or an output main.bicep does not have', () => {
    const noGateway = replaced(readme, /^# 4\. The gateway step.*\naz deployment group create .*\n/m);
    expect(checkDeploySequence(noGateway, infraFiles)).toEqual([
      'README.md: no gateway step (a deployment with the host key) after the code',
      'README.md: no smoke test (curl <gateway>/healthz) after the gateway step',
    ]);
    const output = replaced(readme, 'properties.outputs.gatewayUrl.value', 'properties.outputs.gatewayAddress.value');
    expect(checkDeploySequence(output, infraFiles)).toEqual(['README.md: reads output gatewayAddress, which main.bicep does not have']);
    const unset = replaced(readme, /^FUNCTION_APP=.*\n/m);
    expect(checkDeploySequence(unset, infraFiles)).toEqual([expect.stringMatching(/uses \$FUNCTION_APP before it is set$/)]);
  });

  it('an edge secret that must be in Key Vault before the first production run', () => {
    const copy = replaced(readme, /On the \*\*first production run\*\* export it before step 2:/, 'Put the secret `edge-secret` in Key Vault before the run.');
    expect(checkEdgeSecretDocs(copy)).toEqual([
      'README.md: the Deploy section does not tell the first production run to export EDGE_SECRET',
      'README.md: says the edge secret must be in Key Vault before the first run; that run writes it',
    ]);
  });

  it('Contributor alone stated as enough (the workflow comment before this fix)', () => {
    const copy = replaced(workflow, /on the dev\n# resource group Owner, or Contributor \+ User Access Administrator:[\s\S]*?Control Administrator writes no role definition\)/, 'and\n# Contributor on the dev resource group: what-if runs the deployment\'s validation)');
    expect(checkDeployPermissions({ ...docs, '.github/workflows/infra.yml': copy })).toEqual([expect.stringMatching(/^\.github\/workflows\/infra\.yml: .* names Contributor without Owner/)]);
  });

  it('a Payments section that lost a setting, shows another value than the templates, or leaves out a timer', () => {
    expect(checkPaymentsDocs(replaced(readme, '## Payments', '## Chain'), infraFiles, timers)).toEqual(['README.md: no "## Payments" section']);
    const row = replaced(readme, /^\| `watchBlockRange` .*\n/m);
    expect(checkPaymentsDocs(row, infraFiles, timers)).toEqual([
      'README.md: Payments does not name watchBlockRange (WATCH_BLOCK_RANGE)',
      "README.md: Payments does not show main.bicep's watchBlockRange `2000`",
      "README.md: Payments does not show dev.bicepparam's watchBlockRange `2000`",
      "README.md: Payments does not show prod.bicepparam's watchBlockRange `2000`",
    ]);
    const feed = { ...infraFiles, 'dev.bicepparam': infraFiles['dev.bicepparam']!.replace("param chainNetwork = 'base-sepolia'", "param chainNetwork = 'base-sepolia'\nparam feedHeartbeatSeconds = 1800") };
    expect(checkPaymentsDocs(readme, feed, timers)).toEqual(["README.md: Payments does not show dev.bicepparam's feedHeartbeatSeconds `1800`"]);
    const timer = replaced(readme, /^\| `receipts-expire` .*\n/m);
    expect(checkPaymentsDocs(timer, infraFiles, timers)).toEqual(['README.md: Payments does not list the timer receipts-expire']);
  });

  it('no Teardown section, or one without the purges', () => {
    expect(checkTeardown(replaced(readme, '## Teardown', '## Cleaning up'))).toEqual(['README.md: no "## Teardown" section']);
    const noPurge = replaced(readme, /^az apim deletedservice purge .*\n/m);
    expect(checkTeardown(noPurge)).toEqual(['README.md: Teardown does not show az apim deletedservice purge']);
  });
});
