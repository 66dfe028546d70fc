import type { AdminPage } from '../kit';
import { notBuiltYet } from './placeholder';

export const settingsPage: AdminPage = {
  slug: 'settings',
  label: 'Settings',
  intro: 'How your shop looks to buyers, its tax and fee, the directory, webhooks and reserve.',
  render: async () => notBuiltYet(''),
};
