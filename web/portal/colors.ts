/**
 * The shop's colours on the page. The Content Security Policy allows no inline style, so the server
 * cannot write them into the markup: it puts them in `data-` attributes and the page's script sets
 * them as CSS custom properties through the CSSOM (which the policy permits). Without the script the
 * page keeps the stylesheet's neutral colours, which are readable on their own.
 */

export interface BrandColors {
  primary: string;
  accent: string;
  background: string;
}

const HEX = /^#[0-9a-fA-F]{6}$/;

/** Only `#rrggbb`: anything else (a `url(…)`, an expression) never reaches a style property. */
export const isHexColor = (value: unknown): value is string => typeof value === 'string' && HEX.test(value);

/** WCAG relative luminance of a `#rrggbb` colour (0 black … 1 white). */
export const luminance = (hex: string): number => {
  const channel = (offset: number) => {
    const value = parseInt(hex.slice(offset, offset + 2), 16) / 255;
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
};

export const contrastRatio = (a: string, b: string): number => {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
};

const INK = '#111827';
const PAPER = '#ffffff';

/** The text colour that reads best on a background: near-black or white, whichever contrasts more. */
export const readableOn = (background: string): string => (contrastRatio(INK, background) >= contrastRatio(PAPER, background) ? INK : PAPER);

/**
 * The custom properties the stylesheet reads (`--brand`, `--on-brand`, …), from the shop's colours;
 * a colour that is not `#rrggbb` is left out, so the stylesheet's default stands.
 */
export const brandProperties = (colors: Partial<BrandColors>): Record<string, string> => {
  const properties: Record<string, string> = {};
  if (isHexColor(colors.primary)) Object.assign(properties, { '--brand': colors.primary, '--on-brand': readableOn(colors.primary) });
  if (isHexColor(colors.accent)) Object.assign(properties, { '--accent': colors.accent, '--on-accent': readableOn(colors.accent) });
  if (isHexColor(colors.background)) Object.assign(properties, { '--page': colors.background, '--on-page': readableOn(colors.background) });
  return properties;
};
