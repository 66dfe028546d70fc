/**
 * Inventory: the items orders are priced from. The list is the API's own search, filters, sort and
 * pages (`GET /api/inventory`'s query, read from this page's address, so links and the browser's
 * back button keep them); the form creates an item or, with `?edit=<id>`, replaces one; deleting asks
 * first. Writes go to the session routes `POST` / `DELETE /api/console/inventory`.
 */
import { listInventory } from '../../../shared/app/inventory-list';
import { describeZodError } from '../../../shared/domain/errors';
import { ID_PATTERN } from '../../../shared/domain/query-params';
import { InventoryListQuery, inventorySortFields, type InventoryItem } from '../../../shared/domain/inventory';
import { routes } from '../../../shared/http/routes';
import { adminPath, attrs, checkbox, esc, errorSlot, field, fieldId, formStatus, notice, panel, select, usd, type AdminPage, type Html, type PageContext } from '../kit';

/** The list's query names, as `GET /api/inventory` takes them. */
const LIST_NAMES = ['q', 'category', 'stock', 'taxable', 'priceMin', 'priceMax', 'tags', 'tagsMode', 'sort', 'order', 'page', 'limit'] as const;

const DEFAULT_LIMIT = '20';

const listParams = (query: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(LIST_NAMES.flatMap((name) => (query[name] !== undefined && query[name] !== '' ? [[name, query[name]]] : [])));

const sortLabels: Record<(typeof inventorySortFields)[number], string> = { updatedAt: 'Last changed', name: 'Name', sku: 'SKU', priceUsd: 'Price', stockQty: 'Stock' };

const stockText = (qty: number) => (qty === -1 ? 'Not tracked' : qty === 0 ? 'Out of stock' : String(qty));

const textarea = (name: string, label: string, value: string, hint?: string): Html => {
  const id = fieldId(name);
  return `<div class="field span-all">
<label for="${id}">${esc(label)}</label>
${hint ? `<p class="hint" id="${id}-hint">${esc(hint)}</p>` : ''}<textarea${attrs({ id, name, rows: 3, maxlength: 2000, 'aria-describedby': `${hint ? `${id}-hint ` : ''}${id}-error` })}>${esc(value)}</textarea>
${errorSlot(name)}
</div>`;
};

const itemForm = (item: InventoryItem | undefined, listQuery: Record<string, string>): Html => {
  const editing = item !== undefined;
  return panel(
    'item-editor',
    editing ? `Edit ${item.sku}` : 'Add an item',
    `<form id="item-form" novalidate${attrs({ 'data-endpoint': routes.consoleInventoryUpsert.path, 'data-id': item?.id, 'data-list': adminPath('inventory', listQuery) })}>
<p class="hint">Fields marked <span class="required" aria-hidden="true">*</span><span class="visually-hidden">with a star</span> are required. The service checks every value; a problem is shown next to its field.</p>
<div class="fields fields-2">
${field({ name: 'sku', label: 'SKU', value: item?.sku, required: true, maxlength: 64, hint: 'Your own code for the item, unique in your shop.' })}
${field({ name: 'name', label: 'Name', value: item?.name, required: true, maxlength: 200 })}
${field({ name: 'priceUsd', label: 'Price (USD)', value: item?.priceUsd, required: true, inputmode: 'decimal', hint: 'Before tax, at most 2 decimals.' })}
${field({ name: 'stockQty', label: 'Stock', value: item === undefined || item.stockQty === -1 ? '' : item.stockQty, inputmode: 'numeric', hint: 'How many you have; leave empty (or -1) not to track stock.' })}
${field({ name: 'category', label: 'Category', value: item?.category, maxlength: 100 })}
${field({ name: 'industryPack', label: 'Industry pack', value: item?.industryPack, maxlength: 50, hint: 'Optional: the kind of shop it belongs to (restaurant, retail, …), for filters.' })}
${field({ name: 'tags', label: 'Tags', value: item?.tags.join(', '), hint: 'Separated by commas.' })}
${textarea('description', 'Description', item?.description ?? '')}
${checkbox({ name: 'taxable', label: 'Taxable', checked: item?.taxable ?? true, hint: 'Tax is added to this item’s price on orders.' })}
</div>
<div class="actions">
<button class="button button-primary" type="submit">${editing ? 'Save changes' : 'Add item'}</button>
${editing ? `<a class="button" href="${esc(adminPath('inventory', listQuery))}">Cancel</a>` : ''}
</div>
${formStatus('item-form')}
</form>`,
  );
};

const filterForm = (params: Record<string, string>): Html => {
  // Open when a filter or the order differs from the default, so what narrows the list is in view.
  const defaults: Record<string, string> = { stock: 'any', taxable: 'any', tagsMode: 'any', sort: 'updatedAt', order: 'desc' };
  const open = ['category', 'stock', 'taxable', 'priceMin', 'priceMax', 'tags', 'tagsMode', 'sort', 'order'].some((name) => params[name] !== undefined && params[name] !== defaults[name]);
  return `<form class="search" method="get" action="${adminPath('inventory')}" role="search" aria-label="Search the inventory">
<div class="fields fields-2">
${field({ idPrefix: 'search-', name: 'q', label: 'Search', type: 'search', value: params.q, hint: 'Name, SKU, description, category or tags.' })}
</div>
<details class="filters"${open ? ' open' : ''}>
<summary>Filters and order</summary>
<div class="fields fields-3">
${field({ idPrefix: 'search-', name: 'category', label: 'Category', value: params.category })}
${select({ idPrefix: 'search-', name: 'stock', label: 'Stock', value: params.stock ?? 'any', options: [{ value: 'any', label: 'Any' }, { value: 'in', label: 'In stock' }, { value: 'out', label: 'Out of stock' }] })}
${select({ idPrefix: 'search-', name: 'taxable', label: 'Taxable', value: params.taxable ?? 'any', options: [{ value: 'any', label: 'Any' }, { value: 'true', label: 'Taxable' }, { value: 'false', label: 'Not taxable' }] })}
${field({ idPrefix: 'search-', name: 'priceMin', label: 'Lowest price (USD)', value: params.priceMin, inputmode: 'decimal' })}
${field({ idPrefix: 'search-', name: 'priceMax', label: 'Highest price (USD)', value: params.priceMax, inputmode: 'decimal' })}
${field({ idPrefix: 'search-', name: 'tags', label: 'Tags', value: params.tags, hint: 'Separated by commas.' })}
${select({ idPrefix: 'search-', name: 'tagsMode', label: 'Match tags', value: params.tagsMode ?? 'any', options: [{ value: 'any', label: 'Any of them' }, { value: 'all', label: 'All of them' }] })}
${select({ idPrefix: 'search-', name: 'sort', label: 'Sort by', value: params.sort ?? 'updatedAt', options: inventorySortFields.map((value) => ({ value, label: sortLabels[value] })) })}
${select({ idPrefix: 'search-', name: 'order', label: 'Order', value: params.order ?? 'desc', options: [{ value: 'desc', label: 'Descending' }, { value: 'asc', label: 'Ascending' }] })}
</div>
</details>
<input type="hidden" name="limit" value="${esc(params.limit ?? DEFAULT_LIMIT)}">
<div class="actions">
<button class="button" type="submit">Search</button>
<a class="button" href="${adminPath('inventory')}">Clear</a>
</div>
</form>`;
};

const itemRows = (items: readonly InventoryItem[], params: Record<string, string>): Html =>
  items
    .map(
      (item) => `<tr data-item-id="${esc(item.id)}">
<td data-label="SKU"><span class="mono">${esc(item.sku)}</span></td>
<th scope="row" data-label="Name">${esc(item.name)}</th>
<td class="num" data-label="Price">${esc(usd(item.priceUsd))}</td>
<td class="num" data-label="Stock">${esc(stockText(item.stockQty))}</td>
<td data-label="Category">${esc(item.category) || '<span class="empty">—</span>'}</td>
<td data-label="Tags">${item.tags.length > 0 ? esc(item.tags.join(', ')) : '<span class="empty">—</span>'}</td>
<td data-label="Taxable">${item.taxable ? 'Yes' : 'No'}</td>
<td class="row-actions">
<a class="button button-small" href="${esc(adminPath('inventory', { ...params, edit: item.id }))}" aria-label="Edit ${esc(item.sku)}">Edit</a>
<button class="button button-small button-danger" type="button" data-delete="${esc(item.id)}" data-sku="${esc(item.sku)}" aria-label="Delete ${esc(item.sku)}">Delete</button>
</td>
</tr>`,
    )
    .join('\n');

const pager = (page: number, pages: number, total: number, params: Record<string, string>): Html => {
  if (pages <= 1) return `<p class="pager-info">${total} ${total === 1 ? 'item' : 'items'}</p>`;
  const link = (to: number, label: string, rel: string) => `<a class="button button-small" rel="${rel}" href="${esc(adminPath('inventory', { ...params, page: to }))}">${label}</a>`;
  return `<nav class="pager" aria-label="Pages of items">
${page > 1 ? link(page - 1, 'Previous', 'prev') : '<span></span>'}
<p class="pager-info">Page ${page} of ${pages} · ${total} items</p>
${page < pages ? link(page + 1, 'Next', 'next') : '<span></span>'}
</nav>`;
};

const deleteDialog = (): Html => `<dialog id="delete-dialog" aria-labelledby="delete-title" aria-describedby="delete-text" data-endpoint="${esc(routes.consoleInventoryDelete.path)}">
<h2 id="delete-title">Delete this item?</h2>
<p id="delete-text"></p>
<p class="form-error" id="delete-error" role="alert" hidden></p>
<div class="actions">
<button class="button" type="button" id="delete-cancel">Cancel</button>
<button class="button button-danger button-solid" type="button" id="delete-confirm">Delete</button>
</div>
</dialog>`;

const render = async ({ deps, wallet, query }: PageContext): Promise<Html> => {
  const params = listParams(query);
  const parsed = InventoryListQuery.safeParse({ limit: DEFAULT_LIMIT, ...params });
  const problem = parsed.success ? null : describeZodError(parsed.error).message;
  const listQuery = parsed.success ? parsed.data : InventoryListQuery.parse({ limit: DEFAULT_LIMIT });
  const [list, edited] = await Promise.all([
    listInventory(deps, wallet, listQuery),
    // An id no item can have is no item (the store may refuse it outright).
    query.edit && ID_PATTERN.test(query.edit) ? deps.inventory.get(wallet, query.edit) : Promise.resolve(undefined),
  ]);
  const filtered = Object.keys(params).some((name) => name !== 'page' && name !== 'limit');
  const table =
    list.items.length === 0
      ? `<p class="empty">${filtered ? 'No item matches this search.' : 'No items yet: add your first one above.'}</p>`
      : `<div class="table-wrap"><table class="table-cards">
<caption class="visually-hidden">Your items</caption>
<thead><tr><th scope="col">SKU</th><th scope="col">Name</th><th scope="col" class="num">Price</th><th scope="col" class="num">Stock</th><th scope="col">Category</th><th scope="col">Tags</th><th scope="col">Taxable</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>
${itemRows(list.items, params)}
</tbody>
</table></div>`;
  const items = panel(
    'items',
    'Items',
    [
      edited ? '' : `<p><a href="#item-editor">Add an item</a></p>`,
      problem ? notice('danger', `<p>This search cannot be run: ${esc(problem)}.</p>`, { alert: true }) : '',
      filterForm(params),
      table,
      pager(list.page, list.pages, list.total, params),
    ].join('\n'),
  );
  // Editing: the form first; otherwise the list first (on a phone the form would push it far down).
  const form = itemForm(edited?.value, params);
  return [
    query.edit && !edited ? notice('warning', '<p>That item no longer exists; it may have been deleted.</p>') : '',
    ...(edited ? [form, items] : [items, form]),
    deleteDialog(),
  ].join('\n');
};

export const inventoryPage: AdminPage = {
  slug: 'inventory',
  label: 'Inventory',
  intro: 'The items your orders are priced from: search, add, change and delete them.',
  render,
};
