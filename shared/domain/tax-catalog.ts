import { z } from 'zod';

/**
 * Sales-tax / VAT reference table: pure data plus tiny helpers (no I/O).
 *
 * Codes are `<country>-<region>`:
 * - `US-<state>`: United States, statewide base sales-tax rate (50 states + DC).
 * - `CA-<province or territory>`: Canada, combined rate a buyer pays (GST + PST/QST, or HST).
 * - `EU-<ISO 3166-1 alpha-2>`: European Union member state, standard VAT rate.
 *   VAT is levied nationally, so a member state has no region to name. `DE-VAT` would pass the
 *   regex but puts a tax name where a region belongs, and `<alpha-2>-<region>` is best kept for
 *   real subdivisions (ISO 3166-2 style, e.g. `DE-BY`) should they ever be needed. So the EU, the
 *   area whose VAT rules apply, is the first part and the member state its "region".
 *   Greece is `EU-GR` (its ISO code), not `EU-EL` (the prefix the EU uses for VAT numbers).
 *
 * Rule for US states with a mandatory uniform local part: the rate is the one charged
 * everywhere in the state before any locally chosen add-on, i.e. the state's own rate plus any
 * local-level tax the state mandates at one uniform rate in every locality. That includes
 * California's 1.25 % (7.25 % = 6 % state + 1.25 % uniform local), Utah's 1.25 %
 * (6.1 % = 4.85 % + 1.25 %) and Virginia's 1 % (5.3 % = 4.3 % + 1 %), and Nevada's mandatory
 * statewide school-support and city-county relief taxes (6.85 %). This is the convention of the
 * Federation of Tax Administrators and the Tax Foundation tables. Local option, district and
 * regional taxes that differ from place to place (e.g. Virginia's regional 0.7 %/1.7 %, California
 * district taxes) are excluded.
 *
 * Every rate is the one in force on `asOf`. Rates are fractions with at most 6 decimals.
 */

export interface TaxJurisdiction {
  /** `<country>-<region>`, see {@link JurisdictionCode}. */
  code: string;
  /** English name. */
  name: string;
  /** fraction, at most 6 decimals, e.g. 0.0725 */
  rate: number;
}

/** `<country>-<region>`: two capital letters, a dash, 1 to 3 capital letters or digits. */
export const JurisdictionCode = z.string().regex(/^[A-Z]{2}-[A-Z0-9]{1,3}$/);

export const taxCatalog: { asOf: string; sources: string[]; jurisdictions: TaxJurisdiction[] } = {
  asOf: '2025-09-01',
  sources: [
    // United States
    'Federation of Tax Administrators, "State Sales Tax Rates and Food & Drug Exemptions" (as of January 1, 2025): https://taxadmin.org/',
    'Tax Foundation, "State and Local Sales Tax Rates, Midyear 2025" (rates as of July 1, 2025; cross-check): https://taxfoundation.org/data/all/state/sales-tax-rates/',
    'California Department of Tax and Fee Administration, "Detailed Description of the Sales & Use Tax Rate" (7.25 % = 6 % state + 1.25 % local): https://www.cdtfa.ca.gov/taxes-and-fees/sut-rates-description.htm',
    'Louisiana Department of Revenue, "What is the state sales tax rate?" (5 % from January 1, 2025): https://revenue.louisiana.gov/tax-education-and-faqs/faqs/sales-tax-reform/what-is-the-state-sales-tax-rate',
    'Virginia Department of Taxation, "Retail Sales and Use Tax" (5.3 % = 4.3 % state + 1 % local): https://www.tax.virginia.gov/retail-sales-and-use-tax',
    'Utah State Tax Commission, "Sales and Use Tax Rates" (4.85 % state + 1.25 % statewide local): https://tax.utah.gov/sales/rates',
    'District of Columbia Office of Tax and Revenue (6 % until September 30, 2025; 6.5 % from October 1, 2025): https://otr.cfo.dc.gov/',
    // Canada
    'Canada Revenue Agency, "Charge and collect the tax – Which rate to charge" (GST/HST rates): https://www.canada.ca/en/revenue-agency/services/tax/businesses/topics/gst-hst-businesses/charge-collect-which-rate.html',
    'Province of Nova Scotia, HST reduction from 15 % to 14 % effective April 1, 2025: https://novascotia.ca/',
    'Revenu Québec, "GST/HST and QST" (QST 9.975 %): https://www.revenuquebec.ca/en/businesses/consumption-taxes/gsthst-and-qst/',
    'Government of British Columbia, "Provincial sales tax (PST)" (7 %): https://www2.gov.bc.ca/gov/content/taxes/sales-taxes/pst',
    'Manitoba Finance, "Retail Sales Tax" (7 %): https://www.gov.mb.ca/finance/taxation/taxes/retail.html',
    'Government of Saskatchewan, "Provincial Sales Tax" (6 %): https://www.saskatchewan.ca/business/taxes-licensing-and-reporting/provincial-taxes-policies-and-bulletins/provincial-sales-tax',
    // European Union
    'European Commission, DG TAXUD, "VAT rates": https://taxation-customs.ec.europa.eu/taxation/vat/vat-directive/vat-rates_en',
    'European Commission, "Taxes in Europe Database (TEDB)": https://ec.europa.eu/taxation_customs/tedb/',
    'Romania, Law no. 141/2025 (Monitorul Oficial no. 699 of July 25, 2025): standard VAT 19 % -> 21 % from August 1, 2025',
    'Estonian Tax and Customs Board (EMTA): standard VAT 22 % -> 24 % from July 1, 2025: https://www.emta.ee/en',
    'Finnish Tax Administration (Vero): standard VAT 24 % -> 25.5 % from September 1, 2024: https://www.vero.fi/en/',
    'Financial Administration of the Slovak Republic: standard VAT 20 % -> 23 % from January 1, 2025: https://www.financnasprava.sk/en/',
  ],
  jurisdictions: [
    // Canada: GST 5 % + PST/RST/QST, or the HST rate (which includes the 5 % federal part).
    { code: 'CA-AB', name: 'Alberta', rate: 0.05 }, // GST only
    { code: 'CA-BC', name: 'British Columbia', rate: 0.12 }, // GST 5 % + PST 7 %
    { code: 'CA-MB', name: 'Manitoba', rate: 0.12 }, // GST 5 % + RST 7 %
    { code: 'CA-NB', name: 'New Brunswick', rate: 0.15 }, // HST
    { code: 'CA-NL', name: 'Newfoundland and Labrador', rate: 0.15 }, // HST
    { code: 'CA-NS', name: 'Nova Scotia', rate: 0.14 }, // HST: 15 % until 2025-03-31, 14 % from 2025-04-01 (in force on asOf)
    { code: 'CA-NT', name: 'Northwest Territories', rate: 0.05 }, // GST only
    { code: 'CA-NU', name: 'Nunavut', rate: 0.05 }, // GST only
    { code: 'CA-ON', name: 'Ontario', rate: 0.13 }, // HST
    { code: 'CA-PE', name: 'Prince Edward Island', rate: 0.15 }, // HST
    { code: 'CA-QC', name: 'Quebec', rate: 0.14975 }, // GST 5 % + QST 9.975 %
    { code: 'CA-SK', name: 'Saskatchewan', rate: 0.11 }, // GST 5 % + PST 6 %
    { code: 'CA-YT', name: 'Yukon', rate: 0.05 }, // GST only

    // European Union: standard VAT rate.
    { code: 'EU-AT', name: 'Austria', rate: 0.2 },
    { code: 'EU-BE', name: 'Belgium', rate: 0.21 },
    { code: 'EU-BG', name: 'Bulgaria', rate: 0.2 },
    { code: 'EU-CY', name: 'Cyprus', rate: 0.19 },
    { code: 'EU-CZ', name: 'Czechia', rate: 0.21 },
    { code: 'EU-DE', name: 'Germany', rate: 0.19 },
    { code: 'EU-DK', name: 'Denmark', rate: 0.25 },
    { code: 'EU-EE', name: 'Estonia', rate: 0.24 }, // 22 % -> 24 % on 2025-07-01
    { code: 'EU-ES', name: 'Spain', rate: 0.21 },
    { code: 'EU-FI', name: 'Finland', rate: 0.255 }, // 24 % -> 25.5 % on 2024-09-01
    { code: 'EU-FR', name: 'France', rate: 0.2 },
    { code: 'EU-GR', name: 'Greece', rate: 0.24 },
    { code: 'EU-HR', name: 'Croatia', rate: 0.25 },
    { code: 'EU-HU', name: 'Hungary', rate: 0.27 },
    { code: 'EU-IE', name: 'Ireland', rate: 0.23 },
    { code: 'EU-IT', name: 'Italy', rate: 0.22 },
    { code: 'EU-LT', name: 'Lithuania', rate: 0.21 },
    { code: 'EU-LU', name: 'Luxembourg', rate: 0.17 },
    { code: 'EU-LV', name: 'Latvia', rate: 0.21 },
    { code: 'EU-MT', name: 'Malta', rate: 0.18 },
    { code: 'EU-NL', name: 'Netherlands', rate: 0.21 },
    { code: 'EU-PL', name: 'Poland', rate: 0.23 },
    { code: 'EU-PT', name: 'Portugal', rate: 0.23 }, // mainland rate
    { code: 'EU-RO', name: 'Romania', rate: 0.21 }, // 19 % -> 21 % on 2025-08-01
    { code: 'EU-SE', name: 'Sweden', rate: 0.25 },
    { code: 'EU-SI', name: 'Slovenia', rate: 0.22 },
    { code: 'EU-SK', name: 'Slovakia', rate: 0.23 }, // 20 % -> 23 % on 2025-01-01

    // United States: statewide base rate (see the rule at the top of this file).
    { code: 'US-AK', name: 'Alaska', rate: 0 }, // no statewide sales tax
    { code: 'US-AL', name: 'Alabama', rate: 0.04 },
    { code: 'US-AR', name: 'Arkansas', rate: 0.065 },
    { code: 'US-AZ', name: 'Arizona', rate: 0.056 }, // transaction privilege tax
    { code: 'US-CA', name: 'California', rate: 0.0725 }, // 6 % state + 1.25 % uniform local
    { code: 'US-CO', name: 'Colorado', rate: 0.029 },
    { code: 'US-CT', name: 'Connecticut', rate: 0.0635 },
    { code: 'US-DC', name: 'District of Columbia', rate: 0.06 }, // 6.5 % only from 2025-10-01
    { code: 'US-DE', name: 'Delaware', rate: 0 }, // no sales tax
    { code: 'US-FL', name: 'Florida', rate: 0.06 },
    { code: 'US-GA', name: 'Georgia', rate: 0.04 },
    { code: 'US-HI', name: 'Hawaii', rate: 0.04 }, // general excise tax
    { code: 'US-IA', name: 'Iowa', rate: 0.06 },
    { code: 'US-ID', name: 'Idaho', rate: 0.06 },
    { code: 'US-IL', name: 'Illinois', rate: 0.0625 },
    { code: 'US-IN', name: 'Indiana', rate: 0.07 },
    { code: 'US-KS', name: 'Kansas', rate: 0.065 },
    { code: 'US-KY', name: 'Kentucky', rate: 0.06 },
    { code: 'US-LA', name: 'Louisiana', rate: 0.05 }, // 4.45 % -> 5 % on 2025-01-01
    { code: 'US-MA', name: 'Massachusetts', rate: 0.0625 },
    { code: 'US-MD', name: 'Maryland', rate: 0.06 },
    { code: 'US-ME', name: 'Maine', rate: 0.055 },
    { code: 'US-MI', name: 'Michigan', rate: 0.06 },
    { code: 'US-MN', name: 'Minnesota', rate: 0.06875 },
    { code: 'US-MO', name: 'Missouri', rate: 0.04225 },
    { code: 'US-MS', name: 'Mississippi', rate: 0.07 },
    { code: 'US-MT', name: 'Montana', rate: 0 }, // no statewide sales tax
    { code: 'US-NC', name: 'North Carolina', rate: 0.0475 },
    { code: 'US-ND', name: 'North Dakota', rate: 0.05 },
    { code: 'US-NE', name: 'Nebraska', rate: 0.055 },
    { code: 'US-NH', name: 'New Hampshire', rate: 0 }, // no general sales tax
    { code: 'US-NJ', name: 'New Jersey', rate: 0.06625 },
    { code: 'US-NM', name: 'New Mexico', rate: 0.04875 }, // gross receipts tax, state part
    { code: 'US-NV', name: 'Nevada', rate: 0.0685 }, // mandatory statewide minimum
    { code: 'US-NY', name: 'New York', rate: 0.04 },
    { code: 'US-OH', name: 'Ohio', rate: 0.0575 },
    { code: 'US-OK', name: 'Oklahoma', rate: 0.045 },
    { code: 'US-OR', name: 'Oregon', rate: 0 }, // no sales tax
    { code: 'US-PA', name: 'Pennsylvania', rate: 0.06 },
    { code: 'US-RI', name: 'Rhode Island', rate: 0.07 },
    { code: 'US-SC', name: 'South Carolina', rate: 0.06 },
    { code: 'US-SD', name: 'South Dakota', rate: 0.042 }, // reduced from 4.5 % on 2023-07-01, until 2027-06-30
    { code: 'US-TN', name: 'Tennessee', rate: 0.07 },
    { code: 'US-TX', name: 'Texas', rate: 0.0625 },
    { code: 'US-UT', name: 'Utah', rate: 0.061 }, // 4.85 % state + 1.25 % uniform local
    { code: 'US-VA', name: 'Virginia', rate: 0.053 }, // 4.3 % state + 1 % uniform local
    { code: 'US-VT', name: 'Vermont', rate: 0.06 },
    { code: 'US-WA', name: 'Washington', rate: 0.065 },
    { code: 'US-WI', name: 'Wisconsin', rate: 0.05 },
    { code: 'US-WV', name: 'West Virginia', rate: 0.06 },
    { code: 'US-WY', name: 'Wyoming', rate: 0.04 },
  ],
};

const byCode = new Map(taxCatalog.jurisdictions.map((j) => [j.code, j]));

/** The jurisdiction with exactly this code (e.g. `US-CA`), or undefined. */
export const findJurisdiction = (code: string): TaxJurisdiction | undefined => byCode.get(code);

/**
 * Integer parts per million of a fraction rate, e.g. 0.0725 -> 72500 (exact, no float drift).
 * Throws a RangeError for a rate that is negative, not finite, or has more than 6 decimals,
 * rather than rounding it silently.
 */
export const rateToPpm = (rate: number): number => {
  if (!Number.isFinite(rate) || rate < 0) throw new RangeError(`not a rate: ${rate}`);
  const ppm = Math.round(rate * 1_000_000);
  // Integer division is correctly rounded, so this is exact for any rate with at most 6 decimals.
  if (ppm / 1_000_000 !== rate) throw new RangeError(`rate has more than 6 decimals: ${rate}`);
  return ppm;
};
