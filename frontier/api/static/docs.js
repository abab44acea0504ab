// Swagger UI for /docs, from files this server serves itself (no CDN), started here
// rather than in an inline script so that the page's Content-Security-Policy needs no
// 'unsafe-inline' for scripts.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
    layout: "BaseLayout",
    deepLinking: true,
    validatorUrl: null,
  });
});
