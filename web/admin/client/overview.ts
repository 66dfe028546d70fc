/** The overview page's browser part. */
export const enhanceOverview = (): void => {};
