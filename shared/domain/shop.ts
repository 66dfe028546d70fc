import { z } from 'zod';
import { JurisdictionCode, findJurisdiction } from './tax-catalog';
import { ReserveRatios } from './reserve';

export const industryPacks = ['general', 'restaurant', 'retail', 'hotel', 'freelancer', 'publishing'] as const;

/** Slugs that would be confusing or collide with paths and product words. */
const reservedSlugs = new Set([
  'admin', 'api', 'app', 'assets', 'auth', 'billing', 'dashboard', 'directory', 'docs', 'health', 'healthz', 'help',
  'login', 'logout', 'merchant', 'new', 'pay', 'platform', 'portal', 'pricing', 'receipt', 'receipts', 'settings',
  'shop', 'shops', 'signin', 'signup', 'static', 'status', 'support', 'www', 'x402',
]);

const text = (max: number) => z.string().trim().max(max);
const color = z.string().regex(/^#[0-9a-fA-F]{6}$/, 'must be a #rrggbb colour');
const imageUrl = z.union([z.literal(''), z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2048)]);
const decimals = (places: number) => (value: number) => Math.round(value * 10 ** places) / 10 ** places === value;

export const Slug = z
  .string()
  .max(32, 'must be at most 32 characters')
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be lower-case letters, digits and single hyphens')
  .refine((slug) => !reservedSlugs.has(slug), 'is reserved');

export const ShopBranding = z.object({
  name: text(80).default(''),
  description: text(500).default(''),
  brandLogoUrl: imageUrl.default(''),
  coverPhotoUrl: imageUrl.default(''),
  colors: z
    .object({ primary: color.default('#1a56db'), accent: color.default('#0e9f6e'), background: color.default('#ffffff') })
    .default({ primary: '#1a56db', accent: '#0e9f6e', background: '#ffffff' }),
});

export const ShopLayout = z.object({
  template: z.enum(['classic', 'compact', 'minimal']).default('classic'),
  showLogo: z.boolean().default(true),
  showPoweredBy: z.boolean().default(true),
});

export const TaxRate = z.number().min(0).max(0.3).refine(decimals(6), 'must have at most 6 decimals');

export const TaxDefaults = z
  .object({
    jurisdictions: z
      .array(z.object({ code: JurisdictionCode, name: text(80).min(1), rate: TaxRate }))
      .max(50)
      .default([]),
    defaultJurisdictionCode: JurisdictionCode.nullable().default(null),
  })
  .superRefine((tax, ctx) => {
    const codes = tax.jurisdictions.map((jurisdiction) => jurisdiction.code);
    codes.forEach((code, index) => {
      if (codes.indexOf(code) !== index) ctx.addIssue({ code: 'custom', path: ['jurisdictions', index, 'code'], message: 'appears twice' });
    });
    const fallback = tax.defaultJurisdictionCode;
    if (fallback && !codes.includes(fallback) && !findJurisdiction(fallback)) {
      ctx.addIssue({ code: 'custom', path: ['defaultJurisdictionCode'], message: 'is neither in jurisdictions nor in the tax catalog' });
    }
  });

export const ShopDirectory = z.object({
  slug: Slug.nullable().default(null),
  categories: z.array(text(40).min(1)).max(3, 'at most 3').default([]),
  keywords: z.array(text(40).min(1)).max(5, 'at most 5').default([]),
  industryPack: z.enum(industryPacks).default('general'),
  listed: z.boolean().default(false),
});

export const ProcessingFeePct = z.number().min(0).max(10).refine(decimals(2), 'must have at most 2 decimals');

const groups = {
  branding: ShopBranding,
  layout: ShopLayout,
  taxDefaults: TaxDefaults,
  processingFeePct: ProcessingFeePct,
  webhookUrl: z.string().max(2048).nullable(),
  directory: ShopDirectory,
  /** Target shares of the merchant's reserve by token; null: none set (the recommendation aims for an even split). */
  reserveRatios: ReserveRatios.nullable(),
};

/** A shop configuration write: each group present replaces that group; absent groups stay as they are. */
export const ShopConfigUpdate = z.object({
  branding: groups.branding.optional(),
  layout: groups.layout.optional(),
  taxDefaults: groups.taxDefaults.optional(),
  processingFeePct: groups.processingFeePct.optional(),
  webhookUrl: groups.webhookUrl.optional(),
  directory: groups.directory.optional(),
  reserveRatios: groups.reserveRatios.optional(),
});
export type ShopConfigUpdate = z.output<typeof ShopConfigUpdate>;

export const ShopConfig = z.object({ ...groups, updatedAt: z.number().int().nullable() });
export type ShopConfig = z.output<typeof ShopConfig>;

export const defaultShopConfig = (): ShopConfig => ({
  branding: ShopBranding.parse({}),
  layout: ShopLayout.parse({}),
  taxDefaults: TaxDefaults.parse({}),
  processingFeePct: 0,
  webhookUrl: null,
  directory: ShopDirectory.parse({}),
  reserveRatios: null,
  updatedAt: null,
});

export const slugClaimId = (slug: string) => `slug:${slug}`;

/** The tax rate (fraction) for a code: the shop's own jurisdictions first, then the platform catalog. */
export const taxRateFor = (config: ShopConfig, code: string): number | undefined =>
  config.taxDefaults.jurisdictions.find((jurisdiction) => jurisdiction.code === code)?.rate ?? findJurisdiction(code)?.rate;
