import { randomBytes } from 'node:crypto';
import { ApiManagementClient, type ApiManagementClientOptionalParams } from '@azure/arm-apimanagement';
import type { TokenCredential } from '@azure/core-auth';
import { invalidInput } from '../../domain/errors';
import type { Plan } from '../../domain/subscription';
import { DependencyUnavailableError } from '../../ports/errors';
import type { KeyIssuer } from '../../ports/key-issuer';
import { apimProductOfPlan } from './products';

export interface ApimKeyIssuerOptions {
  credential: TokenCredential;
  /** The Azure subscription that holds the API Management service (not one of our `sub_…` ids). */
  subscriptionId: string;
  resourceGroup: string;
  serviceName: string;
  /** ARM endpoint override, for tests and sovereign clouds; defaults to https://management.azure.com. */
  endpoint?: string;
  /** Pipeline knobs the defaults get wrong for tests (retry delays, a test CA). */
  clientOptions?: Pick<ApiManagementClientOptionalParams, 'retryOptions' | 'tlsOptions' | 'httpClient' | 'proxyOptions'>;
}

interface FailureFacts {
  status: number | undefined;
  armCode: string | undefined;
  requestId: string | undefined;
}

/** ARM answered and refused (4xx): retrying the same call will not help. */
export class KeyIssuerError extends Error {
  readonly status: number | undefined;
  readonly armCode: string | undefined;
  readonly requestId: string | undefined;
  constructor(message: string, facts: FailureFacts) {
    super(message);
    this.name = 'KeyIssuerError';
    this.status = facts.status;
    this.armCode = facts.armCode;
    this.requestId = facts.requestId;
  }
}

/** ARM could not be reached or failed on its side (network, 5xx, throttled) after the SDK's retries: try again later. */
export class KeyIssuerUnavailableError extends DependencyUnavailableError {
  readonly status: number | undefined;
  readonly armCode: string | undefined;
  readonly requestId: string | undefined;
  constructor(message: string, facts: FailureFacts) {
    super('api-management', message);
    this.name = 'KeyIssuerUnavailableError';
    this.status = facts.status;
    this.armCode = facts.armCode;
    this.requestId = facts.requestId;
  }
}

/** The parts of the SDK's RestError we read; duck-typed so this file needs no transitive package at run time. */
interface ArmFailure {
  statusCode?: number;
  code?: string;
  message: string;
  response?: {
    headers?: { get(name: string): string | undefined };
    parsedBody?: unknown;
  };
}

const asArmFailure = (error: unknown): ArmFailure | undefined =>
  error instanceof Error && error.name === 'RestError' ? (error as ArmFailure) : undefined;

/** The `details` of an ARM error body (APIM puts the offending field of a ValidationError there). */
const detailsOf = (failure: ArmFailure): string[] => {
  const body = failure.response?.parsedBody as { details?: unknown; error?: { details?: unknown } } | undefined;
  const details = body?.details ?? body?.error?.details;
  if (!Array.isArray(details)) return [];
  return details
    .filter((detail): detail is Record<string, unknown> => typeof detail === 'object' && detail !== null)
    .map((detail) => [detail.target, detail.code, detail.message].filter((part) => typeof part === 'string' && part).join(': '))
    .filter(Boolean);
};

// ARM validation messages may quote the request body, which carries the key; a message can end up in
// logs and HTTP answers, so the key is cut out of anything we repeat.
const redact = (text: string, secrets: readonly string[]): string =>
  secrets.reduce((out, secret) => (secret ? out.split(secret).join('[redacted]') : out), text);

const isTransient = (failure: ArmFailure): boolean =>
  failure.statusCode === undefined
    ? true // no answer at all: the request never completed
    : failure.statusCode >= 500 || failure.statusCode === 408 || failure.statusCode === 429;

/**
 * Turns an SDK failure into one of this adapter's errors. The original error is not kept as `cause`:
 * it holds the request, whose body is the key.
 */
const translate = (error: unknown, action: string, secrets: readonly string[]): unknown => {
  const failure = asArmFailure(error);
  if (!failure) return error;
  const facts: FailureFacts = {
    status: failure.statusCode,
    armCode: failure.code,
    requestId: failure.response?.headers?.get('x-ms-request-id') ?? undefined,
  };
  const details = detailsOf(failure);
  const said = redact([failure.message, ...details].filter(Boolean).join('; '), secrets);
  const reference = facts.requestId ? ` (ARM request id ${facts.requestId})` : '';
  if (isTransient(failure)) {
    const what =
      failure.statusCode === undefined
        ? `could not reach Azure Resource Manager (${failure.code ?? 'network error'})`
        : `Azure Resource Manager answered HTTP ${failure.statusCode}${failure.code ? ` ${failure.code}` : ''}`;
    return new KeyIssuerUnavailableError(`API Management unavailable: ${action}: ${what}: ${said}${reference}`, facts);
  }
  return new KeyIssuerError(
    `API Management refused to ${action}: HTTP ${failure.statusCode} ${failure.code ?? '(no ARM error code)'}: ${said}${reference}`,
    facts,
  );
};

// 256 bits of entropy; the `sk_` prefix matches the local stack's keys so the key
// prefix shown to merchants and secret scanners look the same in every environment.
const newKey = (): string => `sk_${randomBytes(32).toString('base64url')}`;

/**
 * Developer API keys as API Management subscriptions: one APIM subscription per key, named by our
 * `sub_…` id, in the product of the plan. The gateway checks the key and stamps `x-subscription-id`;
 * the backend record with the same id holds wallet, scopes and plan.
 */
export class ApimKeyIssuer implements KeyIssuer {
  private readonly client: ApiManagementClient;
  private readonly resourceGroup: string;
  private readonly serviceName: string;

  constructor(options: ApimKeyIssuerOptions) {
    const endpoint = options.endpoint?.replace(/\/+$/, '');
    this.client = new ApiManagementClient(options.credential, options.subscriptionId, {
      ...options.clientOptions,
      // The SDK builds URLs from `endpoint` and asks for a token for `<endpoint>/.default`, which is
      // the right audience in sovereign clouds too; `$host` is set alike so no path uses the default.
      ...(endpoint && { endpoint, $host: endpoint }),
    });
    this.resourceGroup = options.resourceGroup;
    this.serviceName = options.serviceName;
  }

  async issue(input: { subscriptionId: string; plan: Plan; wallet: string; displayName: string }): Promise<{ apiKey: string }> {
    if (input.plan === 'development') {
      throw invalidInput('plan', 'development is the local stack’s plan and has no API Management product; choose starter, pro or enterprise');
    }
    const sid = input.subscriptionId;
    // We make the keys rather than let APIM do it: APIM's own are 32 hex characters (128 bits), and
    // this key is also the HMAC secret of the merchant's webhooks, which wants 256 bits; and one key
    // shape everywhere keeps `keyPrefix` and docs true. The secondary key is random and thrown away:
    // rotation here is a new subscription, so no one should ever hold a second live key.
    const primaryKey = newKey();
    const secondaryKey = newKey();
    const secrets = [primaryKey, secondaryKey];
    try {
      await this.client.subscription.createOrUpdate(
        this.resourceGroup,
        this.serviceName,
        sid,
        // No ownerId: merchants are not APIM users; who owns the key is the backend record's business
        // (and the wallet is kept there, APIM has no field for it).
        { scope: `/products/${apimProductOfPlan[input.plan]}`, displayName: input.displayName, state: 'active', primaryKey, secondaryKey },
        { notify: false },
      );
    } catch (error) {
      throw translate(error, `create subscription ${sid}`, secrets);
    }
    let stored: string | undefined;
    try {
      // The answer is the key the gateway holds, read back, rather than the one we asked for.
      stored = (await this.client.subscription.listSecrets(this.resourceGroup, this.serviceName, sid)).primaryKey;
    } catch (error) {
      await this.discard(sid);
      throw translate(error, `read the key of subscription ${sid}`, secrets);
    }
    if (!stored) {
      await this.discard(sid);
      throw new KeyIssuerError(`API Management returned no primary key for subscription ${sid}`, {
        status: undefined,
        armCode: undefined,
        requestId: undefined,
      });
    }
    return { apiKey: stored };
  }

  async revoke(subscriptionId: string): Promise<void> {
    try {
      // `*`: whatever its current version, the subscription goes.
      await this.client.subscription.delete(this.resourceGroup, this.serviceName, subscriptionId, '*');
    } catch (error) {
      if (asArmFailure(error)?.statusCode === 404) return;
      throw translate(error, `delete subscription ${subscriptionId}`, []);
    }
  }

  /**
   * An active subscription whose key was never handed out would still open the gateway (and the
   * caller will not record it), so a half-done issue is undone when it can be; if that fails too, the
   * original failure is the one worth reporting.
   */
  private async discard(sid: string): Promise<void> {
    await this.revoke(sid).catch(() => undefined);
  }
}
