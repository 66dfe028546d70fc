/**
 * Checks of the operator documentation of infra/ (infra/README.md) and the comments of the infra
 * workflow: the deployment sequence works as written against the templates, and what they say about
 * permissions, the edge secret and teardown is true. Each takes the texts and returns its problems,
 * so a test runs it on the real files and on a broken copy.
 */
import { paramAssignments, paramDeclarations, statements } from './bicep';
import { PAYMENT_SETTINGS } from './template-checks';

/** The text of a `## <title>` section, without the heading, up to the next `## `. */
export const markdownSection = (markdown: string, title: string): string | undefined => {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.trim() === `## ${title}`);
  if (start < 0) return undefined;
  const end = lines.findIndex((line, index) => index > start && line.startsWith('## '));
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
};

/** The ```sh blocks of a markdown text, as lists of commands (comments dropped, continuations joined). */
export const shellBlocks = (markdown: string): string[][] =>
  [...markdown.matchAll(/^\s*```(?:sh|bash|shell)\n([\s\S]*?)^\s*```/gm)].map((match) =>
    match[1]!
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#')),
  );

const outputsOf = (mainBicep: string) =>
  new Set(
    statements(mainBicep)
      .map((statement) => /^output\s+(\w+)\b/.exec(statement.text)?.[1])
      .filter((name): name is string => name !== undefined),
  );

const CODE_DEPLOY = /\baz functionapp deployment source config-zip\b|\baz functionapp deploy\b|\bfunc azure functionapp publish\b/;

/**
 * The Deploy section's first shell block is the whole sequence: create the group, deploy without the
 * gateway step, build and deploy the code, deploy again with it, then curl <gateway>/healthz; every
 * output read is an output of main.bicep, read only after a deployment made it; every shell variable
 * used is set earlier in the block; deployments are created and read under one name.
 */
export const checkDeploySequence = (readme: string, infraFiles: Record<string, string>): string[] => {
  const problems: string[] = [];
  const outputs = outputsOf(infraFiles['main.bicep'] ?? '');
  for (const match of readme.matchAll(/properties\.outputs\.(\w+)\.value/g)) {
    if (!outputs.has(match[1]!)) problems.push(`README.md: reads output ${match[1]}, which main.bicep does not have`);
  }
  const section = markdownSection(readme, 'Deploy');
  if (section === undefined) return [...problems, 'README.md: no "## Deploy" section'];
  const commands = shellBlocks(section)[0] ?? [];
  const find = (pattern: RegExp, from = 0) => {
    const index = commands.findIndex((command, at) => at >= from && pattern.test(command));
    return index < 0 ? Number.POSITIVE_INFINITY : index;
  };
  const group = find(/\baz group create\b/);
  const first = find(/\baz deployment group create\b/);
  const code = find(CODE_DEPLOY, first);
  const build = find(/\bnpm run build\b/, first);
  const gateway = find(/\baz deployment group create\b/, code);
  const smoke = find(/\bcurl\b.*\/healthz\b/, gateway);
  if (!(group < first)) problems.push('README.md: the sequence does not create the resource group before deploying');
  if (!Number.isFinite(first) || !/(^|\s)DEPLOY_GATEWAY=false\s/.test(commands[first]!)) {
    problems.push('README.md: the first deployment does not leave out the gateway step (DEPLOY_GATEWAY=false): the host key would be written before the code');
  }
  if (!Number.isFinite(code)) problems.push('README.md: the code is not deployed after the first deployment');
  if (!(build < code)) problems.push('README.md: the code is not built (npm run build) before it is deployed');
  const zip = commands.find((command) => /\bzip\b/.test(command) && !/config-zip/.test(command));
  if (Number.isFinite(code) && /config-zip|functionapp deploy/.test(commands[code]!) && !(zip && /\bdist\b/.test(zip) && /\bhost\.json\b/.test(zip) && /\bpackage\.json\b/.test(zip))) {
    problems.push('README.md: the package does not hold what npm run build makes and the host needs (dist, host.json, package.json)');
  }
  if (!Number.isFinite(gateway) || /DEPLOY_GATEWAY=false/.test(commands[gateway]!)) problems.push('README.md: no gateway step (a deployment with the host key) after the code');
  if (!Number.isFinite(smoke)) problems.push('README.md: no smoke test (curl <gateway>/healthz) after the gateway step');
  else if (!/\$\{?GATEWAY_URL\b|outputs\.gatewayUrl\b/.test(commands.slice(0, smoke + 1).join('\n'))) problems.push('README.md: the smoke test does not use the gatewayUrl output');
  commands.forEach((command, index) => {
    if (/properties\.outputs\./.test(command) && index < first) problems.push(`README.md: "${command}" reads an output before any deployment`);
    for (const match of command.matchAll(/\$\{?([A-Z][A-Z0-9_]*)\b/g)) {
      const name = match[1]!;
      if (!commands.slice(0, index + 1).some((earlier) => new RegExp(`(^|\\s)(export\\s+)?${name}=`).test(earlier.replace(new RegExp(`\\$\\{?${name}\\b`, 'g'), '')))) {
        problems.push(`README.md: "${command}" uses $${name} before it is set`);
      }
    }
  });
  const names = (pattern: RegExp) => new Set(commands.filter((command) => pattern.test(command)).map((command) => /\s-n\s+(\S+)/.exec(command)?.[1]));
  const created = names(/\baz deployment group create\b/);
  for (const name of names(/\baz deployment group show\b/)) if (!created.has(name)) problems.push(`README.md: reads deployment ${name}, which the sequence does not create`);
  for (const file of ['dev.bicepparam', 'prod.bicepparam']) {
    if (!/readEnvironmentVariable\(\s*'DEPLOY_GATEWAY'/.test(infraFiles[file] ?? '')) problems.push(`${file}: does not read DEPLOY_GATEWAY, which the README's first step sets`);
  }
  return problems;
};

/** The first production run is told to export EDGE_SECRET, and nothing says the secret must be in Key Vault before it. */
export const checkEdgeSecretDocs = (readme: string): string[] => {
  const problems: string[] = [];
  const section = markdownSection(readme, 'Deploy') ?? '';
  if (!/first production run/i.test(section) || !shellBlocks(section).flat().some((command) => /^export\s+EDGE_SECRET=/.test(command))) {
    problems.push('README.md: the Deploy section does not tell the first production run to export EDGE_SECRET');
  }
  const flat = readme.replace(/\s+/g, ' ');
  if (/edge-secret`? in Key Vault before the run|must exist (first|before)/i.test(flat)) problems.push('README.md: says the edge secret must be in Key Vault before the first run; that run writes it');
  return problems;
};

/** Paragraphs: blank-line separated blocks and list items of markdown; runs of comment lines of YAML. */
const paragraphs = (path: string, text: string): string[] => {
  if (/\.ya?ml$/.test(path)) {
    const blocks: string[] = [];
    let current: string[] = [];
    for (const line of text.split('\n')) {
      const comment = /^\s*#\s?(.*)$/.exec(line);
      if (comment) current.push(comment[1]!);
      else if (current.length) {
        blocks.push(current.join(' '));
        current = [];
      }
    }
    if (current.length) blocks.push(current.join(' '));
    return blocks;
  }
  return text.split(/\n\s*\n|\n(?=\s*[-*] )/).map((block) => block.replace(/\s+/g, ' '));
};

/**
 * Wherever the permission to deploy is stated (Contributor as a role of its own, not the last word of
 * a data role such as "Storage Queue Data Contributor"), it says Owner or Contributor + User Access
 * Administrator: the templates write role assignments and a custom role definition.
 */
export const checkDeployPermissions = (docs: Record<string, string>): string[] => {
  const problems: string[] = [];
  for (const [path, text] of Object.entries(docs)) {
    for (const paragraph of paragraphs(path, text)) {
      const bare = paragraph.replace(/\*\*/g, '').replace(/\b(?:[A-Z][\w-]*\s+)+Contributor\b/g, '');
      if (!/\bContributor\b/.test(bare)) continue;
      if (!/User Access Administrator/.test(paragraph) || !/\bOwner\b/.test(paragraph)) {
        problems.push(`${path}: "${paragraph.trim().slice(0, 80)}…" names Contributor without Owner or Contributor + User Access Administrator (the templates write role assignments and a role definition)`);
      }
    }
  }
  return problems;
};

/** A Teardown section: soft-deleted Key Vault and API Management keep their names; how to purge them, and what the collision looks like. */
export const checkTeardown = (readme: string): string[] => {
  const section = markdownSection(readme, 'Teardown');
  if (section === undefined) return ['README.md: no "## Teardown" section'];
  const problems: string[] = [];
  const commands = shellBlocks(section).flat().join('\n');
  for (const [pattern, what] of [
    [/\baz group delete\b/, 'az group delete'],
    [/\baz keyvault purge\b/, 'az keyvault purge'],
    [/\baz apim deletedservice purge\b/, 'az apim deletedservice purge'],
  ] as const) {
    if (!pattern.test(commands)) problems.push(`README.md: Teardown does not show ${what}`);
  }
  const prose = section.replace(/\s+/g, ' ');
  if (!/soft.delet/i.test(prose)) problems.push('README.md: Teardown does not explain soft delete');
  if (!/already exists in deleted state/i.test(prose)) problems.push("README.md: Teardown does not show the Key Vault name collision's error");
  if (!/purge protection/i.test(prose)) problems.push('README.md: Teardown does not say what purge protection changes');
  const readFirst = commands.search(/properties\.outputs\./);
  const deleted = commands.search(/\baz group delete\b/);
  if (readFirst >= 0 && deleted >= 0 && readFirst > deleted) problems.push('README.md: Teardown reads deployment outputs after the group (and its deployments) is gone');
  return problems;
};

/** A literal value of a parameter (default or assignment) as the README would show it, or undefined. */
const shownValue = (expression: string | undefined) => {
  const value = expression?.trim();
  if (value === undefined) return undefined;
  if (/^'[^'$\\]*'$/.test(value)) return value.slice(1, -1);
  return /^-?\d+$/.test(value) ? value : undefined;
};

/**
 * The Payments section: every payment setting with its parameter, the values main.bicep defaults to
 * and each parameter file sets (addresses, numbers, URLs), every timer of the trigger table, and the
 * relayer's secret and balance alert.
 */
export const checkPaymentsDocs = (readme: string, infraFiles: Record<string, string>, timers: readonly string[]): string[] => {
  const section = markdownSection(readme, 'Payments');
  if (section === undefined) return ['README.md: no "## Payments" section'];
  const problems: string[] = [];
  const shows = (text: string) => section.toLowerCase().includes(text.toLowerCase());
  for (const { setting, param } of PAYMENT_SETTINGS) {
    if (!shows(`\`${setting}\``) || !shows(`\`${param}\``)) problems.push(`README.md: Payments does not name ${param} (${setting})`);
  }
  const sources: Array<[string, Record<string, string | undefined>]> = [
    ['main.bicep', Object.fromEntries(paramDeclarations(infraFiles['main.bicep'] ?? '').map((param) => [param.name, /=\s*([\s\S]+)$/.exec(param.text)?.[1]]))],
    ...Object.keys(infraFiles)
      .filter((file) => file.endsWith('.bicepparam'))
      .map((file): [string, Record<string, string | undefined>] => [file, Object.fromEntries(paramAssignments(infraFiles[file]!).map((assignment) => [assignment.name, assignment.value]))]),
  ];
  for (const [file, values] of sources) {
    for (const { param } of PAYMENT_SETTINGS) {
      const value = shownValue(values[param]);
      if (value && !shows(`\`${value}\``)) problems.push(`README.md: Payments does not show ${file}'s ${param} \`${value}\``);
    }
  }
  for (const timer of timers) if (!shows(`\`${timer}\``)) problems.push(`README.md: Payments does not list the timer ${timer}`);
  for (const text of ['relayer-private-key', 'relayerMinBalanceEth', 'one instance at a time']) {
    if (!shows(text)) problems.push(`README.md: Payments does not mention ${text}`);
  }
  return problems;
};
