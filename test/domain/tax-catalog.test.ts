import { describe, expect, it } from 'vitest';
import { JurisdictionCode, findJurisdiction, rateToPpm, taxCatalog } from '../../shared/domain/tax-catalog';

const { jurisdictions } = taxCatalog;
const codes = jurisdictions.map((j) => j.code);

const US_STATES = [
  'AL', 'AK', 'AZ', 'AR', 'CA', 'CO', 'CT', 'DE', 'FL', 'GA', 'HI', 'ID', 'IL', 'IN', 'IA', 'KS', 'KY',
  'LA', 'ME', 'MD', 'MA', 'MI', 'MN', 'MS', 'MO', 'MT', 'NE', 'NV', 'NH', 'NJ', 'NM', 'NY', 'NC', 'ND',
  'OH', 'OK', 'OR', 'PA', 'RI', 'SC', 'SD', 'TN', 'TX', 'UT', 'VT', 'VA', 'WA', 'WV', 'WI', 'WY', 'DC',
];
const CA_REGIONS = ['AB', 'BC', 'MB', 'NB', 'NL', 'NS', 'NT', 'NU', 'ON', 'PE', 'QC', 'SK', 'YT'];
const EU_MEMBERS = [
  'AT', 'BE', 'BG', 'HR', 'CY', 'CZ', 'DK', 'EE', 'FI', 'FR', 'DE', 'GR', 'HU', 'IE', 'IT', 'LV', 'LT',
  'LU', 'MT', 'NL', 'PL', 'PT', 'RO', 'SK', 'SI', 'ES', 'SE',
];

/** At most 6 decimals: the value is exactly an integer number of millionths. */
const hasSixDecimals = (rate: number): boolean => Math.round(rate * 1e6) / 1e6 === rate;

describe('tax catalog', () => {
  it('has unique codes that match JurisdictionCode', () => {
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(JurisdictionCode.safeParse(code).success, code).toBe(true);
  });

  it('is sorted by code', () => {
    expect(codes).toEqual([...codes].sort());
  });

  it('has finite rates in [0, 0.3] with at most 6 decimals and non-empty names', () => {
    for (const { code, name, rate } of jurisdictions) {
      expect(Number.isFinite(rate), code).toBe(true);
      expect(rate, code).toBeGreaterThanOrEqual(0);
      expect(rate, code).toBeLessThanOrEqual(0.3);
      expect(hasSixDecimals(rate), `${code} ${rate}`).toBe(true);
      expect(name.trim().length, code).toBeGreaterThan(0);
    }
  });

  it('covers all 50 US states and DC, 13 Canadian provinces and territories, 27 EU members', () => {
    expect(US_STATES).toHaveLength(51);
    expect(CA_REGIONS).toHaveLength(13);
    expect(EU_MEMBERS).toHaveLength(27);
    const expected = [
      ...US_STATES.map((s) => `US-${s}`),
      ...CA_REGIONS.map((p) => `CA-${p}`),
      ...EU_MEMBERS.map((m) => `EU-${m}`),
    ];
    expect([...codes].sort()).toEqual(expected.sort());
    expect(codes.filter((c) => c.startsWith('US-'))).toHaveLength(51);
    expect(codes.filter((c) => c.startsWith('CA-'))).toHaveLength(13);
    expect(codes.filter((c) => c.startsWith('EU-'))).toHaveLength(27);
  });

  it('has 0 for the states without a statewide sales tax, and only those', () => {
    const zero = jurisdictions.filter((j) => j.rate === 0).map((j) => j.code);
    expect(zero.sort()).toEqual(['US-AK', 'US-DE', 'US-MT', 'US-NH', 'US-OR']);
  });

  it.each([
    ['US-CA', 0.0725],
    ['US-TX', 0.0625],
    ['US-NY', 0.04],
    ['US-OR', 0],
    ['US-MN', 0.06875],
    ['US-MO', 0.04225],
    ['US-UT', 0.061],
    ['US-VA', 0.053],
    ['US-LA', 0.05],
    ['CA-ON', 0.13],
    ['CA-AB', 0.05],
    ['CA-QC', 0.14975],
    ['CA-NS', 0.14],
    ['EU-DE', 0.19],
    ['EU-FR', 0.2],
    ['EU-HU', 0.27],
    ['EU-LU', 0.17],
    ['EU-FI', 0.255],
    ['EU-EE', 0.24],
    ['EU-RO', 0.21],
    ['EU-SK', 0.23],
  ])('%s is %s', (code, rate) => {
    expect(findJurisdiction(code)?.rate).toBe(rate);
  });

  it('names its sources and an ISO asOf date', () => {
    expect(taxCatalog.sources.length).toBeGreaterThan(0);
    for (const source of taxCatalog.sources) expect(source.trim().length).toBeGreaterThan(0);
    expect(taxCatalog.asOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const date = new Date(`${taxCatalog.asOf}T00:00:00Z`);
    expect(Number.isNaN(date.getTime())).toBe(false);
    expect(date.toISOString().slice(0, 10)).toBe(taxCatalog.asOf);
  });
});

describe('findJurisdiction', () => {
  it('returns the jurisdiction for a known code', () => {
    expect(findJurisdiction('CA-ON')).toEqual({ code: 'CA-ON', name: 'Ontario', rate: 0.13 });
    expect(findJurisdiction('EU-DE')?.name).toBe('Germany');
    expect(findJurisdiction('US-CA')?.name).toBe('California');
  });

  it('returns undefined for an unknown code', () => {
    expect(findJurisdiction('US-XX')).toBeUndefined();
    expect(findJurisdiction('')).toBeUndefined();
    expect(findJurisdiction('us-ca')).toBeUndefined();
  });
});

describe('rateToPpm', () => {
  it.each([
    [0.0725, 72500],
    [0.06875, 68750],
    [0.14975, 149750],
    [0.04225, 42250],
    [0, 0],
  ])('%s -> %s', (rate, ppm) => {
    expect(rateToPpm(rate)).toBe(ppm);
  });

  it('is an exact integer for every catalog rate', () => {
    for (const { code, rate } of jurisdictions) {
      const ppm = rateToPpm(rate);
      expect(Number.isInteger(ppm), code).toBe(true);
      expect(ppm / 1e6, code).toBe(rate);
    }
  });

  it('rejects rates it cannot convert exactly', () => {
    expect(() => rateToPpm(0.1234567)).toThrow(RangeError);
    expect(() => rateToPpm(-0.01)).toThrow(RangeError);
    expect(() => rateToPpm(Number.NaN)).toThrow(RangeError);
    expect(() => rateToPpm(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});
