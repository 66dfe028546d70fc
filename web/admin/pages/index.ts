/**
 * The console's pages, in the navigation's order. Each page is a module of its own in this folder
 * (and its browser part in ../client/, by the same name), so a page is added or replaced without
 * touching the others.
 */
import type { AdminPage } from '../kit';
import { apiKeysPage } from './api-keys';
import { inventoryPage } from './inventory';
import { overviewPage } from './overview';
import { receiptsPage } from './receipts';
import { settingsPage } from './settings';
import { splitPage } from './split';
import { terminalPage } from './terminal';
import { webhooksPage } from './webhooks';

export const adminPages: readonly AdminPage[] = [overviewPage, splitPage, inventoryPage, settingsPage, apiKeysPage, receiptsPage, terminalPage, webhooksPage];

/** The page at `/console/<slug>` (`''` and `overview`: the overview), or undefined. */
export const findPage = (slug: string): AdminPage | undefined => adminPages.find((page) => page.slug === (slug === 'overview' ? '' : slug));
