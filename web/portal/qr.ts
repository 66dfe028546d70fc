/**
 * QR codes as SVG: what a phone scans to pay (an EIP-681 request) or to open the payment page.
 * The encoder is loaded on first use (in the built app it is a file of its own in dist/vendor/), so
 * loading the app parses none of it.
 */

/** Medium error correction survives a smudged screen; a two-module margin is the quiet zone scanners need. */
export const QR_OPTIONS = { type: 'svg', errorCorrectionLevel: 'M', margin: 2 } as const;

export const qrSvg = async (text: string): Promise<string> => {
  const qrcode = await import('qrcode');
  return qrcode.toString(text, QR_OPTIONS);
};
