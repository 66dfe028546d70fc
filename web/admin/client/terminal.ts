/** Terminal: the page's browser part; nothing yet (the page is a placeholder). */
export const enhanceTerminal = (): void => {};
