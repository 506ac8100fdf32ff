// Poll until a condition holds (WebCrypto and storage promises settle on their own schedule).
export async function waitFor(predicate, what = "condition", timeoutMs = 2000) {
  const started = Date.now();
  while (!predicate()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** Let pending promise chains run for a few milliseconds. */
export const settle = (ms = 15) => new Promise((r) => setTimeout(r, ms));
