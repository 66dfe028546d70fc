/** The split page's browser part. */
export const enhanceSplit = (): void => {};
