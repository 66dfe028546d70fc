/** API keys: a placeholder until the page's own module replaces this file. */
import type { AdminPage } from '../kit';
import { notBuiltYet } from './placeholder';

export const apiKeysPage: AdminPage = {
  slug: 'api-keys',
  label: 'API keys',
  intro: 'Create keys for your backend (each shown once), see when they were last used, revoke them.',
  render: async () => notBuiltYet('Until then, create and revoke keys with POST /api/keys and DELETE /api/keys/{id} while signed in, or npm run keys locally.'),
};
