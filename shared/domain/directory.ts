import { z } from 'zod';
import type { Merchant } from './merchant';
import { blankAsAbsent, queryIntegerOr } from './query-params';
import { industryPacks, type ShopConfig } from './shop';

/** The public shop directory (`GET /api/directory/shops`): which shops it lists, how it searches them, what it shows. */

export const DIRECTORY_LIMIT_DEFAULT = 20;
export const DIRECTORY_LIMIT_MAX = 50;
/** The store reads offset + limit shops to answer a page: the deepest page is bounded. */
export const DIRECTORY_OFFSET_MAX = 10_000;
/** Values per list filter (`categories`, `keywords`). */
export const DIRECTORY_FILTER_VALUES_MAX = 20;

/** Lower-cased text that `q` searches: name, keywords, categories and description, one per line. */
export const directorySearchTextOf = (shop: ShopConfig): string =>
  [shop.branding.name, ...shop.directory.keywords, ...shop.directory.categories, shop.branding.description].join('\n').toLowerCase();

/** A shop is in the directory once its configuration lists it under a slug and it has a deployed split. */
export const isDirectoryListed = (merchant: Pick<Merchant, 'shop' | 'split'>): boolean =>
  merchant.shop.directory.listed && merchant.shop.directory.slug !== null && merchant.split !== null;

/** The merchant document with its directory fields derived from its shop and split (the only way they are written). */
export const withDirectoryFields = (merchant: Merchant): Merchant => ({
  ...merchant,
  directoryListed: isDirectoryListed(merchant),
  directorySearchText: directorySearchTextOf(merchant.shop),
});

/** Comma-separated values, trimmed, blanks and repeats dropped. */
const commaList = (name: string) =>
  z
    .preprocess(blankAsAbsent, z.string().max(1000, 'must be at most 1000 characters').optional())
    .transform((value) => (value ? [...new Set(value.split(',').map((part) => part.trim()).filter(Boolean))] : []))
    .refine((values) => values.length <= DIRECTORY_FILTER_VALUES_MAX, `at most ${DIRECTORY_FILTER_VALUES_MAX} ${name}`)
    .describe(`comma-separated ${name}, matched exactly; a shop matches when it has any of them`);

export const DirectoryQuery = z.object({
  q: z
    .preprocess(
      blankAsAbsent,
      z
        .string()
        .max(100, 'must be at most 100 characters')
        .regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, 'must not contain control characters')
        .optional(),
    )
    .transform((value) => value?.trim().toLowerCase() || undefined)
    .describe('case-insensitive substring of the name, keywords, categories or description'),
  categories: commaList('categories'),
  keywords: commaList('keywords'),
  offset: queryIntegerOr(0, DIRECTORY_OFFSET_MAX, 0),
  limit: queryIntegerOr(1, DIRECTORY_LIMIT_MAX, DIRECTORY_LIMIT_DEFAULT),
});
export type DirectoryQuery = z.output<typeof DirectoryQuery>;

/**
 * The store's side of the query, for adapters that filter in process: a document counts only with
 * its stored directory fields (one written before they existed is not listed), like the Cosmos query.
 * Filters combine with AND; within `categories` (and within `keywords`) any one value matches.
 */
export const matchesDirectoryQuery = (merchant: Merchant, query: Pick<DirectoryQuery, 'q' | 'categories' | 'keywords'>): boolean => {
  if (merchant.directoryListed !== true) return false;
  if (query.q && !(merchant.directorySearchText ?? '').includes(query.q)) return false;
  const { categories, keywords } = merchant.shop.directory;
  if (query.categories.length > 0 && !query.categories.some((category) => categories.includes(category))) return false;
  if (query.keywords.length > 0 && !query.keywords.some((keyword) => keywords.includes(keyword))) return false;
  return true;
};

/** The interface document's shop directory entry. */
export const DirectoryEntry = z.object({
  name: z.string(),
  slug: z.string(),
  description: z.string(),
  categories: z.array(z.string()),
  keywords: z.array(z.string()),
  industryPack: z.enum(industryPacks),
  theme: z.object({ brandLogoUrl: z.string(), coverPhotoUrl: z.string() }),
  own: z.literal(true).optional().describe("present on the caller's own shop when the request signs in with its wallet (SIGN-IN-WITH-X)"),
});
export type DirectoryEntry = z.output<typeof DirectoryEntry>;

export const directoryEntryOf = (shop: ShopConfig): DirectoryEntry => ({
  name: shop.branding.name,
  slug: shop.directory.slug ?? '',
  description: shop.branding.description,
  categories: shop.directory.categories,
  keywords: shop.directory.keywords,
  industryPack: shop.directory.industryPack,
  theme: { brandLogoUrl: shop.branding.brandLogoUrl, coverPhotoUrl: shop.branding.coverPhotoUrl },
});

export const DirectoryResponse = z.object({
  ok: z.literal(true),
  directory: z.array(DirectoryEntry),
  meta: z.object({
    totalReturned: z.number().int().describe('the number of entries in this answer'),
    limit: z.number().int(),
    offset: z.number().int(),
    brandContext: z.string().describe("the deployment's brand key"),
  }),
});
export type DirectoryResponse = z.output<typeof DirectoryResponse>;
