/** API keys: the page's browser part; nothing yet (the page is a placeholder). */
export const enhanceApiKeys = (): void => {};
