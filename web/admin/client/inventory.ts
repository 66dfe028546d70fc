/** The inventory page's browser part. */
export const enhanceInventory = (): void => {};
