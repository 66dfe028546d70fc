/** The settings page's browser part. */
export const enhanceSettings = (): void => {};
