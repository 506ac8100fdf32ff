// @ts-check
// Which browser we run in, for the handshake's `browser` field.

const BRANDS = [
  ["Microsoft Edge", "edge"],
  ["Opera", "opera"],
  ["Brave", "brave"],
  ["Google Chrome", "chrome"],
  ["Chromium", "chromium"],
];

/**
 * @param {{userAgent: string, userAgentData?: {brands?: {brand: string, version: string}[]}}} nav
 * @returns {{name: string, version: string}}
 */
export function browserInfo(nav) {
  const version = /(?:Chrome|Chromium)\/([\d.]+)/.exec(nav.userAgent)?.[1] ?? "unknown";
  const brands = nav.userAgentData?.brands?.map((b) => b.brand) ?? [];
  // The first recognised brand wins: Edge, Opera and Brave also list "Chromium".
  for (const [brand, name] of BRANDS) if (brands.includes(brand)) return { name, version };
  return { name: /Edg\//.test(nav.userAgent) ? "edge" : "chromium", version };
}
