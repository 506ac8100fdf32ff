// A service worker that reads a page of its own site for the page that asks (its fetch belongs to no tab).
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (e) => e.waitUntil(self.clients.claim()));
self.addEventListener("message", (e) => {
  e.waitUntil(
    fetch(e.data)
      .then((r) => r.text())
      .catch((err) => `failed: ${err}`)
      .then((text) => e.source.postMessage(text)),
  );
});
