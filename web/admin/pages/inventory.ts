import type { AdminPage } from '../kit';
import { notBuiltYet } from './placeholder';

export const inventoryPage: AdminPage = {
  slug: 'inventory',
  label: 'Inventory',
  intro: 'The items your orders are priced from.',
  render: async () => notBuiltYet(''),
};
