/** The overview page's browser part: nothing beyond the frame (the page is complete as rendered). */
export const enhanceOverview = (): void => {};
